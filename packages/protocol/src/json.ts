import { Compile } from 'typebox/compile';
import type { TSchema, Static } from 'typebox';

/**
 * Parses untrusted JSON (an MQTT payload, a file) against a schema. Returns the value or an
 * error string; never throws. Compiled validators are cached per schema object.
 */
const cache = new WeakMap<object, ReturnType<typeof Compile>>();
export function parseJson<T extends TSchema>(
  schema: T,
  raw: string | Uint8Array,
): { ok: true; value: Static<T> } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8'));
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  let check = cache.get(schema);
  if (!check) {
    check = Compile(schema);
    cache.set(schema, check);
  }
  if (check.Check(value)) return { ok: true, value: value as Static<T> };
  const first = [...check.Errors(value)][0];
  return { ok: false, error: first ? `${first.instancePath || '/'} ${first.message}` : 'invalid' };
}
