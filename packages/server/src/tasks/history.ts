// Every task's history (docs/tasks.md, "History"): append-only rows, read in their order. Rows go
// with their task (foreign key, cascade), so the history expires with it.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Trx } from '../jobs/repository.ts';

export type HistorySource = 'server' | 'box' | 'printer' | 'scanner';

export interface HistoryEntry {
  at: number;
  source: HistorySource;
  what: string;
  detail?: Record<string, unknown>;
}

/** Largest detail kept, bytes of JSON: a longer one is cut to its message. */
const DETAIL_MAX = 2048;
/** Most entries a read returns (the first ones). */
export const HISTORY_READ_MAX = 2000;

let seq = 0;
/** Sorts by time, then by order of writing on this node: `at` (15 digits), a counter, randomness. */
function entryId(at: number): string {
  seq = (seq + 1) % 1_000_000;
  return `${String(Math.max(0, Math.floor(at))).padStart(15, '0')}-${String(seq).padStart(6, '0')}-${randomBytes(4).toString('hex')}`;
}

export class TaskHistoryRepository {
  readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async add(db: Trx | Kysely<Database>, task: string, e: HistoryEntry): Promise<void> {
    let detail = e.detail ? JSON.stringify(e.detail) : null;
    if (detail && detail.length > DETAIL_MAX)
      detail = JSON.stringify({ truncated: true, message: String(e.detail?.message ?? '').slice(0, 500) });
    await db
      .insertInto('task_history')
      .values({ id: entryId(e.at), task_uuid: task, at: e.at, source: e.source, what: e.what, detail })
      .execute();
  }

  async list(task: string, limit = HISTORY_READ_MAX): Promise<HistoryEntry[]> {
    const rows = await this.db
      .selectFrom('task_history')
      .select(['at', 'source', 'what', 'detail'])
      .where('task_uuid', '=', task)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      at: Number(r.at),
      source: r.source as HistorySource,
      what: r.what,
      ...(r.detail ? { detail: JSON.parse(r.detail) as Record<string, unknown> } : {}),
    }));
  }

  /** The newest entry of one kind (e.g. the last printer state recorded), for "only changes". */
  async last(db: Trx | Kysely<Database>, task: string, what: string): Promise<HistoryEntry | undefined> {
    const r = await db
      .selectFrom('task_history')
      .select(['at', 'source', 'what', 'detail'])
      .where('task_uuid', '=', task)
      .where('what', '=', what)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return r
      ? {
          at: Number(r.at),
          source: r.source as HistorySource,
          what: r.what,
          ...(r.detail ? { detail: JSON.parse(r.detail) as Record<string, unknown> } : {}),
        }
      : undefined;
  }
}
