import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from './backoff.ts';

test('delays grow exponentially up to the cap, spread by full jitter', () => {
  const top = new Backoff({ baseMs: 1000, maxMs: 60_000, random: () => 0.999999 });
  assert.deepEqual(Array.from({ length: 8 }, () => top.next()), [999, 1999, 3999, 7999, 15999, 31999, 59999, 59999]);
  const bottom = new Backoff({ baseMs: 1000, maxMs: 60_000, random: () => 0 });
  assert.equal(bottom.next(), 100, 'never less than 100 ms');
  const mid = new Backoff({ baseMs: 1000, maxMs: 60_000, random: () => 0.5 });
  assert.deepEqual([mid.next(), mid.next(), mid.next()], [500, 1000, 2000]);
});

test('reset after a successful connection starts again from the base', () => {
  const b = new Backoff({ baseMs: 200, maxMs: 5000, random: () => 0.999999 });
  b.next(); b.next(); b.next();
  assert.equal(b.attempts, 3);
  b.reset();
  assert.equal(b.next(), 199);
});

test('a thousand boxes do not come back in lockstep', () => {
  let seed = 42;
  const random = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
  const delays = Array.from({ length: 1000 }, () => new Backoff({ baseMs: 1000, maxMs: 60_000, random }).next());
  const buckets = new Set(delays.map((d) => Math.floor(d / 100)));
  assert.ok(buckets.size >= 9, `first retries spread over the window (${buckets.size} of 10 buckets)`);
});
