// Measures one fillable area through the page homography, without warping the page: the
// inner part of the printed ellipse (its outline excluded) is sampled on a grid in
// millimetres mapped by the local Jacobian.
import type { GreyImage } from './grey-image.ts';
import { apply, jacobian, type Homography } from './homography.ts';
import type { PaperMap } from './paper-map.ts';

/** Darkness of a pixel: 0 = paper, 1 = the fiducials' black. */
export interface AreaFeatures {
  /** Mean darkness. */
  mean: number;
  median: number;
  /** Darkness of the darkest tenth. */
  q90: number;
  /** Fraction of samples at least 40 % dark. */
  ink: number;
}

/** Fraction of the ellipse's radii that is sampled; the rest is left to the outline and misregistration. */
export const INNER = 0.7;
const BINS = 64;

export function sampleArea(img: GreyImage, h: Homography, paper: PaperMap, black: number, streaks: Uint8Array, cx: number, cy: number, w: number, hh: number, pxmm: number): AreaFeatures {
  const rx = (w / 2) * INNER, ry = (hh / 2) * INNER;
  const c = apply(h, cx, cy);
  const [a, b, d, e] = jacobian(h, cx, cy);
  const p = paper.level(c.x, c.y);
  const range = Math.max(p - black, 20);
  // About 1 sample per pixel, but at most ~450 per area at high resolutions.
  const step = Math.max(1 / pxmm, Math.sqrt((Math.PI * rx * ry) / 450));
  const hist = new Uint32Array(BINS);
  let n = 0, sum = 0, ink = 0;
  const W = img.width, H = img.height, data = img.data;
  for (let dy = -ry + step / 2; dy < ry; dy += step) {
    const span = rx * Math.sqrt(Math.max(0, 1 - (dy * dy) / (ry * ry)));
    for (let dx = -span + step / 2; dx < span; dx += step) {
      const x = Math.round(c.x + a * dx + b * dy - 0.5), y = Math.round(c.y + d * dx + e * dy - 0.5);
      if (x < 0 || y < 0 || x >= W || y >= H || streaks[x] === 1) continue;
      let k = (p - data[y * W + x]!) / range;
      if (k < 0) k = 0; else if (k > 1) k = 1;
      sum += k; n++;
      if (k >= 0.4) ink++;
      hist[Math.min(BINS - 1, Math.floor(k * BINS))]!++;
    }
  }
  if (n === 0) return { mean: 0, median: 0, q90: 0, ink: 0 };
  const q = (f: number) => { let acc = 0; for (let i = 0; i < BINS; i++) { acc += hist[i]!; if (acc >= f * n) return (i + 0.5) / BINS; } return 1; };
  return { mean: sum / n, median: q(0.5), q90: q(0.9), ink: ink / n };
}

/** Mean darkness of a small square (the identification strip's cells). */
export function sampleSquare(img: GreyImage, h: Homography, x0: number, y0: number, size: number, pxmm: number): number {
  const step = Math.max(1 / pxmm, size / 6);
  let sum = 0, n = 0;
  for (let y = y0 + step / 2; y < y0 + size; y += step) for (let x = x0 + step / 2; x < x0 + size; x += step) {
    const q = apply(h, x, y);
    const ix = Math.round(q.x - 0.5), iy = Math.round(q.y - 0.5);
    if (ix < 0 || iy < 0 || ix >= img.width || iy >= img.height) continue;
    sum += img.data[iy * img.width + ix]!; n++;
  }
  return n === 0 ? 255 : sum / n;
}
