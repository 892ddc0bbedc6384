// Reading what a `catch` caught, which TypeScript types `unknown`: its fields narrowed rather than
// asserted, so that a thrown non-Error still reads as text. Node, pg and mqtt add a `code` to the
// errors they throw; Fastify and its plugins a `statusCode`.

/** What a caught value says: its `message` when it has a string one (an Error, in practice), else the value. */
export function messageOf(e: unknown): string {
  return typeof e === 'object' && e !== null && 'message' in e && typeof e.message === 'string' ? e.message : String(e);
}

/** The system error code of a caught value (ENOENT, ECONNREFUSED, a SQLSTATE, ERR_PARSE_ARGS_...), if it has one. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/** A caught value's HTTP `statusCode`, if it has one. */
export function statusOf(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && 'statusCode' in e && typeof e.statusCode === 'number'
    ? e.statusCode
    : undefined;
}

/** A caught value's `cause` (an Error's `{ cause }` option), if it has one. */
export function causeOf(e: unknown): unknown {
  return typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
}
