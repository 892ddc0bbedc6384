// Counter stores for @fastify/rate-limit (its `store` interface: incr and child), on the
// server's injected clock so tests cross a window without waiting (the plugin's LocalStore
// reads Date.now()). Both count fixed windows, as LocalStore does.
//
// - MemoryWindows: this node only, in memory, bounded (the oldest keys go first).
// - DbWindows: in the database, for limits every node must share (get_uuid misses); one
//   atomic upsert per hit, so concurrent requests on any node are counted exactly.
//
// Beyond the plugin's interface both can `peek` (is the key over its limit, without counting
// a hit) and `refund` (give a hit back), for limits that count failures only (http/rate-limits.ts).
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/schema.ts';

export interface Window {
  current: number;
  ttl: number;
  start: number;
}
type IncrCallback = (err: Error | null, res: { current: number; ttl: number }) => void;

export interface WindowStore {
  incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): WindowStore;
  /** Gives one hit back, if the window it was counted in is still the current one. */
  refund(key: string, timeWindow: number): Promise<void>;
}

const MEMORY_KEYS = 100_000;

export class MemoryWindows implements WindowStore {
  private readonly clock: Clock;
  private readonly windows = new Map<string, { hits: number; start: number }>();
  constructor(clock: Clock) {
    this.clock = clock;
  }

  incr(key: string, cb: IncrCallback, timeWindow: number): void {
    const now = this.clock.now();
    let w = this.windows.get(key);
    if (!w || w.start + timeWindow <= now) {
      w = { hits: 0, start: now };
      this.windows.delete(key);
      this.windows.set(key, w);
      if (this.windows.size > MEMORY_KEYS) this.windows.delete(this.windows.keys().next().value as string);
    }
    w.hits++;
    cb(null, { current: w.hits, ttl: w.start + timeWindow - now });
  }

  child(_routeOptions?: unknown): WindowStore {
    return new MemoryWindows(this.clock);
  }

  /** The key's current window, without counting a hit (synchronous: on the request path). */
  peek(key: string, timeWindow: number): Window | undefined {
    const w = this.windows.get(key);
    const now = this.clock.now();
    return w && w.start + timeWindow > now
      ? { current: w.hits, ttl: w.start + timeWindow - now, start: w.start }
      : undefined;
  }

  async refund(key: string, timeWindow: number): Promise<void> {
    const w = this.windows.get(key);
    if (w && w.start + timeWindow > this.clock.now() && w.hits > 0) w.hits--;
  }
}

export class DbWindows implements WindowStore {
  private readonly db: Kysely<Database>;
  private readonly clock: Clock;
  constructor(db: Kysely<Database>, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  incr(key: string, cb: IncrCallback, timeWindow: number): void {
    this.hit(key, timeWindow).then(
      (w) => cb(null, w),
      (e: Error) => cb(e, { current: 0, ttl: 0 }),
    );
  }

  /** One statement: a new window, or one more hit in the current one. */
  async hit(key: string, timeWindow: number): Promise<Window> {
    const now = this.clock.now();
    const r = await sql<{ hits: number | string; window_start: number | string }>`
      INSERT INTO rate_limits (key, hits, window_start) VALUES (${key}, 1, ${now})
      ON CONFLICT (key) DO UPDATE SET
        hits = CASE WHEN rate_limits.window_start + ${timeWindow} <= ${now} THEN 1 ELSE rate_limits.hits + 1 END,
        window_start = CASE WHEN rate_limits.window_start + ${timeWindow} <= ${now} THEN ${now} ELSE rate_limits.window_start END
      RETURNING hits, window_start`.execute(this.db);
    const row = r.rows[0]!;
    const start = Number(row.window_start);
    return { current: Number(row.hits), ttl: start + timeWindow - now, start };
  }

  child(_routeOptions?: unknown): WindowStore {
    return this;
  }

  async peek(key: string, timeWindow: number): Promise<Window | undefined> {
    const row = await this.db
      .selectFrom('rate_limits')
      .select(['hits', 'window_start'])
      .where('key', '=', key)
      .executeTakeFirst();
    const now = this.clock.now();
    if (!row || Number(row.window_start) + timeWindow <= now) return undefined;
    return {
      current: Number(row.hits),
      ttl: Number(row.window_start) + timeWindow - now,
      start: Number(row.window_start),
    };
  }

  async refund(key: string, timeWindow: number): Promise<void> {
    await this.db
      .updateTable('rate_limits')
      .set((eb) => ({ hits: eb('hits', '-', 1) }))
      .where('key', '=', key)
      .where('window_start', '>', this.clock.now() - timeWindow)
      .where('hits', '>', 0)
      .execute();
  }

  /** Deletes windows that ended before `before` (a sweep; they would be restarted anyway). */
  async purge(before: number): Promise<number> {
    const r = await this.db.deleteFrom('rate_limits').where('window_start', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
