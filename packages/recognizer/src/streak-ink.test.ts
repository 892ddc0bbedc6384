// Ink under an ADF streak (streak-ink.ts): a dot lying wholly on a streak's columns is not in the
// area's samples, but taken back out of the streak's darkening it is there; the streak alone is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleArea } from './area-sampler.ts';
import type { GreyImage } from './grey-image.ts';
import { solveHomography } from './homography.ts';
import { findStreaks } from './streaks.ts';
import { inkUnderStreaks, STREAK_INK } from './streak-ink.ts';

const PXMM = 150 / 25.4;
/** The first streak's first column (at 31.5 mm). */
const S = Math.round(31.5 * PXMM);

/**
 * 60 mm of page at 150 dpi, paper 230: two ADF streaks five pixels wide one pixel apart (their
 * columns at 0.4 of the light) from top to bottom, through an area 7 × 4.4 mm printed at
 * (30, 30) mm, and `dot` (a disc 1.5 mm across between them, grey 60 before the streaks) or not:
 * as on C's heavy streaks at 150 dpi.
 */
function scan(dot: boolean): { img: GreyImage; h: ReturnType<typeof solveHomography> } {
  const n = Math.round(60 * PXMM);
  const data = new Uint8Array(n * n);
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      const u = (x + 0.5) / PXMM,
        v = (y + 0.5) / PXMM;
      const r = Math.hypot((u - 30) / 3.5, (v - 30) / 2.2);
      let g = Math.abs(r - 1) * Math.hypot(u - 30, v - 30) <= 0.15 * r ? 30 : 230;
      if (dot && Math.hypot(x + 0.5 - (S + 5.5), v - 30) <= 0.75 * PXMM) g = 60;
      if ((x >= S && x < S + 5) || (x >= S + 6 && x < S + 11)) g *= 0.4;
      data[y * n + x] = Math.round(g);
    }
  const corners = [
    { x: 0, y: 0 },
    { x: 60, y: 0 },
    { x: 0, y: 60 },
    { x: 60, y: 60 },
  ];
  return {
    img: { data, width: n, height: n },
    h: solveHomography(
      corners,
      corners.map((c) => ({ x: c.x * PXMM, y: c.y * PXMM })),
    ),
  };
}

test('a dot wholly on a streak is not in the samples but is ink under the streak; the streak alone is not', () => {
  for (const dot of [true, false]) {
    const { img, h } = scan(dot);
    const streaks = findStreaks(img);
    for (let x = S; x < S + 11; x++) assert.equal(streaks.mask[x], 1, `column ${x - S} of the streaks`);
    const s = sampleArea(img, h!, { level: () => 230 }, 20, streaks.mask, 30, 30, 7, 4.4, PXMM);
    // The samples see bare paper either way: the dot's columns are left out.
    assert.ok(Math.abs(s.mean) < 0.02, `mean ${s.mean}`);
    const ink = inkUnderStreaks(img, s, streaks, PXMM);
    if (dot) assert.ok(ink >= STREAK_INK.minArea, `the dot: ${ink} mm²`);
    else assert.ok(ink < 0.05, `the streak alone: ${ink} mm²`);
  }
});
