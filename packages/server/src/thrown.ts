// Fields of a thrown value, read without assuming it is an Error: JavaScript may throw anything,
// and node, pg and mqtt add a `code` to the errors they throw.

/** The thrown value's `message` when it has a string one, else the value in words. */
export function thrownMessage(e: unknown): string {
  return typeof e === 'object' && e !== null && 'message' in e && typeof e.message === 'string' ? e.message : String(e);
}

/** The thrown value's `code` when it is a string (a node errno name, a SQLSTATE), else undefined. */
export function thrownCode(e: unknown): string | undefined {
  const c = typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
  return typeof c === 'string' ? c : undefined;
}

/** The thrown value's HTTP `statusCode` (Fastify's and its plugins' errors carry one), else undefined. */
export function thrownStatus(e: unknown): number | undefined {
  const s = typeof e === 'object' && e !== null && 'statusCode' in e ? e.statusCode : undefined;
  return typeof s === 'number' ? s : undefined;
}

/** The thrown value's `cause` (an Error's `{ cause }` option), else undefined. */
export function thrownCause(e: unknown): unknown {
  return typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
}
