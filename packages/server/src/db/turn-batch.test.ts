// TurnBatch (db/turn-batch.ts): what is added in one turn of the event loop is run together, at
// most `max` at a time; what is added while a batch runs goes into the next; a failed batch
// rejects its own callers only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TurnBatch } from './turn-batch.ts';

test('items added in one turn run together, in order, at most max at a time', async () => {
  const runs: number[][] = [];
  const b = new TurnBatch<number>(async (items) => {
    runs.push(items);
  }, 3);
  await Promise.all([1, 2, 3, 4, 5].map((n) => b.add(n)));
  assert.deepEqual(runs, [
    [1, 2, 3],
    [4, 5],
  ]);
});

test('an item added while a batch runs goes into the next batch, and its caller waits for that one', async () => {
  const runs: string[][] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const b = new TurnBatch<string>(async (items) => {
    runs.push(items);
    if (items.includes('a')) await held;
  });
  const first = b.add('a');
  await new Promise((r) => setImmediate(r)); // the first batch has started and waits
  assert.deepEqual(runs, [['a']]);
  const second = b.add('b');
  await second;
  assert.deepEqual(runs, [['a'], ['b']], 'the second ran without waiting for the first');
  release();
  await first;
});

test('a batch that throws rejects its callers; the next batch runs', async () => {
  const b = new TurnBatch<number>(async (items) => {
    if (items.includes(13)) throw new Error('unlucky');
  });
  const bad = Promise.all([b.add(12), b.add(13)]);
  await assert.rejects(bad, /unlucky/);
  await b.add(14);
});

test("a caller goes on when its own chunk has run, before the batch's later chunks", async () => {
  const runs: number[][] = [];
  const b = new TurnBatch<number>(async (items) => {
    runs.push(items);
  }, 2);
  const first = b.add(1);
  const rest = Promise.all([b.add(2), b.add(3)]);
  await first;
  assert.deepEqual(runs, [[1, 2]], 'the later chunk has not run yet');
  await rest;
  assert.deepEqual(runs, [[1, 2], [3]]);
});

test('the event loop gets a turn between chunks', async () => {
  const order: string[] = [];
  const b = new TurnBatch<number>(async (items) => {
    order.push(`chunk ${items.join(',')}`);
    if (items.includes(1)) setImmediate(() => order.push('another turn'));
  }, 2);
  await Promise.all([1, 2, 3].map((n) => b.add(n)));
  assert.deepEqual(order, ['chunk 1,2', 'another turn', 'chunk 3']);
});

test('a batch that returns one result per item hands each caller its own, across chunks', async () => {
  const b = new TurnBatch<number, string>(async (items) => items.map((n) => `#${n * 10}`), 2);
  assert.deepEqual(await Promise.all([1, 2, 3].map((n) => b.add(n))), ['#10', '#20', '#30']);
});
