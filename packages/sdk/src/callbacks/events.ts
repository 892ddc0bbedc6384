// Typed callback events. Their types and body schemas are generated from the `webhooks` of
// /openapi.json (src/generated/), so an event the server documents is an event the SDK knows
// once regenerated. Each body is checked against its schema (TypeBox's JSON Schema validator)
// before it is handed out as typed: a field the type promises is there.
import { Compile } from 'typebox/schema';
import { callbackSchemas } from '../generated/callback-schemas.ts';
import type { webhooks } from '../generated/openapi.ts';
import { InvalidCallbackError } from './errors.ts';

export type CallbackEventName = keyof webhooks;

/** The JSON body of the callback event `N`, e.g. CallbackBody<'recognition.result'>. */
export type CallbackBody<N extends CallbackEventName> = {
  [M in keyof webhooks[N]]-?: [NonNullable<webhooks[N][M]>] extends [never]
    ? never
    : NonNullable<webhooks[N][M]> extends { requestBody: { content: { 'application/json': infer B } } }
      ? B
      : never;
}[keyof webhooks[N]];

export type KnownCallbackEvent = {
  [N in CallbackEventName]: {
    type: N;
    /** The callback id (X-SVC-Callback-ID, webhook-id): the same on every retry and replay, so de-duplicate on it. */
    id: string;
    method: string;
    body: CallbackBody<N>;
  };
}[CallbackEventName];

/** An event this SDK does not know (a newer server): answer 200 and update the SDK. */
export interface UnknownCallbackEvent {
  type: 'unknown';
  /** The body's `event`, if it names one. */
  event: string | undefined;
  id: string;
  method: string;
  body: unknown;
}

export type CallbackEvent = KnownCallbackEvent | UnknownCallbackEvent;

type SchemaEntry = { method: string; schema: object };
const entries = Object.entries(callbackSchemas as Record<string, SchemaEntry>);
/** The event a body names in its `event` field (boxhub's own events). */
const byEventField = new Map<string, string>();
/** The recognition bodies (docs/api.md, "Events") carry no name: they are told apart by method
 *  (POST result, PUT end). */
const byMethod = new Map<string, string>();
for (const [name, e] of entries) {
  const named = (e.schema as { properties?: { event?: { const?: string } } }).properties?.event?.const;
  if (named) byEventField.set(named, name);
  else byMethod.set(e.method, name);
}
const schemaByName = new Map(entries);
const validators = new Map<string, ReturnType<typeof Compile>>();
function validator(name: string) {
  let v = validators.get(name);
  if (!v) {
    const entry = schemaByName.get(name);
    if (!entry) throw new Error(`no callback schema named ${name}`);
    v = Compile(entry.schema as Parameters<typeof Compile>[0]);
    validators.set(name, v);
  }
  return v;
}

/**
 * Names and checks a callback whose signature was verified (CallbackReceiver does both).
 * `body` is the parsed JSON. Throws InvalidCallbackError ('body') when the body does not have
 * the shape of its event.
 */
export function parseCallback(input: { method: string; id: string; body: unknown }): CallbackEvent {
  const method = input.method.toUpperCase();
  const { id, body } = input;
  const field = body && typeof body === 'object' && !Array.isArray(body) && 'event' in body ? body.event : undefined;
  const name = typeof field === 'string' ? byEventField.get(field) : byMethod.get(method);
  if (!name) return { type: 'unknown', event: typeof field === 'string' ? field : undefined, id, method, body };
  const [ok, errors] = validator(name).Errors(body);
  if (!ok) {
    const detail = errors
      .filter((e) => e.keyword !== 'anyOf')
      .slice(0, 3)
      .map((e) => `${e.instancePath || '(body)'} ${e.message}`)
      .join('; ');
    throw new InvalidCallbackError('body', `${name} callback ${id}: ${detail}`);
  }
  return { type: name, id, method, body } as KnownCallbackEvent;
}
