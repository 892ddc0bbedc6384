// The exit codes of every `boxhub` command (docs/cli.md, "Exit codes"), and the one place that
// turns a failure into its code and one line for a person (and a JSON document with --json).
// Commands throw; they do not pick codes or print errors themselves.
//
// Errors of the SDK and of the service's own layer are recognised by name, not instanceof, so
// that this file loads neither (`boxhub --help` and `boxhub agent` stay quick and small).
import type { ApiError } from '@boxhub/protocol';
import type { BoxhubError } from '@boxhub/sdk';
import { errnoCode, messageOf } from '@boxhub/protocol/caught.ts';

export { errnoCode, messageOf };

export const EXIT = {
  /** Done. */
  ok: 0,
  /** The operation failed: the service answered an error code, or the task ended with one. */
  failed: 1,
  /** The command line is wrong: unknown option, missing or bad value, no such file. */
  usage: 2,
  /** The service (or its database) cannot be reached, or it refused the credentials. */
  unreachable: 3,
  /** Interrupted with Ctrl-C (SIGINT), 128 + 2 as shells report it. */
  interrupted: 130,
} as const;

/** The command line is wrong. */
export class UsageError extends Error {}

/** The operation failed; `code` is the service's envelope code when it gave one. */
export class Failed extends Error {
  readonly code: number | null;
  constructor(message: string, code: number | null = null) {
    super(message);
    this.code = code;
  }
}

/** The service or database cannot be reached, or refused who we are. */
export class Unreachable extends Error {
  readonly code: number | null;
  constructor(message: string, code: number | null = null) {
    super(message);
    this.code = code;
  }
}

/** Envelope codes that mean "who you are was refused" rather than "what you asked failed". */
const CREDENTIALS_REFUSED = new Set([20001, 20003]);

/** Socket errors: nothing could be reached (a database, a listener). */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
]);

export interface Outcome {
  exit: number;
  code: number | null;
  message: string;
}

/** Recognises an error by its class's name (see above: without loading the module that defines it). */
function isNamed<T extends Error = Error>(e: unknown, name: T['name']): e is T {
  return e instanceof Error && e.name === name;
}

/** What a failure means for the caller. */
export function outcome(e: unknown, server?: string, found?: { server: string; key: string }): Outcome {
  if (e instanceof UsageError) return { exit: EXIT.usage, code: null, message: e.message };
  if (e instanceof Failed) return { exit: EXIT.failed, code: e.code, message: e.message };
  if (e instanceof Unreachable) return { exit: EXIT.unreachable, code: e.code, message: e.message };
  if (isNamed<BoxhubError>(e, 'BoxhubError')) {
    const b = e;
    if (b.kind === 'api' && b.code !== null && CREDENTIALS_REFUSED.has(b.code)) {
      return {
        exit: EXIT.unreachable,
        code: b.code,
        message: `the service refused the credentials: error ${b.code}: ${b.msg}${found ? ` (the API key from ${found.key}; the service ${server} from ${found.server})` : ''}`,
      };
    }
    if (b.kind === 'api') return { exit: EXIT.failed, code: b.code, message: `error ${b.code}: ${b.msg}` };
    return {
      exit: EXIT.unreachable,
      code: null,
      message: `cannot reach the service${server ? ` at ${server}` : ''}${found ? ` (from ${found.server})` : ''}: ${b.msg}`,
    };
  }
  // The administration commands work on the service's own layer, which throws the catalog's errors.
  if (isNamed<ApiError>(e, 'ApiError'))
    return { exit: EXIT.failed, code: e.code, message: `error ${e.code}: ${e.message}` };
  if (isNamed(e, 'WaitTimeoutError') || isNamed(e, 'DownloadError'))
    return { exit: EXIT.failed, code: null, message: e.message };
  // fetch (a download) that got no answer: its cause has the socket error.
  if (isNamed<TypeError>(e, 'TypeError') && e.message === 'fetch failed') {
    const cause = e.cause;
    const detail =
      typeof cause === 'object' && cause !== null
        ? 'code' in cause && cause.code != null
          ? cause.code
          : 'message' in cause
            ? cause.message
            : undefined
        : undefined;
    return {
      exit: EXIT.unreachable,
      code: null,
      message: `cannot reach the service${server ? ` at ${server}` : ''}${found ? ` (from ${found.server})` : ''}: ${detail ?? 'fetch failed'}`,
    };
  }
  const sysCode = errnoCode(e);
  if (sysCode !== undefined && NETWORK.has(sysCode))
    return { exit: EXIT.unreachable, code: null, message: `cannot reach ${messageOf(e)}` };
  if (sysCode?.startsWith('ERR_PARSE_ARGS')) return { exit: EXIT.usage, code: null, message: messageOf(e) };
  // Anything else is a bug: the stack helps whoever reports it.
  const err = e instanceof Error ? e : new Error(String(e));
  return { exit: EXIT.failed, code: null, message: `unexpected error: ${err.stack ?? err.message}` };
}

/** Prints a failure (one line on stderr; with --json also {"error"} on stdout) and gives its exit code. */
export function report(
  e: unknown,
  o: { path: string; json: boolean; server?: string | undefined; found?: { server: string; key: string } | undefined },
): number {
  const r = outcome(e, o.server, o.found);
  const hint = r.exit === EXIT.usage ? `; see 'boxhub ${o.path} --help'` : '';
  process.stderr.write(`boxhub ${o.path}: ${r.message}${hint}\n`);
  if (o.json && r.exit !== EXIT.usage)
    process.stdout.write(`${JSON.stringify({ error: { exit_code: r.exit, code: r.code, msg: r.message } })}\n`);
  return r.exit;
}
