// Kysely's SQLite driver prepares a fresh better-sqlite3 statement for every query; preparing
// costs more than running a point lookup (27 µs against 6 µs, bench/api-throughput profile),
// and was the largest single cost of an API request. Kysely emits the same SQL text for the
// same query shape (values are bound parameters), so statements are cached by SQL text.
import type SQLite from 'better-sqlite3';

const MAX_STATEMENTS = 500;

export function withStatementCache(db: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (sql: string): SQLite.Statement => {
    let stmt = cache.get(sql);
    if (stmt) {
      // Refresh recency: Map keeps insertion order, the oldest entry is evicted first.
      cache.delete(sql);
      cache.set(sql, stmt);
      return stmt;
    }
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
    if (cache.size > MAX_STATEMENTS) cache.delete(cache.keys().next().value as string);
    return stmt;
  };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
