// Opens the database named by the configuration: SQLite (embedded default) or PostgreSQL.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Database } from './schema.ts';
import { withStatementCache } from './statement-cache.ts';

export type Dialect = 'sqlite' | 'postgres';
export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL schema in use, when not the default. */
  schema?: string;
  close(): Promise<void>;
}

export interface DbOptions {
  /** postgres://… or undefined for SQLite */
  url?: string | undefined;
  sqlitePath?: string;
  /** PostgreSQL schema to work in (tests use one per app); created if missing. */
  pgSchema?: string;
  poolSize?: number;
}

export async function openDb(opts: DbOptions): Promise<Db> {
  if (opts.url) {
    // BIGINT (int8) arrives as a string by default; our values are Unix ms, safe as numbers.
    const types = {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    };
    const schema = opts.pgSchema;
    if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`bad schema name ${schema}`);
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize ?? 10,
      types,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', ...(schema ? { schema } : {}), close: once(() => kysely.destroy()) };
  }
  const path = opts.sqlitePath ?? ':memory:';
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  // WAL lets readers (the CLI, a second process) work while the server writes.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { kysely, dialect: 'sqlite', close: once(() => kysely.destroy()) };
}

/** close() may be called by several owners; pg's pool.end() never settles when called twice. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}
