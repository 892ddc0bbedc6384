// How an area is sampled (area-sampler.ts): each sample averages a square of pixels about as
// wide as the 0.15 mm step, so that the grain a sample sees does not depend on the resolution.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GreyImage } from './grey-image.ts';
import { solveHomography } from './homography.ts';
import type { PaperMap } from './paper-map.ts';
import { sampleArea, sampleBox } from './area-sampler.ts';

/** Paper at 230 with an ellipse 7 × 4.4 mm at (15, 15) mm filled with grain: each pixel 150 ± 40 at random. */
function grainy(dpi: number): { img: GreyImage; pxmm: number } {
  const pxmm = dpi / 25.4;
  const n = Math.round(30 * pxmm);
  const data = new Uint8Array(n * n).fill(230);
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      const u = (x + 0.5) / pxmm - 15,
        v = (y + 0.5) / pxmm - 15;
      if ((u / 3.5) ** 2 + (v / 2.2) ** 2 <= 1) data[y * n + x] = rnd() < 0.5 ? 110 : 190;
    }
  return { img: { data, width: n, height: n }, pxmm };
}

function sampled(dpi: number) {
  const { img, pxmm } = grainy(dpi);
  const n = img.width;
  const h = solveHomography(
    [
      { x: 0, y: 0 },
      { x: 30, y: 0 },
      { x: 0, y: 30 },
      { x: 30, y: 30 },
    ],
    [
      { x: 0, y: 0 },
      { x: n, y: 0 },
      { x: 0, y: n },
      { x: n, y: n },
    ],
  )!;
  const paper: PaperMap = { level: () => 230 };
  return sampleArea(img, h, paper, 20, new Uint8Array(n), 15, 15, 7, 4.4, pxmm);
}

test('a sample averages about 0.15 mm of paper at every resolution: one pixel at 150 and 200 dpi, 2 × 2 at 300, 3 × 3 at 600', () => {
  assert.equal(sampleBox(Math.max(25.4 / 150, 0.15), 150 / 25.4), 1);
  assert.equal(sampleBox(0.15, 200 / 25.4), 1);
  assert.equal(sampleBox(0.15, 300 / 25.4), 2);
  assert.equal(sampleBox(0.15, 600 / 25.4), 3);
});

test("pixel-sized grain reaches a 300-dpi area's samples no more than a 150-dpi one's", () => {
  // Grain of single pixels (a pencil's, the scanner's noise): at 150 dpi a pixel is 0.17 mm,
  // about the step, and each sample is one. At 300 dpi a pixel is 0.085 mm; one pixel per sample
  // gave the samples the grain's full spread (the seventh round: pencil's grain measured 2.4
  // times as spread at 300 dpi as at 150 dpi on generator C's clean pages).
  const low = sampled(150),
    high = sampled(300);
  // The mean is the same (80 of 210 darker on average: 0.381).
  assert.ok(Math.abs(low.mean - 0.381) < 0.02 && Math.abs(high.mean - 0.381) < 0.02, `${low.mean} ${high.mean}`);
  assert.ok(low.sd > 0.15, `150 dpi sd ${low.sd}`);
  assert.ok(high.sd < 0.6 * low.sd, `300 dpi sd ${high.sd} against ${low.sd} at 150 dpi`);
});
