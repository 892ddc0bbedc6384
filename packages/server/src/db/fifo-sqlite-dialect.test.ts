// FifoSqliteDialect (db/fifo-sqlite-dialect.ts): statements waiting for SQLite's one connection
// are served in the order they came, each release waking one of them; transactions still hold
// the connection to themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { asBackground } from './background-work.ts';
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

test("the API's waiters are served before background work's, each lane in the order it came", async () => {
  const gate = new FifoGate(Number.POSITIVE_INFINITY);
  const order: string[] = [];
  await gate.lock();
  const pass = (name: string, background: boolean) =>
    gate.lock(background).then(() => {
      order.push(name);
      gate.unlock();
    });
  const all = [pass('b1', true), pass('f1', false), pass('b2', true), pass('f2', false)];
  gate.unlock();
  await Promise.all(all);
  assert.deepEqual(order, ['f1', 'f2', 'b1', 'b2']);
});

test('background work past its budget waits for the next turn of the loop, and a request that came meanwhile goes first', async () => {
  let now = 0;
  const gate = new FifoGate(5, () => now);
  const order: string[] = [];
  await gate.lock(true);
  const background = [1, 2, 3].map((n) =>
    gate.lock(true).then(() => {
      order.push(`b${n}`);
      now += 3; // each holds the connection 3 ms
      gate.unlock();
    }),
  );
  gate.unlock();
  // Within the turn: b1 (0 → 3 ms) and b2 (3 → 6 ms) pass; after 6 ms of the 5 ms budget, b3 waits.
  for (let i = 0; i < 20; i++) await Promise.resolve();
  assert.deepEqual(order, ['b1', 'b2'], 'the turn ends once the budget is spent');
  const request = gate.lock(false).then(() => {
    order.push('f1');
    gate.unlock();
  });
  await Promise.all([...background, request]);
  assert.deepEqual(order, ['b1', 'b2', 'f1', 'b3']);
});

test('with the dialect, background statements yield the loop and let a request through ahead of them', async () => {
  const db = new Kysely<{ t: { id: number; v: string } }>({
    dialect: new FifoSqliteDialect({ database: new SQLite(':memory:'), backgroundTurnMs: 0 }),
  });
  try {
    await sql`create table t (id integer primary key, v text not null)`.execute(db);
    const done: string[] = [];
    const background = Array.from({ length: 200 }, (_, i) =>
      asBackground(() =>
        db
          .insertInto('t')
          .values({ id: i + 1, v: 'box' })
          .execute()
          .then(() => done.push('box')),
      ),
    );
    // A turn of the loop later: the request comes while the box work is still in line.
    await new Promise((r) => setImmediate(r));
    const boxesBefore = done.length;
    assert.ok(boxesBefore < 200, `the box work yielded the loop (${boxesBefore} of 200 done in the first turns)`);
    const request = db
      .selectFrom('t')
      .select(db.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
      .then((r) => {
        done.push('request');
        return Number(r.n);
      });
    const seen = await request;
    await Promise.all(background);
    const at = done.indexOf('request');
    assert.ok(at <= boxesBefore + 2, `the request went ahead of the box work still in line (served ${at}th)`);
    assert.ok(seen < 200, `it saw the table before the box work was done (${seen} rows)`);
    assert.equal(done.length, 201);
  } finally {
    await db.destroy();
  }
});
