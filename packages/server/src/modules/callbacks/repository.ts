// The only SQL for callbacks. The outbox is claimed with one conditional UPDATE … WHERE id IN
// (SELECT … FOR UPDATE SKIP LOCKED) RETURNING on PostgreSQL (architecture notes, "Persistence
// and jobs": without SKIP LOCKED the workers deadlock); SQLite has one writer at a time, so the
// same UPDATE without the locking clause is already exclusive.
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { Database } from '../../db/schema.ts';

export type CallbackRow = {
  id: string; app_id: string; url: string; method: string; event: string; task_uuid: string | null;
  body: string; wait_group: string | null; wait_for: string | null; status: string; attempts: number;
  retry_index: number; next_attempt_at: number; claim_token: string | null; last_status_code: number | null;
  last_error: string | null; created_at: number; completed_at: number | null;
};
export type AttemptRow = Database['callback_attempts'];

export interface NewCallback {
  id: string; app_id: string; url: string; method: string; event: string; task_uuid: string | null;
  body: string; wait_group: string | null; wait_for: string | null; next_attempt_at: number; created_at: number;
}

/** The outcome of one attempt, written with the attempt row in one transaction. */
export interface AttemptOutcome {
  id: string;
  claimToken: string;
  attempt: AttemptRow;
  /** pending (another attempt at nextAttemptAt) | delivered | failed */
  status: 'pending' | 'delivered' | 'failed';
  retryIndex: number;
  nextAttemptAt: number;
  completedAt: number | null;
}

export type Trx = Kysely<Database>;

/** A pending callback may go when it waits for nothing, or its group has nothing pending left. */
function unblocked(eb: ExpressionBuilder<Database & { c: Database['callbacks'] }, 'c'>) {
  return eb.or([
    eb('c.wait_for', 'is', null),
    eb.not(eb.exists(eb.selectFrom('callbacks as g').select('g.id')
      .whereRef('g.app_id', '=', 'c.app_id').whereRef('g.wait_group', '=', 'c.wait_for')
      .where('g.status', '=', 'pending'))),
  ]);
}

export class CallbackRepository {
  readonly db: Kysely<Database>;
  private readonly dialect: Dialect;
  constructor(db: Kysely<Database>, dialect: Dialect) { this.db = db; this.dialect = dialect; }

  async insert(trx: Trx, row: NewCallback): Promise<void> {
    await trx.insertInto('callbacks').values({ ...row, status: 'pending', claim_token: null, last_status_code: null, last_error: null, completed_at: null }).execute();
  }

  /**
   * Claims up to `limit` due, unblocked callbacks: their next_attempt_at becomes `leaseUntil`,
   * so a node that dies mid-attempt leaves them to be claimed again when the lease ends.
   * `held`: rows this node is still working on although their lease ran out (worker.ts).
   */
  async claim(now: number, leaseUntil: number, token: string, limit: number, held: readonly string[] = []): Promise<CallbackRow[]> {
    let due = this.db.selectFrom('callbacks as c').select('c.id')
      .where('c.status', '=', 'pending').where('c.next_attempt_at', '<=', now)
      .where((eb) => unblocked(eb))
      .orderBy('c.next_attempt_at').limit(limit);
    if (held.length > 0) due = due.where('c.id', 'not in', held);
    if (this.dialect === 'postgres') due = due.forUpdate().skipLocked();
    const rows = await this.db.updateTable('callbacks')
      .set({ next_attempt_at: leaseUntil, claim_token: token })
      .where('id', 'in', due)
      .returningAll()
      .execute();
    return rows as CallbackRow[];
  }

  /** Earliest time a pending, unblocked callback becomes due (or a claim lapses). */
  async nextDue(): Promise<number | undefined> {
    const r = await this.db.selectFrom('callbacks as c').select('c.next_attempt_at')
      .where('c.status', '=', 'pending').where((eb) => unblocked(eb))
      .orderBy('c.next_attempt_at').limit(1).executeTakeFirst();
    return r ? Number(r.next_attempt_at) : undefined;
  }

  /** Records attempts and their outcomes; an outcome whose claim was lost (lease expired and
   *  another node took over) keeps its attempt row but leaves the callback to the new owner. */
  async complete(outcomes: AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('callback_attempts').values(outcomes.map((o) => o.attempt)).execute();
      if (this.dialect === 'postgres') {
        // One statement for the whole batch: each UPDATE is a network round trip on PostgreSQL
        // (on SQLite a prepared statement in-process costs microseconds, so it keeps the loop).
        // The casts type the VALUES columns, which PostgreSQL cannot infer from parameters.
        const rows = sql.join(outcomes.map((o) => sql`(${o.id}::varchar, ${o.claimToken}::varchar, ${o.status}::varchar,
          ${o.retryIndex}::integer, ${o.nextAttemptAt}::bigint, ${o.attempt.status_code}::integer,
          ${o.attempt.error}::varchar, ${o.completedAt}::bigint)`));
        await sql`UPDATE callbacks AS c SET status = v.status, attempts = c.attempts + 1,
            retry_index = v.retry_index, next_attempt_at = v.next_attempt_at, claim_token = NULL,
            last_status_code = v.status_code, last_error = v.error, completed_at = v.completed_at
          FROM (VALUES ${rows}) AS v(id, claim_token, status, retry_index, next_attempt_at, status_code, error, completed_at)
          WHERE c.id = v.id AND c.claim_token = v.claim_token`.execute(trx);
        return;
      }
      for (const o of outcomes) {
        await trx.updateTable('callbacks')
          .set((eb) => ({
            status: o.status,
            attempts: eb('attempts', '+', 1),
            retry_index: o.retryIndex,
            next_attempt_at: o.nextAttemptAt,
            claim_token: null,
            last_status_code: o.attempt.status_code,
            last_error: o.attempt.error,
            completed_at: o.completedAt,
          }))
          .where('id', '=', o.id).where('claim_token', '=', o.claimToken)
          .execute();
      }
    });
  }

  /** Gives claimed callbacks back unattempted (graceful stop): due again at `dueAt`. */
  async release(items: { id: string; claimToken: string }[], dueAt: number): Promise<void> {
    for (const i of items) {
      await this.db.updateTable('callbacks').set({ next_attempt_at: dueAt, claim_token: null })
        .where('id', '=', i.id).where('claim_token', '=', i.claimToken).where('status', '=', 'pending').execute();
    }
  }

  /**
   * Deletes up to `limit` callbacks completed before `before` (their attempts go with them by
   * the foreign key's ON DELETE CASCADE); returns how many. Pending callbacks are never touched,
   * so a replay racing the sweep keeps its row. On PostgreSQL rows another node is deleting or
   * replaying are skipped, not waited for.
   */
  async purge(before: number, limit: number): Promise<number> {
    let old = this.db.selectFrom('callbacks').select('id')
      .where('completed_at', '<', before).where('status', '!=', 'pending').limit(limit);
    if (this.dialect === 'postgres') old = old.forUpdate().skipLocked();
    const r = await this.db.deleteFrom('callbacks').where('id', 'in', old)
      .where('status', '!=', 'pending').executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  findForApp(appId: string, id: string): Promise<CallbackRow | undefined> {
    return this.db.selectFrom('callbacks').selectAll().where('id', '=', id).where('app_id', '=', appId)
      .executeTakeFirst() as Promise<CallbackRow | undefined>;
  }

  /** Starts a new delivery round for a completed callback; false when it is still pending. */
  async restart(appId: string, id: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('callbacks')
      .set({ status: 'pending', retry_index: 0, next_attempt_at: now, claim_token: null, completed_at: null })
      .where('id', '=', id).where('app_id', '=', appId).where('status', '!=', 'pending')
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async list(appId: string, filter: { status?: string; taskUuid?: string }, limit: number, offset: number): Promise<{ total: number; rows: CallbackRow[]; attempts: AttemptRow[] }> {
    let q = this.db.selectFrom('callbacks').where('app_id', '=', appId);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.taskUuid) q = q.where('task_uuid', '=', filter.taskUuid);
    const [count, rows] = await Promise.all([
      q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
      q.selectAll().orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset).execute(),
    ]);
    const ids = rows.map((r) => r.id);
    const attempts = ids.length === 0 ? [] : await this.db.selectFrom('callback_attempts').selectAll()
      .where('callback_id', 'in', ids).orderBy('started_at').orderBy('attempt').execute();
    return { total: Number(count.n), rows: rows as CallbackRow[], attempts };
  }

  /** Current and (while its grace period lasts) previous signing secrets of applications. */
  async secrets(appIds: string[]): Promise<Map<string, { current: string; previous: string | null; previousUntil: number | null }>> {
    const rows = appIds.length === 0 ? [] : await this.db.selectFrom('applications')
      .select(['id', 'callback_secret', 'previous_callback_secret', 'previous_secret_expires_at'])
      .where('id', 'in', appIds).execute();
    return new Map(rows.map((r) => [r.id, {
      current: r.callback_secret, previous: r.previous_callback_secret,
      previousUntil: r.previous_secret_expires_at === null ? null : Number(r.previous_secret_expires_at),
    }]));
  }

  /** Replaces the secret; the old one stays valid until `previousUntil`. */
  async rotateSecret(appId: string, secret: string, previousUntil: number): Promise<boolean> {
    const r = await this.db.updateTable('applications')
      .set((eb) => ({ previous_callback_secret: eb.ref('callback_secret'), previous_secret_expires_at: previousUntil, callback_secret: secret }))
      .where('id', '=', appId).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }
}
