// The sliding sorted window against its definition: the window's values sorted afresh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SortedWindow } from './sorted-window.ts';
import { mulberry32 } from './synthetic/random.ts';

test('a window sliding over a profile gives the quantile of its values sorted afresh, repeated values included', () => {
  const next = mulberry32(7);
  for (const half of [1, 3, 24]) {
    // Grey levels, so that values repeat, as a margin profile's do.
    const p = Array.from({ length: 300 }, () => Math.floor(next() * 12) + 240);
    const w = new SortedWindow(half);
    const held: number[] = [];
    for (let i = 0; i < p.length; i++) {
      w.add(p[i]!);
      held.push(p[i]!);
      if (held.length > half) w.remove(held.shift()!);
      const sorted = [...held].sort((a, b) => a - b);
      for (const q of [0, 0.5, 0.8])
        assert.equal(w.quantile(q), sorted[Math.floor(sorted.length * q)], `half ${half}, step ${i}, q ${q}`);
    }
  }
});

test('an empty window has no quantile', () => {
  const w = new SortedWindow(4);
  assert.ok(Number.isNaN(w.quantile(0.8)));
  w.add(3);
  w.remove(3);
  assert.ok(Number.isNaN(w.quantile(0.8)));
});
