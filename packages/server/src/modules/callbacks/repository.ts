// The only SQL for callbacks. A callback row is the message and its delivery state; the
// schedule of its attempts is a `callback.deliver` job on the jobs table (jobs/, delivery.ts),
// so callbacks share the claiming, leases and fairness of every other delayed work.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { Database } from '../../db/schema.ts';
import { transact } from '../../db/transaction.ts';
import type { Trx } from '../../jobs/repository.ts';

export type CallbackRow = {
  id: string;
  app_id: string;
  url: string;
  method: string;
  event: string;
  task_uuid: string | null;
  body: string;
  wait_group: string | null;
  wait_for: string | null;
  status: string;
  attempts: number;
  retry_index: number;
  next_attempt_at: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  completed_at: number | null;
};
export type AttemptRow = Database['callback_attempts'];

export interface NewCallback {
  id: string;
  app_id: string;
  url: string;
  method: string;
  event: string;
  task_uuid: string | null;
  body: string;
  wait_group: string | null;
  wait_for: string | null;
  next_attempt_at: number;
  created_at: number;
}

/** The outcome of one attempt, written with the attempt row in the job's settling transaction. */
export interface AttemptOutcome {
  id: string;
  attempt: AttemptRow;
  /** pending (another attempt at nextAttemptAt) | delivered | failed */
  status: 'pending' | 'delivered' | 'failed';
  retryIndex: number;
  nextAttemptAt: number;
  completedAt: number | null;
}

export type { Trx };

/** Where signing secrets are kept: the applications module, which stores them encrypted. */
export interface CallbackSecretStore {
  callbackSecrets(
    appIds: string[],
  ): Promise<Map<string, { current: string; previous: string | null; previousUntil: number | null }>>;
  rotateCallbackSecret(appId: string, secret: string, previousUntil: number): Promise<boolean>;
}

export class CallbackRepository {
  readonly db: Kysely<Database>;
  private readonly dialect: Dialect;
  private readonly secretStore: CallbackSecretStore;
  constructor(db: Kysely<Database>, dialect: Dialect, secretStore: CallbackSecretStore) {
    this.db = db;
    this.dialect = dialect;
    this.secretStore = secretStore;
  }

  async insert(trx: Trx, row: NewCallback): Promise<void> {
    await trx
      .insertInto('callbacks')
      .values({ ...row, status: 'pending', last_status_code: null, last_error: null, completed_at: null })
      .execute();
  }

  /** Pending callbacks by id, for a batch of delivery jobs. */
  async pending(ids: readonly string[]): Promise<Map<string, CallbackRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('callbacks')
      .selectAll()
      .where('id', 'in', ids)
      .where('status', '=', 'pending')
      .execute();
    return new Map((rows as CallbackRow[]).map((r) => [r.id, r]));
  }

  /** Whether any callback of this application's group is still pending. */
  async groupPending(appId: string, group: string, trx: Trx = this.db): Promise<boolean> {
    const r = await trx
      .selectFrom('callbacks')
      .select('id')
      .where('app_id', '=', appId)
      .where('wait_group', '=', group)
      .where('status', '=', 'pending')
      .limit(1)
      .executeTakeFirst();
    return r !== undefined;
  }

  /** Pending callbacks waiting for any of these groups of their application. */
  async waiters(trx: Trx, groups: ReadonlyArray<{ appId: string; group: string }>): Promise<string[]> {
    if (groups.length === 0) return [];
    const rows = await trx
      .selectFrom('callbacks')
      .select('id')
      .where('status', '=', 'pending')
      .where((eb) => eb.or(groups.map((g) => eb.and([eb('app_id', '=', g.appId), eb('wait_for', '=', g.group)]))))
      .execute();
    return rows.map((r) => r.id);
  }

  /** Writes attempts and their outcomes (in the settling transaction of their jobs). */
  async recordOutcomes(trx: Trx, outcomes: readonly AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await trx
      .insertInto('callback_attempts')
      .values(outcomes.map((o) => o.attempt))
      .execute();
    if (this.dialect === 'postgres') {
      // One statement for the whole batch: each UPDATE is a network round trip on PostgreSQL
      // (on SQLite a prepared statement in-process costs microseconds, so it keeps the loop).
      // The casts type the VALUES columns, which PostgreSQL cannot infer from parameters.
      const rows = sql.join(
        outcomes.map(
          (o) => sql`(${o.id}::varchar, ${o.status}::varchar,
        ${o.retryIndex}::integer, ${o.nextAttemptAt}::bigint, ${o.attempt.status_code}::integer,
        ${o.attempt.error}::varchar, ${o.completedAt}::bigint)`,
        ),
      );
      await sql`UPDATE callbacks AS c SET status = v.status, attempts = c.attempts + 1,
          retry_index = v.retry_index, next_attempt_at = v.next_attempt_at,
          last_status_code = v.status_code, last_error = v.error, completed_at = v.completed_at
        FROM (VALUES ${rows}) AS v(id, status, retry_index, next_attempt_at, status_code, error, completed_at)
        WHERE c.id = v.id AND c.status = 'pending'`.execute(trx);
      return;
    }
    for (const o of outcomes) {
      await trx
        .updateTable('callbacks')
        .set((eb) => ({
          status: o.status,
          attempts: eb('attempts', '+', 1),
          retry_index: o.retryIndex,
          next_attempt_at: o.nextAttemptAt,
          last_status_code: o.attempt.status_code,
          last_error: o.attempt.error,
          completed_at: o.completedAt,
        }))
        .where('id', '=', o.id)
        .where('status', '=', 'pending')
        .execute();
    }
  }

  /**
   * Deletes up to `limit` callbacks completed before `before` (their attempts go with them by
   * the foreign key's ON DELETE CASCADE); returns how many. Pending callbacks are never touched,
   * so a replay racing the sweep keeps its row. On PostgreSQL rows another node is deleting or
   * replaying are skipped, not waited for.
   */
  async purge(before: number, limit: number): Promise<number> {
    let old = this.db
      .selectFrom('callbacks')
      .select('id')
      .where('completed_at', '<', before)
      .where('status', '!=', 'pending')
      .limit(limit);
    if (this.dialect === 'postgres') old = old.forUpdate().skipLocked();
    const r = await this.db
      .deleteFrom('callbacks')
      .where('id', 'in', old)
      .where('status', '!=', 'pending')
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  findForApp(appId: string, id: string): Promise<CallbackRow | undefined> {
    return this.db
      .selectFrom('callbacks')
      .selectAll()
      .where('id', '=', id)
      .where('app_id', '=', appId)
      .executeTakeFirst() as Promise<CallbackRow | undefined>;
  }

  /** Starts a new delivery round for a completed callback; false when it is still pending. */
  async restart(trx: Trx, appId: string, id: string, now: number): Promise<boolean> {
    const r = await trx
      .updateTable('callbacks')
      .set({ status: 'pending', retry_index: 0, next_attempt_at: now, completed_at: null })
      .where('id', '=', id)
      .where('app_id', '=', appId)
      .where('status', '!=', 'pending')
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async list(
    appId: string,
    filter: { status?: string; taskUuid?: string },
    limit: number,
    offset: number,
  ): Promise<{ total: number; rows: CallbackRow[]; attempts: AttemptRow[] }> {
    // One snapshot for the three reads: read apart, an outcome committed between them showed an
    // attempt without the retry it scheduled (PostgreSQL's read committed gives each statement
    // its own snapshot; repeatable read gives the transaction one. SQLite in WAL mode keeps the
    // snapshot of a transaction's first read).
    return transact(
      this.db,
      async (trx) => {
        let q = trx.selectFrom('callbacks').where('app_id', '=', appId);
        if (filter.status) q = q.where('status', '=', filter.status);
        if (filter.taskUuid) q = q.where('task_uuid', '=', filter.taskUuid);
        const count = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
        const rows = await q
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute();
        const ids = rows.map((r) => r.id);
        const attempts =
          ids.length === 0
            ? []
            : await trx
                .selectFrom('callback_attempts')
                .selectAll()
                .where('callback_id', 'in', ids)
                .orderBy('started_at')
                .orderBy('attempt')
                .execute();
        return { total: Number(count.n), rows: rows as CallbackRow[], attempts };
      },
      this.dialect === 'postgres' ? { isolation: 'repeatable read' } : {},
    );
  }

  /**
   * One task's callbacks of one event with their bodies, in the order they were queued (a
   * recognition task's result callbacks: their groups end in the student's index, so a shorter
   * group sorts first, then the text).
   */
  async ofTask(
    appId: string,
    taskUuid: string,
    event: string,
    limit: number,
    offset: number,
  ): Promise<{ total: number; rows: CallbackRow[] }> {
    const q = this.db
      .selectFrom('callbacks')
      .where('app_id', '=', appId)
      .where('task_uuid', '=', taskUuid)
      .where('event', '=', event);
    const [count, rows] = await Promise.all([
      q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
      q
        .selectAll()
        .orderBy('created_at')
        .orderBy(sql`length(wait_group)`)
        .orderBy('wait_group')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute(),
    ]);
    return { total: Number(count.n), rows: rows as CallbackRow[] };
  }

  /** Ids and statuses of these callbacks of the application. */
  async statuses(appId: string, ids: readonly string[]): Promise<Array<{ id: string; status: string }>> {
    if (ids.length === 0) return [];
    return this.db
      .selectFrom('callbacks')
      .select(['id', 'status'])
      .where('app_id', '=', appId)
      .where('id', 'in', ids)
      .execute();
  }

  /** Current and (while its grace period lasts) previous signing secrets of applications
   *  (stored encrypted by the applications module; these are decrypted). */
  secrets(
    appIds: string[],
  ): Promise<Map<string, { current: string; previous: string | null; previousUntil: number | null }>> {
    return this.secretStore.callbackSecrets(appIds);
  }

  /** Replaces the secret; the old one stays valid until `previousUntil`. */
  rotateSecret(appId: string, secret: string, previousUntil: number): Promise<boolean> {
    return this.secretStore.rotateCallbackSecret(appId, secret, previousUntil);
  }
}
