// loop-budget.ts: background work stops after BACKGROUND_TURN_MS of a turn of the event loop and
// goes on in a later one, so whatever else is ready (a request) is taken in between.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { laterTurn, paceMessages } from './loop-budget.ts';

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

test('pieces started with laterTurn stop for the turn once it has spent the budget', async () => {
  let ran = 0;
  const all = Array.from(
    { length: 40 },
    () =>
      new Promise<void>((resolve) =>
        laterTurn(() => {
          busy(1);
          ran++;
          resolve();
        }),
      ),
  );
  // Queued after the drain's own immediate: it runs when the drain has let the loop go on.
  const seen = await new Promise<number>((r) => setImmediate(() => setImmediate(() => r(ran))));
  assert.ok(seen > 0 && seen < 40, `${seen} of 40 ran before the loop turned`);
  await Promise.all(all);
  assert.equal(ran, 40);
});

test('messages paced with paceMessages let the loop turn in the middle of a burst, and all are taken', async () => {
  let taken = 0;
  const done = new Promise<void>((resolve) => {
    // As mqtt.js does: the next packet only once handleMessage has called back.
    const next = () => {
      if (taken === 100) return resolve();
      busy(0.5);
      taken++;
      paceMessages(next);
    };
    next();
  });
  const seen = await new Promise<number>((r) => setImmediate(() => r(taken)));
  assert.ok(seen < 100, `${seen} of 100 taken before the loop turned`);
  await done;
  assert.equal(taken, 100);
});
