import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Trx } from '../jobs/repository.ts';
import { timeOrderedId } from '../db/time-ordered-id.ts';

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
      .values({ id: timeOrderedId(e.at), task_uuid: task, at: e.at, source: e.source, what: e.what, detail })
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
