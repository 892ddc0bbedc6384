// The scan.progress reporter (docs/scanning.md, "Progress"): one report in flight, the newest
// counts next (never a queue), a failed send does not stop the next, nothing after close.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScanProgressParams } from '@boxhub/protocol';
import { ScanProgressReporter } from '../src/jobs/scan-progress.ts';

const p = (pages: number): ScanProgressParams => ({ task: 't', pages, skipped: 0, at: pages });

test('one in flight, the newest next: five pages while the first is on its way cost two sends', async () => {
  const sent: number[] = [];
  const answers: Array<() => void> = [];
  const r = new ScanProgressReporter((x) => { sent.push(x.pages); return new Promise<void>((resolve) => answers.push(resolve)); });
  for (let i = 1; i <= 5; i++) r.report(p(i));
  assert.deepEqual(sent, [1]);
  answers.shift()!();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(sent, [1, 5], 'pages 2-4 were overtaken by 5');
  answers.shift()!();
  await r.flushed();
  assert.deepEqual(sent, [1, 5]);
});

test('a failed send (offline, no reply) does not stop the next; after close nothing is sent', async () => {
  const sent: number[] = [];
  const r = new ScanProgressReporter(async (x) => { sent.push(x.pages); if (x.pages === 1) throw new Error('no reply to scan.progress within 5000 ms'); });
  r.report(p(1));
  await r.flushed();
  r.report(p(2));
  await r.flushed();
  r.close();
  r.report(p(3));
  await r.flushed();
  assert.deepEqual(sent, [1, 2]);
});
