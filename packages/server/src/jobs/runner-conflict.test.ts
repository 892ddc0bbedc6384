// A job's outcome survives PostgreSQL breaking a deadlock by aborting its settling transaction
// (db/transaction.ts). The deadlock is caused for real, as it happened between two server nodes
// (recognition: a node settling an assemble job locks the job row, then the recognition task;
// another records a page's reading, locking the task, then wakes the assemble job's row):
//   the settle deletes the job row (held) and then updates a second row R;
//   another transaction holds R and then schedules the same job (kind, ref), waiting on its row.
// PostgreSQL looks for a deadlock once per wait, when the waiter's deadlock_timeout runs out,
// and aborts the waiter that finds it. The settle waits 5 s before looking, the other side 60 s:
// the settle is the one aborted, however long the loaded machine takes to close the cycle (with
// both at the default 1 s, a settle that looked before the cycle closed never looked again, and
// the other side was aborted instead). Before the fix the outcome was lost until the job's lease
// ran out (here 10 minutes).
// SQLite has one writer at a time (no deadlock to cause), so this runs in the scale-out pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { systemClock } from '../clock.ts';
import { engine, eventually, startTestServer } from '../testing/harness.ts';
import { JobRepository, type Trx } from './repository.ts';
import { JobRunner } from './runner.ts';

if (engine === 'external') {
  test('a settle that PostgreSQL aborts to break a deadlock is run again: the job is done and its effect written', async () => {
    const t = await startTestServer();
    const db = t.server.db.kysely;
    const jobs = new JobRepository(db, t.server.db.dialect);
    const runner = new JobRunner(jobs, systemClock, t.server.log, { pollMs: 50 });
    const marker = `deadlock_${randomBytes(6).toString('hex')}`;
    const kind = `test.${marker}`;
    let effectStarted!: () => void;
    const started = new Promise<void>((r) => {
      effectStarted = r;
    });
    let effects = 0;
    try {
      const now = Date.now();
      // R: an unrelated row (a far-off job of another kind) that both transactions update.
      await jobs.schedule(db, { kind: `${kind}.other`, ref: 'r', runAt: now + 86_400_000 }, now);
      const r = (await jobs.find(`${kind}.other`, 'r'))!;
      runner.register({
        kind,
        concurrency: 1,
        leaseMs: 10 * 60_000,
        run: async () => ({
          next: 'done',
          effect: async (trx: Trx) => {
            effects++;
            effectStarted();
            await sql`SET LOCAL deadlock_timeout = '5s'`.execute(trx);
            // The marker in the statement's text lets the other side see this one wait.
            await sql`UPDATE jobs SET payload = 'effect' WHERE id = ${r.id} /* ${sql.raw(marker)} */`.execute(trx);
          },
        }),
      });
      const other = db.transaction().execute(async (trx) => {
        await sql`SET LOCAL deadlock_timeout = '60s'`.execute(trx);
        await trx.updateTable('jobs').set({ payload: 'other' }).where('id', '=', r.id).execute();
        await jobs.schedule(db, { kind, ref: 'j', runAt: Date.now() }, Date.now());
        runner.start();
        await started;
        // The settle now waits for R (held here); wait on its job row in turn: a deadlock.
        await eventually(
          async () => {
            const w = await sql<{
              n: string;
            }>`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ${`%${marker}%`} AND query NOT LIKE '%pg_stat_activity%'`.execute(
              db,
            );
            return Number(w.rows[0]!.n) > 0;
          },
          'the settle waiting for R',
          10_000,
        );
        await jobs.schedule(trx, { kind, ref: 'j', runAt: Date.now() }, Date.now(), 'earliest');
      });
      await other;
      await eventually(async () => (await jobs.find(kind, 'j')) === undefined, 'the job settled (deleted)', 15_000);
      assert.equal(
        (await jobs.find(`${kind}.other`, 'r'))!.payload,
        'effect',
        'the effect was written, after the other transaction',
      );
      assert.ok(effects >= 2, `the effect ran again in a new transaction (${effects} runs)`);
    } finally {
      await runner.stop();
      await t.close();
    }
  });
}
