// A made-up area for the recognizer's unit tests (no image): a 7 × 4.4 mm area at 200 dpi
// sampled as area-sampler.ts samples one, with the darkness a test paints plus noise.
import { INNER, strokeRadius, type AreaSample } from '../area-sampler.ts';
import type { PageLevels } from '../page-levels.ts';

export const W = 7,
  H = 4.4,
  PXMM = 7.87;
export const lv: PageLevels = { baseline: 0, noise: 0.02, spread: 0.004, line: 0.65, pxmm: PXMM };
export const rx = strokeRadius(W / 2, PXMM),
  ry = strokeRadius(H / 2, PXMM);

/** The area's samples: darkness `paint(u, v)` (mm from the centre) plus noise (seeded). */
export function area(paint: (u: number, v: number) => number, seed = 5): AreaSample {
  const step = 1 / PXMM;
  const cols = Math.round((2 * rx) / step),
    rows = Math.round((2 * ry) / step);
  const grid = new Float32Array(cols * rows).fill(NaN),
    inner = new Uint8Array(cols * rows);
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  let n = 0,
    sum = 0;
  for (let j = 0; j < rows; j++)
    for (let i = 0; i < cols; i++) {
      const u = -rx + (i + 0.5) * ((2 * rx) / cols),
        v = -ry + (j + 0.5) * ((2 * ry) / rows);
      if ((u * u) / (rx * rx) + (v * v) / (ry * ry) > 1) continue;
      const k = paint(u, v) + 0.02 * (rnd() + rnd() + rnd() + rnd() - 2) * Math.sqrt(3);
      grid[j * cols + i] = k;
      if ((u * u) / ((W / 2) * INNER) ** 2 + (v * v) / ((H / 2) * INNER) ** 2 <= 1) {
        inner[j * cols + i] = 1;
        n++;
        sum += k;
      }
    }
  return { grid, cols, rows, step: (2 * rx) / cols, inner, mean: sum / n, sd: 0.02, outline: 0.6 };
}
