// Measures one fillable area through the page homography, without warping the page: a grid in
// the area's own millimetres over the inner 80 % of the printed ellipse (its outline and
// misregistration left out), mapped by the local Jacobian, plus the printed outline itself.
import type { GreyImage } from './grey-image.ts';
import { apply, jacobian, type Homography } from './homography.ts';
import type { PaperMap } from './paper-map.ts';
import type { LocalPaper } from './local-paper.ts';

/**
 * Darkness samples of one area: 0 = the paper right around it, 1 = the fiducials' black. Not
 * clamped, so that noise averages out instead of piling up above 0.
 */
export interface AreaSample {
  /** Row-major cols × rows grid, `step` mm apart; NaN outside the sampled ellipse or on an ADF streak. */
  grid: Float32Array;
  cols: number;
  rows: number;
  step: number;
  /** 1 where a grid cell lies in the inner 70 % of the ellipse (the part a fill always covers). */
  inner: Uint8Array;
  /** Mean and standard deviation of the inner cells. */
  mean: number;
  sd: number;
  /** Darkness of the printed outline: per direction the darkest point across it, median of 24 directions. */
  outline: number;
  /** The grey levels the samples were measured against: the paper around the area and the range from it to black (darkness = (paper - grey) / range). */
  paper?: number;
  range?: number;
  /**
   * Where the grid lies in the image: the area's centre (pixels), the homography's Jacobian there
   * (pixels per mm) and the sampled ellipse's radii (mm). Cell (i, j) lies at u = -rx + (i + ½)·2rx/cols,
   * v = -ry + (j + ½)·2ry/rows mm from the centre (`cellInImage`).
   */
  place?: readonly [cx: number, cy: number, a: number, b: number, d: number, e: number, rx: number, ry: number];
}

/** The image pixel (x, y, fractional) of a sample's grid cell `k`, or null without `place`. */
export function cellInImage(s: AreaSample, k: number): { x: number; y: number } | null {
  if (!s.place) return null;
  const [cx, cy, a, b, d, e, rx, ry] = s.place;
  const i = k % s.cols,
    j = (k - i) / s.cols;
  const u = -rx + (i + 0.5) * ((2 * rx) / s.cols),
    v = -ry + (j + 0.5) * ((2 * ry) / s.rows);
  return { x: cx + a * u + b * v, y: cy + d * u + e * v };
}

/** Fraction of the ellipse's radii over which the mean is taken. */
export const INNER = 0.7;

/**
 * Strokes are looked for out to this far from the centre: up to the printed outline, less half
 * its 0.3 mm width, 0.2 mm of registration error and the outline's blur halo (about 1.2 pixels).
 */
export function strokeRadius(r: number, pxmm: number): number {
  return Math.min(0.85 * r, Math.max(INNER * r, r - 0.35 - 1.2 / pxmm));
}

/**
 * The side, in pixels, of the square each sample averages: as near the step as whole pixels
 * allow (at most 3), so that a sample covers about 0.15 mm of paper at every resolution. It was
 * the step rounded down: one pixel (0.085 mm) at 300 dpi against 0.17 mm at 150 dpi, so that
 * pencil's grain and the scanner's noise reached single samples at 300 dpi at full strength
 * (docs/cards.md, section 8, "Generator C, seventh round").
 */
export function sampleBox(step: number, pxmm: number): number {
  return Math.max(1, Math.min(3, Math.round(step * pxmm)));
}

/**
 * `local`: on a page with bands, streaks or uneven light (page-quality.ts), the paper at each
 * sample from the ring just outside the area (local-paper.ts) instead of the 8 mm paper map.
 */
export function sampleArea(
  img: GreyImage,
  h: Homography,
  paper: PaperMap,
  black: number,
  streaks: Uint8Array,
  cx: number,
  cy: number,
  w: number,
  hh: number,
  pxmm: number,
  local?: LocalPaper | null,
): AreaSample {
  const rx = strokeRadius(w / 2, pxmm),
    ry = strokeRadius(hh / 2, pxmm);
  const c = apply(h, cx, cy);
  const [a, b, d, e] = jacobian(h, cx, cy);
  const p = local ? local(0, 0) : paper.level(c.x, c.y);
  const range = Math.max(p - black, 20);
  // About one sample per pixel, never closer than 0.15 mm (a 0.3 mm stroke still spans two);
  // where a step covers several pixels, their mean (noise averages, strokes stay).
  const step = Math.max(1 / pxmm, 0.15);
  const box = sampleBox(step, pxmm);
  const cols = Math.max(1, Math.round((2 * rx) / step)),
    rows = Math.max(1, Math.round((2 * ry) / step));
  const grid = new Float32Array(cols * rows).fill(NaN);
  const inner = new Uint8Array(cols * rows);
  const W = img.width,
    H = img.height,
    data = img.data;
  const irx = (w / 2) * INNER,
    iry = (hh / 2) * INNER;
  let n = 0,
    sum = 0,
    sum2 = 0;
  for (let j = 0; j < rows; j++) {
    const v = -ry + (j + 0.5) * ((2 * ry) / rows);
    for (let i = 0; i < cols; i++) {
      const u = -rx + (i + 0.5) * ((2 * rx) / cols);
      const q = (u * u) / (rx * rx) + (v * v) / (ry * ry);
      if (q > 1) continue;
      const x = Math.round(c.x + a * u + b * v - 0.5 - (box - 1) / 2),
        y = Math.round(c.y + d * u + e * v - 0.5 - (box - 1) / 2);
      if (x < 0 || y < 0 || x + box > W || y + box > H) continue;
      let s = 0,
        m = 0;
      for (let yy = y; yy < y + box; yy++)
        for (let xx = x; xx < x + box; xx++)
          if (streaks[xx] !== 1) {
            s += data[yy * W + xx]!;
            m++;
          }
      if (m === 0) continue;
      const pl = local ? local(u, v) : p;
      const k = Math.max(-0.5, Math.min(1.2, (pl - s / m) / (local ? Math.max(pl - black, 20) : range)));
      grid[j * cols + i] = k;
      if ((u * u) / (irx * irx) + (v * v) / (iry * iry) <= 1) {
        inner[j * cols + i] = 1;
        n++;
        sum += k;
        sum2 += k * k;
      }
    }
  }
  const mean = n > 0 ? sum / n : 0;
  const sd = n > 1 ? Math.sqrt(Math.max(0, sum2 / n - mean * mean)) : 0;
  return {
    grid,
    cols,
    rows,
    step: (2 * rx) / cols,
    inner,
    mean,
    sd,
    outline: outlineDarkness(img, c, a, b, d, e, w / 2, hh / 2, p, range),
    paper: p,
    range,
    place: [c.x, c.y, a, b, d, e, rx, ry],
  };
}

/** Bilinear grey value; the outline is thinner than a pixel at 100 dpi, so nearest would jitter. */
function bilinear(img: GreyImage, x: number, y: number): number {
  const fx = x - 0.5,
    fy = y - 0.5;
  const x0 = Math.floor(fx),
    y0 = Math.floor(fy);
  if (x0 < 0 || y0 < 0 || x0 + 1 >= img.width || y0 + 1 >= img.height) return NaN;
  const ax = fx - x0,
    ay = fy - y0,
    k = y0 * img.width + x0,
    D = img.data;
  return (
    (D[k]! * (1 - ax) + D[k + 1]! * ax) * (1 - ay) + (D[k + img.width]! * (1 - ax) + D[k + img.width + 1]! * ax) * ay
  );
}

const DIRECTIONS = Array.from(
  { length: 24 },
  (_, t) => [Math.cos((t / 24) * Math.PI * 2), Math.sin((t / 24) * Math.PI * 2)] as const,
);

function outlineDarkness(
  img: GreyImage,
  c: { x: number; y: number },
  a: number,
  b: number,
  d: number,
  e: number,
  rx: number,
  ry: number,
  paper: number,
  range: number,
): number {
  const peaks: number[] = [];
  for (const [ct, st] of DIRECTIONS) {
    let peak = -Infinity;
    for (let r = 0.84; r <= 1.161; r += 0.04) {
      const u = r * rx * ct,
        v = r * ry * st;
      const g = bilinear(img, c.x + a * u + b * v, c.y + d * u + e * v);
      if (!Number.isNaN(g)) peak = Math.max(peak, (paper - g) / range);
    }
    if (peak > -Infinity) peaks.push(peak);
  }
  if (peaks.length === 0) return 0;
  peaks.sort((x, y) => x - y);
  return peaks[Math.floor(peaks.length / 2)]!;
}

/** Mean darkness of a small square (the identification strip's cells). */
export function sampleSquare(
  img: GreyImage,
  h: Homography,
  x0: number,
  y0: number,
  size: number,
  pxmm: number,
): number {
  const step = Math.max(1 / pxmm, size / 6);
  let sum = 0,
    n = 0;
  for (let y = y0 + step / 2; y < y0 + size; y += step)
    for (let x = x0 + step / 2; x < x0 + size; x += step) {
      const q = apply(h, x, y);
      const ix = Math.round(q.x - 0.5),
        iy = Math.round(q.y - 0.5);
      if (ix < 0 || iy < 0 || ix >= img.width || iy >= img.height) continue;
      sum += img.data[iy * img.width + ix]!;
      n++;
    }
  return n === 0 ? 255 : sum / n;
}
