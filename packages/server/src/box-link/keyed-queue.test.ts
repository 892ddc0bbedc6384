// KeyedQueue (box-link/keyed-queue.ts): one task at a time per key, in order; at most `limit`
// tasks at once across keys, the others started in the order they came.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedQueue } from './keyed-queue.ts';

const turn = () => new Promise<void>((r) => setImmediate(r));

test('no more than the limit run at once; every task runs, each key in order', async () => {
  const q = new KeyedQueue(2);
  let running = 0;
  let most = 0;
  const done: string[] = [];
  for (const key of ['a', 'b', 'c', 'd'])
    for (const n of [1, 2])
      void q.run(key, async () => {
        running++;
        most = Math.max(most, running);
        await turn();
        done.push(`${key}${n}`);
        running--;
      });
  await q.drain();
  assert.equal(most, 2);
  assert.equal(done.length, 8);
  for (const key of ['a', 'b', 'c', 'd'])
    assert.ok(done.indexOf(`${key}1`) < done.indexOf(`${key}2`), `${key} in order`);
});

test('a waiting task starts when a slot frees, in the order the tasks came', async () => {
  const q = new KeyedQueue(1);
  const started: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  void q.run('a', async () => {
    started.push('a');
    await held;
  });
  void q.run('b', async () => {
    started.push('b');
  });
  void q.run('c', async () => {
    started.push('c');
  });
  await turn();
  assert.deepEqual(started, ['a'], 'b and c wait for the one slot');
  release();
  await q.drain();
  assert.deepEqual(started, ['a', 'b', 'c']);
});

test('a task that throws frees its slot and does not stop its key', async () => {
  const q = new KeyedQueue(1);
  const failed = q.run('a', async () => {
    throw new Error('bad message');
  });
  const after = q.run('a', async () => undefined);
  await assert.rejects(failed, /bad message/);
  await after;
  await q.drain();
});

test("freed slots are handed over within background work's budget for a turn of the loop, not all in one turn", async () => {
  const q = new KeyedQueue(64);
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const startedIn: number[] = [];
  // Tasks that finish without waiting for anything, each 1 ms of work: 64 start at once, and
  // every slot they free is handed over in a later turn.
  for (let i = 0; i < 320; i++)
    void q.run(`box-${i}`, async () => {
      startedIn.push(turns);
      const until = performance.now() + 1;
      while (performance.now() < until);
    });
  await q.drain();
  counting = false;
  const perTurn = new Map<number, number>();
  for (const t of startedIn.slice(64)) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
  const most = Math.max(...perTurn.values());
  // BACKGROUND_TURN_MS (5) of 1 ms tasks: about 5 a turn; a setImmediate each started all 64.
  assert.ok(most <= 16, `at most ${most} handed over in one turn`);
  assert.equal(startedIn.length, 320);
});
