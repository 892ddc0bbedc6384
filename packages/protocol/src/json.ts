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
    value = JSON.parse(typeof raw === 'string' ? raw : utf8(raw));
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  const check = compiled(schema);
  if (check.Check(value)) return { ok: true, value: value as Static<T> };
  const first = [...check.Errors(value)][0];
  return { ok: false, error: first ? `${first.instancePath || '/'} ${first.message}` : 'invalid' };
}

function compiled(schema: TSchema): ReturnType<typeof Compile> {
  let check = cache.get(schema);
  if (!check) {
    check = Compile(schema);
    cache.set(schema, check);
  }
  return check;
}

/**
 * Compiles the validators of `schemas` now rather than on their first message: a node that has
 * just started met the first wave of a reconnecting fleet with each kind of box message's
 * validator still to compile (bench/README.md, "reconnect-storm").
 */
export function compileAhead(...schemas: TSchema[]): void {
  for (const s of schemas) compiled(s);
}

/** Whether `schema`'s validator is compiled (by compileAhead() or a parse). */
export function isCompiled(schema: TSchema): boolean {
  return cache.has(schema);
}

/** The text of `raw` without copying it first (`Buffer.from` of a Buffer copies its bytes). */
function utf8(raw: Uint8Array): string {
  return (Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)).toString('utf8');
}
