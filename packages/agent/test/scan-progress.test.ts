// The scan.progress reporter (docs/scanning.md, "Progress"): one report in flight, at most one
// per interval, the newest counts next (never a queue), a failed send does not stop the next,
// nothing after close. The interval's waits are the test's (no timers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScanProgressParams } from '@boxhub/protocol';
import { ScanProgressReporter } from '../src/jobs/scan-progress.ts';

const p = (pages: number): ScanProgressParams => ({ task: 't', pages, skipped: 0, at: pages });
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('one in flight, the newest next: five pages while the first is on its way cost two sends', async () => {
  const sent: number[] = [];
  const answers: Array<() => void> = [];
  const r = new ScanProgressReporter({
    send: (x) => {
      sent.push(x.pages);
      return new Promise<void>((resolve) => answers.push(resolve));
    },
    minIntervalMs: 0,
  });
  for (let i = 1; i <= 5; i++) r.report(p(i));
  assert.deepEqual(sent, [1]);
  answers.shift()!();
  await turn();
  assert.deepEqual(sent, [1, 5], 'pages 2-4 were overtaken by 5');
  answers.shift()!();
  await r.flushed();
  assert.deepEqual(sent, [1, 5]);
});

test('at most one send per interval: the pages of a fast scanner in between go as one', async () => {
  let clock = 0;
  const waits: Array<{ ms: number; go: () => void }> = [];
  const sent: number[] = [];
  const r = new ScanProgressReporter({
    send: async (x) => {
      sent.push(x.pages);
    },
    minIntervalMs: 250,
    now: () => clock,
    wait: (ms) =>
      new Promise<void>((go) =>
        waits.push({
          ms,
          go: () => {
            clock += ms;
            go();
          },
        }),
      ),
  });
  r.report(p(1));
  await turn();
  assert.deepEqual(sent, [1], 'the first page goes at once');
  clock += 40;
  r.report(p(2));
  r.report(p(3));
  await turn();
  assert.deepEqual([sent, waits.map((w) => w.ms)], [[1], [210]], 'the next waits out the interval');
  waits.shift()!.go();
  await r.flushed();
  assert.deepEqual(sent, [1, 3]);
});

test('a failed send (offline, no reply) does not stop the next; after close nothing is sent', async () => {
  const sent: number[] = [];
  const r = new ScanProgressReporter({
    send: async (x) => {
      sent.push(x.pages);
      if (x.pages === 1) throw new Error('no reply to scan.progress within 5000 ms');
    },
    minIntervalMs: 0,
  });
  r.report(p(1));
  await r.flushed();
  r.report(p(2));
  await r.flushed();
  r.close();
  r.report(p(3));
  await r.flushed();
  assert.deepEqual(sent, [1, 2]);
});
