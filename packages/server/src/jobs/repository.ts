// The only SQL for the jobs table (docs/jobs.md). A claim is one conditional UPDATE … WHERE id
// IN (SELECT … FOR UPDATE SKIP LOCKED) RETURNING on PostgreSQL (architecture notes, "Persistence
// and jobs": without SKIP LOCKED the nodes deadlock); SQLite has one writer at a time, so the
// same UPDATE without the locking clause is already exclusive.
import { randomUUID } from 'node:crypto';
import { sql, type CompiledQuery, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Dialect } from '../db/connect.ts';
import type { Database, JobsTable } from '../db/schema.ts';

export type Trx = Kysely<Database> | Transaction<Database>;

export type JobRow = Selectable<JobsTable>;

export interface NewJob {
  kind: string;
  ref: string;
  runAt: number;
  fairKey?: string | null;
  payload?: string | null;
}

/** What scheduling a job that exists already does: keep it as it is, move it, or take the earlier time. */
export type OnConflict = 'keep' | 'replace' | 'earliest';

export interface ClaimSpec {
  kind: string;
  now: number;
  leaseUntil: number;
  token: string;
  limit: number;
  /** Jobs this node still works on although their lease ran out: never claimed again by it. */
  held: readonly string[];
  /** Fair claiming: at most `perRound` jobs of one key per claim, none of the `saturated` keys,
   *  and keys with nothing `busy` on this node before the others. */
  fair?: { perRound: number; saturated: readonly string[]; busy: readonly string[] };
}

export interface Settle {
  id: string;
  token: string;
  /** done: the job is deleted; again: due at `at` (with a new payload, if given); release: due now, unattempted. */
  next: { kind: 'done' } | { kind: 'again'; at: number; payload?: string | null } | { kind: 'release'; at: number };
}

export class JobRepository {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  private readonly probes = new Map<string, CompiledQuery<{ kind: string; run_at: number | string }>>();
  constructor(db: Kysely<Database>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  /** Schedules a job in the caller's transaction (idempotent per kind and ref). */
  async schedule(trx: Trx, job: NewJob, now: number, onConflict: OnConflict = 'keep'): Promise<void> {
    const row = {
      id: randomUUID(),
      kind: job.kind,
      ref: job.ref,
      fair_key: job.fairKey ?? null,
      payload: job.payload ?? null,
      run_at: job.runAt,
      claim_token: null,
      attempts: 0,
      created_at: now,
    };
    await trx
      .insertInto('jobs')
      .values(row)
      .onConflict((oc) => {
        const target = oc.columns(['kind', 'ref']);
        if (onConflict === 'keep') return target.doNothing();
        // A job being worked on (claimed) is left to its worker: it reschedules or deletes it.
        const set =
          onConflict === 'replace'
            ? { run_at: job.runAt, payload: job.payload ?? null }
            : { run_at: sql<number>`CASE WHEN jobs.run_at < ${job.runAt} THEN jobs.run_at ELSE ${job.runAt} END` };
        return target.doUpdateSet(set).where('jobs.claim_token', 'is', null);
      })
      .execute();
  }

  /** Deletes a job that is not being worked on; true when one was deleted. */
  async cancel(trx: Trx, kind: string, ref: string): Promise<boolean> {
    const r = await trx
      .deleteFrom('jobs')
      .where('kind', '=', kind)
      .where('ref', '=', ref)
      .where('claim_token', 'is', null)
      .executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  /** Makes unclaimed jobs due now (a waiter whose condition may have become true). */
  async dueNow(trx: Trx, kind: string, refs: readonly string[], now: number): Promise<void> {
    if (refs.length === 0) return;
    await trx
      .updateTable('jobs')
      .set({ run_at: now })
      .where('kind', '=', kind)
      .where('ref', 'in', refs)
      .where('claim_token', 'is', null)
      .where('run_at', '>', now)
      .execute();
  }

  find(kind: string, ref: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('kind', '=', kind).where('ref', '=', ref).executeTakeFirst();
  }

  /** Claims due jobs of one kind: their run_at becomes the lease expiry, under `token`. */
  async claim(c: ClaimSpec): Promise<JobRow[]> {
    const { db } = this;
    let due = db.selectFrom('jobs').where('kind', '=', c.kind).where('run_at', '<=', c.now);
    if (c.held.length > 0) due = due.where('id', 'not in', c.held);
    let pick;
    const fair = c.fair;
    if (fair) {
      // Round robin between keys: rank each key's due jobs by due time and take the first
      // `perRound` of every key before the next ones of any; a key at its limit is left out.
      if (fair.saturated.length > 0)
        due = due.where((eb) => eb.or([eb('fair_key', 'is', null), eb('fair_key', 'not in', fair.saturated)]));
      const ranked = due.select([
        'id',
        'run_at',
        sql<number>`ROW_NUMBER() OVER (PARTITION BY fair_key ORDER BY run_at, id)`.as('rn'),
      ]);
      const ranked2 =
        fair.busy.length > 0
          ? ranked.select((eb) => eb.case().when('fair_key', 'in', fair.busy).then(1).else(0).end().as('busy'))
          : ranked.select(sql<number>`0`.as('busy'));
      // Slots usually free one at a time; ordering by due time alone would hand each to the
      // oldest backlog. A key with nothing in flight here goes first, then the rest by due time.
      pick = db
        .selectFrom(ranked2.as('r'))
        .select('r.id')
        .where('r.rn', '<=', fair.perRound)
        .orderBy('r.rn')
        .orderBy('r.busy')
        .orderBy('r.run_at')
        .limit(c.limit);
    } else {
      pick = due.select('id').orderBy('run_at').limit(c.limit);
    }
    // FOR UPDATE is not allowed beside a window function, so on PostgreSQL the rows are locked one
    // level up, re-checking that each is still due (another node may have claimed it meanwhile).
    const lock =
      this.dialect === 'postgres'
        ? db
            .selectFrom('jobs')
            .select('id')
            .where('id', 'in', pick)
            .where('run_at', '<=', c.now)
            .forUpdate()
            .skipLocked()
        : pick;
    const rows = await db
      .updateTable('jobs')
      .set((eb) => ({ run_at: c.leaseUntil, claim_token: c.token, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', lock)
      .returningAll()
      .execute();
    return rows;
  }

  /**
   * The earliest due time (or lapsing lease) of each kind that has a job, in one statement: an
   * indexed first row per kind ((kind, run_at)), joined with UNION ALL. The runner claims only
   * the kinds that have something due; a claim statement per kind on every wake was most of a
   * recognized page's database time (bench/recognition profile).
   */
  async earliestByKind(kinds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (kinds.length === 0) return out;
    // Compiled once per set of kinds (a runner has a handful of sets): building the statement
    // cost as much as running it.
    const key = kinds.join('\n');
    let probe = this.probes.get(key);
    if (!probe) {
      const parts = kinds.map(
        (k, i) =>
          sql`SELECT * FROM (SELECT kind, run_at FROM jobs WHERE kind = ${k} ORDER BY run_at LIMIT 1) AS ${sql.ref(`k${i}`)}`,
      );
      probe = sql<{ kind: string; run_at: number | string }>`${sql.join(parts, sql` UNION ALL `)}`.compile(this.db);
      if (this.probes.size >= 64) this.probes.clear();
      this.probes.set(key, probe);
    }
    const r = await this.db.executeQuery(probe);
    for (const row of r.rows) out.set(row.kind, Number(row.run_at));
    return out;
  }

  /** Earliest due time (or lapsing lease) among these kinds. */
  async nextDue(kinds: readonly string[]): Promise<number | undefined> {
    let next: number | undefined;
    for (const t of (await this.earliestByKind(kinds)).values()) if (next === undefined || t < next) next = t;
    return next;
  }

  /**
   * Applies the outcome of worked jobs in the caller's transaction, each only while its claim
   * still holds (a node that lost a lease must not undo the new owner's work). Returns the ids
   * whose claim held: only their effects may be written.
   */
  async settle(trx: Trx, items: readonly Settle[]): Promise<Set<string>> {
    const held = new Set<string>();
    if (items.length === 0) return held;
    const done = items.filter((i) => i.next.kind === 'done');
    const moved = items.flatMap((i) => (i.next.kind === 'done' ? [] : [{ id: i.id, token: i.token, next: i.next }]));
    if (this.dialect === 'postgres') {
      // One statement per batch and outcome kind: each statement is a network round trip.
      if (done.length > 0) {
        const rows = await sql<{
          id: string;
        }>`DELETE FROM jobs AS j USING (VALUES ${sql.join(done.map((d) => sql`(${d.id}::varchar, ${d.token}::varchar)`))}) AS v(id, token)
          WHERE j.id = v.id AND j.claim_token = v.token RETURNING j.id`.execute(trx);
        for (const r of rows.rows) held.add(r.id);
      }
      if (moved.length > 0) {
        const values = moved.map((m) => {
          const n = m.next;
          const payload = n.kind === 'again' && n.payload !== undefined ? n.payload : null;
          const keep = !(n.kind === 'again' && n.payload !== undefined);
          return sql`(${m.id}::varchar, ${m.token}::varchar, ${n.at}::bigint, ${payload}::text, ${keep}::boolean)`;
        });
        const rows = await sql<{ id: string }>`UPDATE jobs AS j SET run_at = v.run_at, claim_token = NULL,
            payload = CASE WHEN v.keep THEN j.payload ELSE v.payload END
          FROM (VALUES ${sql.join(values)}) AS v(id, token, run_at, payload, keep)
          WHERE j.id = v.id AND j.claim_token = v.token RETURNING j.id`.execute(trx);
        for (const r of rows.rows) held.add(r.id);
      }
      return held;
    }
    for (const d of done) {
      const r = await trx
        .deleteFrom('jobs')
        .where('id', '=', d.id)
        .where('claim_token', '=', d.token)
        .executeTakeFirst();
      if (r.numDeletedRows > 0n) held.add(d.id);
    }
    for (const m of moved) {
      const n = m.next;
      const set =
        n.kind === 'again' && n.payload !== undefined
          ? { run_at: n.at, claim_token: null, payload: n.payload }
          : { run_at: n.at, claim_token: null };
      const r = await trx
        .updateTable('jobs')
        .set(set)
        .where('id', '=', m.id)
        .where('claim_token', '=', m.token)
        .executeTakeFirst();
      if (r.numUpdatedRows > 0n) held.add(m.id);
    }
    return held;
  }
}
