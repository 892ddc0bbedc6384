// The embedded broker's accepted connections go to aedes a few per turn of the event loop
// (paced-handover.ts): what else the loop has to do gets a turn between them, nothing is
// reordered, and what still waits when the broker closes is dropped, not left open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PacedHandover } from './paced-handover.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a burst is handed over a slice per turn, in order, with other work between the slices', async () => {
  const taken: number[] = [];
  const seenByOtherWork: number[] = [];
  const h = new PacedHandover<number>(
    (n) => taken.push(n),
    () => assert.fail('nothing is dropped'),
    64,
  );
  for (let i = 0; i < 200; i++) h.push(i);
  assert.equal(taken.length, 0, 'nothing is handed over in the turn that accepted it');
  // Work that arrives while the burst is handed over: each of its turns sees one more slice.
  for (let turn = 0; turn < 4; turn++) {
    await nextTurn();
    seenByOtherWork.push(taken.length);
  }
  assert.deepEqual(seenByOtherWork, [64, 128, 192, 200]);
  assert.deepEqual(
    taken,
    Array.from({ length: 200 }, (_, i) => i),
  );
  assert.equal(h.waiting, 0);
  // A later lone connection is handed over in the next turn.
  h.push(200);
  await nextTurn();
  assert.equal(taken.at(-1), 200);
});

test('closing drops what still waits and every later arrival', async () => {
  const taken: string[] = [];
  const dropped: string[] = [];
  const h = new PacedHandover<string>(
    (s) => taken.push(s),
    (s) => dropped.push(s),
    2,
  );
  for (const s of ['a', 'b', 'c', 'd', 'e']) h.push(s);
  await nextTurn();
  assert.deepEqual(taken, ['a', 'b']);
  h.close();
  assert.deepEqual(dropped, ['c', 'd', 'e']);
  h.push('f');
  assert.deepEqual(dropped, ['c', 'd', 'e', 'f']);
  await nextTurn();
  await nextTurn();
  assert.deepEqual(taken, ['a', 'b'], 'nothing is handed over after the close');
});
