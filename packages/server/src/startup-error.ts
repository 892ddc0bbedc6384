// Why the service could not start, in words for whoever started it, with the setting that fixes
// it (docs/configuration.md, "When the service cannot start"). startServer() turns the failures
// of its first steps (the data directory, the database, the broker's and the HTTP listeners)
// into a StartupError; `boxhub serve` prints its message and exits 1, without a stack trace.

/** A failure before the service could serve, naming the setting that fixes it. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
  /** The environment variable (or option) to change. */
  readonly setting: string;
  constructor(message: string, setting: string, options?: { cause?: unknown }) {
    super(message, options);
    this.setting = setting;
  }
}

import { BrokerUnfit, BrokerUnreachable } from './broker/capabilities.ts';
import { causeOf, errnoCode } from '@boxhub/protocol';

/** Errors of a file system that cannot hold the data directory (for this user or at all). */
const NOT_WRITABLE = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'EEXIST',
  'ENOSPC',
  'EDQUOT',
  'ELOOP',
  'ENAMETOOLONG',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_IOERR',
  'SQLITE_FULL',
]);

/** The data directory (SQLite database, key file, blobs) could not be made or written. */
export function dataDirError(e: unknown, dir: string): unknown {
  const c = errnoCode(e);
  if (!c || !NOT_WRITABLE.has(c)) return e;
  return new StartupError(
    `the data directory ${dir} cannot be created or written (${c}): set BOXHUB_DATA_DIR to a directory this user can write`,
    'BOXHUB_DATA_DIR',
    { cause: e },
  );
}

/** Errors of a database server that cannot be reached or refuses us (node-postgres passes the
 *  socket's code, or PostgreSQL's SQLSTATE: 28xxx authentication, 3D000 no such database). */
const DB_UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
  '28000',
  '28P01',
  '3D000',
]);

/** The database of DATABASE_URL could not be reached; the message names its host, never its password. */
export function databaseError(e: unknown, url: string | undefined): unknown {
  if (!url) return e;
  const inner = causeOf(e) ?? e;
  const c = errnoCode(inner) ?? errnoCode(e);
  const timedOut = /timeout/i.test(inner instanceof Error ? inner.message : '');
  if (!(c && DB_UNREACHABLE.has(c)) && !timedOut) return e;
  let where = 'the database';
  try {
    const u = new URL(url);
    where = `the database at ${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    /* an unparseable URL fails in loadConfig first */
  }
  const why =
    c === '28000' || c === '28P01'
      ? 'it refused the user or password'
      : c === '3D000'
        ? 'the database does not exist'
        : `${c ?? 'timed out'}: is PostgreSQL running there?`;
  return new StartupError(
    `cannot reach ${where} (${why}): check DATABASE_URL, or unset it to use SQLite in BOXHUB_DATA_DIR`,
    'DATABASE_URL',
    { cause: e },
  );
}

/** A listener (HTTP, the embedded broker, metrics) could not take its address. */
export function listenError(
  e: unknown,
  what: string,
  host: string,
  port: number,
  setting: string,
  hostSetting: string,
): unknown {
  const c = errnoCode(e);
  if (c === 'EADDRINUSE') {
    return new StartupError(
      `${what} cannot listen on ${host}:${port}: the port is in use (another boxhub serve or npm start?); stop that process or set ${setting} to a free port`,
      setting,
      { cause: e },
    );
  }
  if (c === 'EACCES' || c === 'EADDRNOTAVAIL' || c === 'ENOTFOUND' || c === 'EAI_AGAIN') {
    return new StartupError(
      `${what} cannot listen on ${host}:${port} (${c}): set ${c === 'EACCES' ? `${setting} to a port above 1023` : `${hostSetting} to an address of this machine`}`,
      c === 'EACCES' ? setting : hostSetting,
      { cause: e },
    );
  }
  return e;
}

/** The external broker cannot be reached, refuses the server's login, or lacks what boxhub
 *  needs (broker/capabilities.ts: the message names each missing feature and why). */
export function brokerError(e: unknown): unknown {
  if (e instanceof BrokerUnfit) return new StartupError(e.message, 'MQTT_URL', { cause: e });
  if (e instanceof Error && e.cause instanceof BrokerUnreachable) {
    return new StartupError(
      `${e.message}: check MQTT_URL (host, port, user and password), or unset it for the embedded broker`,
      'MQTT_URL',
      { cause: e },
    );
  }
  return e;
}
