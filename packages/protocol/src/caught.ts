// Reading what a `catch` caught, which TypeScript types `unknown`: the message and the system
// error code, narrowed rather than asserted, so that a thrown non-Error still reads as text.

/** What a caught value says: an Error's message (what is thrown is one, in practice), else the value. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The system error code of a caught value (ENOENT, ECONNREFUSED, ERR_PARSE_ARGS_...), if it has one. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}
