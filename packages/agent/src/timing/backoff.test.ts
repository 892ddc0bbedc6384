import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from './backoff.ts';

test('delays grow exponentially up to the cap, spread by full jitter', () => {
  const top = new Backoff({ baseMs: 1000, maxMs: 60_000, random: () => 0.999999 });
  assert.deepEqual(
    Array.from({ length: 8 }, () => top.next()),
    [999, 1999, 3999, 7999, 15999, 31999, 59999, 59999],
  );
  const bottom = new Backoff({ baseMs: 1000, maxMs: 60_000, random: () => 0 });
  assert.equal(bottom.next(), 100, 'never less than 100 ms');
  const mid = new Backoff({ baseMs: 1000, maxMs: 60_000, random: () => 0.5 });
  assert.deepEqual([mid.next(), mid.next(), mid.next()], [500, 1000, 2000]);
});

test('reset after a successful connection starts again from the base', () => {
  const b = new Backoff({ baseMs: 200, maxMs: 5000, random: () => 0.999999 });
  b.next();
  b.next();
  b.next();
  assert.equal(b.attempts, 3);
  b.reset();
  assert.equal(b.next(), 199);
});

test('a success resets the delays only once the connection has stayed up the stable period', () => {
  let now = 0;
  const b = new Backoff({ baseMs: 1000, maxMs: 60_000, stableMs: 30_000, random: () => 0.999999, now: () => now });
  b.next();
  b.next();
  b.next();
  // Taken, then dropped after 29 s: the next delay goes on growing.
  b.succeeded();
  now += 29_999;
  assert.equal(b.attempts, 3);
  assert.equal(b.next(), 7999);
  // Taken, up for 30 s: the loss after it starts from the base again.
  b.succeeded();
  now += 30_000;
  assert.equal(b.attempts, 0);
  assert.equal(b.next(), 999);
  assert.equal(b.next(), 1999, 'and grows again from there');
});

test('stableMs 0 resets at once on success', () => {
  const b = new Backoff({ baseMs: 1000, maxMs: 60_000, stableMs: 0, random: () => 0.999999, now: () => 0 });
  b.next();
  b.next();
  b.succeeded();
  assert.equal(b.next(), 999);
});

test('a thousand boxes do not come back in lockstep', () => {
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const delays = Array.from({ length: 1000 }, () => new Backoff({ baseMs: 1000, maxMs: 60_000, random }).next());
  const buckets = new Set(delays.map((d) => Math.floor(d / 100)));
  assert.ok(buckets.size >= 9, `first retries spread over the window (${buckets.size} of 10 buckets)`);
});
