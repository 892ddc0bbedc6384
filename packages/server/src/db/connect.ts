// Opens the database named by the configuration: SQLite (embedded default) or PostgreSQL.
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Database } from './schema.ts';
import { withStatementCache } from './statement-cache.ts';
import { FifoSqliteDialect } from './fifo-sqlite-dialect.ts';
import { startCheckpointer } from './sqlite-checkpointer.ts';
import { errnoCode } from '@boxhub/protocol';

export type Dialect = 'sqlite' | 'postgres';
export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL schema in use, when not the default. */
  schema?: string;
  /**
   * SQLite only: PRAGMA data_version, which changes when another connection (another process:
   * the CLI, a second server on the same file) committed since the last call. Caches of data
   * other processes may change are checked against it.
   */
  dataVersion?: () => number;
  close(): Promise<void>;
}

/**
 * Creates the data directory owner-only (0700) if it does not exist; umask can only take bits
 * away, so the mode holds whatever it is. An existing directory is left as the operator made it.
 */
export function ensureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

export interface DbOptions {
  /** postgres://… or undefined for SQLite */
  url?: string | undefined;
  sqlitePath?: string;
  /** PostgreSQL schema to work in (tests use one per app); created if missing. */
  pgSchema?: string;
  poolSize?: number;
  /**
   * A PostgreSQL connection lost outside a query (the server restarted, the network dropped):
   * told here, never thrown. The pool drops that connection and the next query opens another;
   * a query that was running fails with its own error.
   */
  onConnectionError?: (err: Error) => void;
  /**
   * SQLite file only: checkpoint the write-ahead log from a worker thread rather than inside
   * the commits (sqlite-checkpointer.ts; the server's connection, not a short-lived command's).
   * `onCheckpointerFailure` is told if that worker fails (the commits checkpoint again then).
   */
  backgroundCheckpoints?: boolean;
  onCheckpointerFailure?: (err: Error) => void;
}

export async function openDb(opts: DbOptions): Promise<Db> {
  if (opts.url) {
    // BIGINT (int8) arrives as a string by default; our values are Unix ms, safe as numbers.
    const types = {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    };
    const schema = opts.pgSchema;
    if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`bad schema name ${schema}`);
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize ?? 10,
      types,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    // node-postgres emits a lost connection as an 'error' event: on the pool for an idle
    // client, on the client itself for one checked out (between the queries of a transaction).
    // Unheard, either ends the process; each is only a connection to drop (docs/chaos.md).
    // The client's own listener reports it; the pool's re-emits the same error for an idle one.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => {
      client.on('error', (err: Error) => opts.onConnectionError?.(err));
    });
    if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', ...(schema ? { schema } : {}), close: once(() => kysely.destroy()) };
  }
  const path = opts.sqlitePath ?? ':memory:';
  if (path !== ':memory:') {
    ensureDataDir(dirname(path));
    // Created here owner-only (0600) before SQLite opens it: SQLite would create it 0644 less
    // the umask, and its -wal and -shm files take the database file's mode.
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
    } catch (e) {
      if (errnoCode(e) !== 'EEXIST') throw e;
    }
  }
  const sqlite = new SQLite(path);
  // WAL lets readers (the CLI, a second process) work while the server writes.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // FifoSqliteDialect: Kysely's own SQLite dialect with its waiters served in turn (why: there).
  const kysely = new Kysely<Database>({ dialect: new FifoSqliteDialect({ database: withStatementCache(sqlite) }) });
  const version = sqlite.prepare('PRAGMA data_version').pluck();
  const checkpointer =
    opts.backgroundCheckpoints && path !== ':memory:'
      ? startCheckpointer(sqlite, path, opts.onCheckpointerFailure ? { onFailure: opts.onCheckpointerFailure } : {})
      : undefined;
  return {
    kysely,
    dialect: 'sqlite',
    dataVersion: perTurn(() => version.get() as number),
    close: once(async () => {
      await checkpointer?.stop();
      await kysely.destroy();
    }),
  };
}

/** close() may be called by several owners; pg's pool.end() never settles when called twice. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}

/**
 * data_version read once per turn of the event loop: every check in one turn (an API request
 * checks it for its key and for its device) shares the first reading. Each pragma is a read
 * transaction (WAL shared-memory locks), and the second reading was as costly as the device
 * lookup it guards. Sound because what runs in one turn was already received when the turn
 * began: a commit by another process that lands during the turn is concurrent with it, and
 * the next turn sees it.
 */
function perTurn(read: () => number): () => number {
  let memo: number | undefined;
  const reset = () => {
    memo = undefined;
  };
  return () => {
    if (memo === undefined) {
      memo = read();
      setImmediate(reset);
    }
    return memo;
  };
}
