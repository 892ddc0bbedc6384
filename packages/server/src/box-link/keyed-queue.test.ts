// The gateway's queue of box messages: in order per box, concurrent across boxes, bounded, and
// leaving the event loop to other work between turns (box-link/keyed-queue.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedQueue } from './keyed-queue.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test("a key's tasks run one after another in order, a failure settles only its own task", async () => {
  const q = new KeyedQueue();
  const log: string[] = [];
  let release!: () => void;
  const first = q.run('a', async () => {
    log.push('a1 start');
    await new Promise<void>((r) => {
      release = r;
    });
    log.push('a1 end');
  });
  const failing = q.run('a', async () => {
    log.push('a2');
    throw new Error('boom');
  });
  const third = q.run('a', async () => {
    log.push('a3');
  });
  const other = q.run('b', async () => {
    log.push('b1');
  });
  await other;
  assert.deepEqual(log, ['a1 start', 'b1'], 'b ran while a1 was still running; a2 waits for a1');
  release();
  await first;
  await assert.rejects(failing, /boom/);
  await third;
  assert.deepEqual(log, ['a1 start', 'b1', 'a1 end', 'a2', 'a3']);
});

test('at most `concurrency` tasks run at once, and drain waits for every one', async () => {
  const q = new KeyedQueue({ concurrency: 3, perTurn: 100 });
  let running = 0;
  let most = 0;
  let done = 0;
  for (let i = 0; i < 20; i++) {
    void q.run(`k${i}`, async () => {
      running++;
      most = Math.max(most, running);
      await turn();
      await turn();
      running--;
      done++;
    });
  }
  await q.drain();
  assert.deepEqual([done, most, running], [20, 3, 0]);
  await q.drain(); // an idle queue drains at once
});

test('tasks that never wait still leave the event loop to other work: at most `perTurn` per turn', async () => {
  const q = new KeyedQueue({ concurrency: 1000, perTurn: 10 });
  let done = 0;
  for (let i = 0; i < 100; i++) {
    void q.run(`box-${i}`, async () => {
      done++;
    });
  }
  // What a request arriving meanwhile would get: a turn of its own after at most one turn's tasks.
  const seen: number[] = [];
  for (let t = 0; t < 3; t++) {
    await turn();
    seen.push(done);
  }
  assert.deepEqual(seen, [10, 20, 30]);
  await q.drain();
  assert.equal(done, 100);
});
