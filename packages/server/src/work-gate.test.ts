// The node-wide bound on document and image work (work-gate.ts): slots, the request queue's
// depth, the longest wait (on the injected clock), and background work that always waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@boxhub/protocol';
import { WorkGate } from './work-gate.ts';
import { ManualClock } from './testing/manual-clock.ts';

function gated() {
  const releases: Array<() => void> = [];
  const work = () => new Promise<string>((ok) => releases.push(() => ok('done')));
  return { releases, work };
}
const flush = () => new Promise((r) => setImmediate(r));

test('slots run, the queue waits in order, one past the queue is refused with retry_after', async () => {
  const gate = new WorkGate(new ManualClock(0), { slots: 2, queue: 1, retryAfterS: 7 });
  const { releases, work } = gated();
  const a = gate.request('a', work);
  const b = gate.request('b', work);
  const c = gate.request('c', work);
  await flush();
  assert.equal(gate.active, 2);
  assert.equal(gate.queued, 1);
  await assert.rejects(
    gate.request('d', work),
    (e: unknown) =>
      e instanceof ApiError && e.key === 'SERVER_BUSY' && (e.data as { retry_after: number }).retry_after === 7,
  );
  // Background work queues past the depth.
  const bg = gate.background(work);
  await flush();
  assert.equal(gate.queued, 2);
  releases[0]!();
  assert.equal(await a, 'done');
  await flush();
  assert.equal(releases.length, 3, 'c took the freed slot, first in line');
  releases[1]!();
  releases[2]!();
  assert.deepEqual(await Promise.all([b, c]), ['done', 'done']);
  await flush();
  releases[3]!();
  assert.equal(await bg, 'done');
  assert.equal(gate.active, 0);
  assert.equal(gate.peak, 2);
});

test('a request that waits longer than maxWaitMs is refused, and its place is given up', async () => {
  const clock = new ManualClock(0);
  const gate = new WorkGate(clock, { slots: 1, queue: 4, maxWaitMs: 30_000 });
  const { releases, work } = gated();
  const a = gate.request('a', work);
  const b = assert.rejects(gate.request('b', work), /no slot came free within 30 s/);
  await flush();
  await clock.advance(29_999);
  assert.equal(gate.queued, 1);
  await clock.advance(1);
  await b;
  assert.equal(gate.queued, 0);
  releases[0]!();
  await a;
  assert.equal(gate.active, 0);
  // A failing piece of work gives its slot back too.
  await assert.rejects(
    gate.request('e', async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(gate.active, 0);
});

test('a lease holds its slot across steps until released (once); a waiter with a shorter wait or whose client went away leaves the queue', async () => {
  const clock = new ManualClock(0);
  const gate = new WorkGate(clock, { slots: 1, queue: 4, maxWaitMs: 30_000 });
  const lease = await gate.acquire('a body');
  assert.equal(gate.active, 1);
  const short = assert.rejects(gate.acquire('another body', { maxWaitMs: 15_000 }), /no slot came free within 15 s/);
  const gone = new AbortController();
  const left = assert.rejects(
    gate.acquire('a third', { signal: gone.signal }),
    (e: unknown) => e instanceof ApiError && e.key === 'SERVER_BUSY',
  );
  await flush();
  assert.equal(gate.queued, 2);
  gone.abort();
  await left;
  assert.equal(gate.queued, 1);
  await clock.advance(15_000);
  await short;
  assert.equal(gate.queued, 0);
  const next = gate.acquire('next');
  await flush();
  lease.release();
  lease.release(); // a second release gives nothing back twice
  const l2 = await next;
  assert.equal(gate.active, 1);
  l2.release();
  assert.equal(gate.active, 0);
});
