// The running maximum and minimum against their definition: each window scanned, cut at the edges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runningExtreme } from './running-extreme.ts';
import { mulberry32 } from './synthetic/random.ts';

function naive(src: Float32Array, w: number, h: number, r: number, max: boolean): Float32Array {
  const pick = max ? Math.max : Math.min;
  const tmp = new Float32Array(w * h),
    out = new Float32Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let m = max ? -Infinity : Infinity;
      for (let k = Math.max(0, x - r); k <= Math.min(w - 1, x + r); k++) m = pick(m, src[y * w + k]!);
      tmp[y * w + x] = m;
    }
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let m = max ? -Infinity : Infinity;
      for (let k = Math.max(0, y - r); k <= Math.min(h - 1, y + r); k++) m = pick(m, tmp[k * w + x]!);
      out[y * w + x] = m;
    }
  return out;
}

test('the running maximum and minimum equal each window scanned, for radii below and beyond the window', () => {
  const next = mulberry32(11);
  for (const [w, h] of [
    [1, 1],
    [7, 3],
    [40, 25],
  ] as const) {
    const src = Float32Array.from({ length: w * h }, () => Math.round(next() * 255) / 255);
    for (const r of [0, 1, 5, 12, 60])
      for (const max of [true, false])
        assert.deepEqual(
          runningExtreme(src, w, h, r, max),
          naive(src, w, h, r, max),
          `${w}×${h}, r ${r}, ${max ? 'max' : 'min'}`,
        );
  }
});
