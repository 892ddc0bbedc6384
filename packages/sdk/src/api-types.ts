// Types of the API's operations, derived from the generated `paths` (src/generated/openapi.ts,
// from the server's /openapi.json): a changed schema changes these, and the resources that use
// them stop compiling where they no longer fit.
import type { paths } from './generated/openapi.ts';

type Operation<P extends keyof paths, M extends 'get' | 'post'> = NonNullable<paths[P][M]>;

/** Paths with a GET operation, and with a POST operation. */
export type GetPath = { [P in keyof paths]: [NonNullable<paths[P]['get']>] extends [never] ? never : P }[keyof paths];
export type PostPath = { [P in keyof paths]: [NonNullable<paths[P]['post']>] extends [never] ? never : P }[keyof paths];

/** Every operation as 'METHOD /path'. */
export type OperationKey = `GET ${GetPath}` | `POST ${PostPath}`;

/** Query parameters of a GET operation. */
export type Query<P extends GetPath> =
  Operation<P, 'get'> extends { parameters: { query: infer Q } } ? Q : Record<string, never>;

/** JSON body of a POST operation. */
export type Body<P extends PostPath> =
  Operation<P, 'post'> extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

type Envelope<O> = O extends { responses: { 200: { content: { 'application/json': infer E } } } } ? E : never;
/** The envelope's `data` on success: never null except where the API says it is always null (void). */
type SuccessData<O> =
  Envelope<O> extends { data: infer D } ? ([NonNullable<D>] extends [never] ? NoData : NonNullable<D>) : never;
// biome-ignore lint/suspicious/noConfusingVoidType: an operation without data resolves to void, as its callers await it
type NoData = void;

export type GetResult<P extends GetPath> = SuccessData<Operation<P, 'get'>>;
export type PostResult<P extends PostPath> = SuccessData<Operation<P, 'post'>>;
