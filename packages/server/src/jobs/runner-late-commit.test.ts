// A job scheduled in a transaction that commits late is still found (jobs/runner.ts sleep()).
// scheduled() wakes the runner at once and again 25 ms later; a commit slower than that (a
// loaded machine) is left to the poll. The poll is a matter of real time: on an injected clock
// that no one moves it used to be a timer of that clock, so such a job waited for the next move
// (callbacks.test.ts saw a first attempt never come under load). SQLite runs every statement
// on one connection, so the runner's look waits for the commit there: this is for PostgreSQL,
// in the scale-out pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engine, eventually, startTestServer } from '../testing/harness.ts';
import { ManualClock } from '../testing/manual-clock.ts';
import { Jobs } from './jobs.ts';
import { JobRepository } from './repository.ts';
import { JobRunner } from './runner.ts';

if (engine === 'external')
  test('a job whose transaction commits after the runner looked is run at the next poll, without the clock moving', async () => {
    const clock = new ManualClock();
    const t = await startTestServer({ clock });
    const db = t.server.db.kysely;
    const repo = new JobRepository(db, t.server.db.dialect);
    const runner = new JobRunner(repo, clock, t.server.log, { pollMs: 50 });
    const jobs = new Jobs(repo, runner, clock);
    const ran: string[] = [];
    runner.register({
      kind: 'test.late-commit',
      concurrency: 1,
      leaseMs: 60_000,
      run: async (job) => {
        ran.push(job.ref);
        return { next: 'done' };
      },
    });
    runner.start();
    try {
      await runner.quiet();
      await db.transaction().execute(async (trx) => {
        await jobs.schedule(trx, { kind: 'test.late-commit', ref: 'late', runAt: clock.now() });
        // Both of scheduled()'s wakes come and go while the job is still invisible to them.
        await runner.quiet();
        assert.deepEqual(ran, []);
      });
      const at = clock.now();
      await eventually(() => ran.length === 1, 'the job run after its commit', 10_000);
      assert.deepEqual(ran, ['late']);
      assert.equal(clock.now(), at, 'the clock did not move');
    } finally {
      await runner.stop();
      await t.close();
    }
  });
