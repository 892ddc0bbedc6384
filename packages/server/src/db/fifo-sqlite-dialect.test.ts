// FifoSqliteDialect (db/fifo-sqlite-dialect.ts): statements waiting for SQLite's one connection
// are served in the order they came, each release waking one of them; transactions still hold
// the connection to themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { FifoGate, FifoSqliteDialect } from './fifo-sqlite-dialect.ts';

test('the gate lets one holder in at a time, the others in the order they came', async () => {
  const gate = new FifoGate();
  const order: number[] = [];
  await gate.lock();
  const waiting = [1, 2, 3].map((n) =>
    gate.lock().then(() => {
      order.push(n);
      gate.unlock();
    }),
  );
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'nobody passes while it is held');
  gate.unlock();
  await Promise.all(waiting);
  assert.deepEqual(order, [1, 2, 3]);
  await gate.lock(); // free again
});

test('after a release the next in line holds it, and the rest still wait', async () => {
  const gate = new FifoGate();
  await gate.lock();
  let passed = 0;
  const waiting = Array.from({ length: 100 }, () =>
    gate.lock().then(() => {
      passed++;
    }),
  );
  gate.unlock();
  await new Promise((r) => setImmediate(r));
  assert.equal(passed, 1, 'the head of the line holds it now; the rest still wait');
  for (let i = 0; i < 99; i++) gate.unlock();
  await Promise.all(waiting);
  assert.equal(passed, 100);
});

test('with the dialect, concurrent statements and transactions on one SQLite connection all land, each transaction whole', async () => {
  const db = new Kysely<{ t: { id: number; v: string } }>({
    dialect: new FifoSqliteDialect({ database: new SQLite(':memory:') }),
  });
  try {
    await sql`create table t (id integer primary key, v text not null)`.execute(db);
    const singles = Array.from({ length: 500 }, (_, i) =>
      db
        .insertInto('t')
        .values({ id: i + 1, v: 'single' })
        .execute(),
    );
    const failing = db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('t').values({ id: 10_001, v: 'rolled back' }).execute();
        throw new Error('changed its mind');
      })
      .catch((e: Error) => e.message);
    const whole = db.transaction().execute(async (trx) => {
      for (let i = 0; i < 50; i++)
        await trx
          .insertInto('t')
          .values({ id: 20_001 + i, v: 'whole' })
          .execute();
    });
    await Promise.all([...singles, whole]);
    assert.equal(await failing, 'changed its mind');
    const counts = await db
      .selectFrom('t')
      .select(['v', db.fn.countAll<number>().as('n')])
      .groupBy('v')
      .orderBy('v')
      .execute();
    assert.deepEqual(
      counts.map((c) => [c.v, Number(c.n)]),
      [
        ['single', 500],
        ['whole', 50],
      ],
    );
  } finally {
    await db.destroy();
  }
});
