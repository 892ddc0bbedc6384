// Ink hidden under an ADF streak (docs/cards.md, section 5, step 5). A streak's columns are
// left out of every area's samples (streaks.ts), so a mark lying wholly on them is not seen:
// on C's tuning pages of heavy streaks at 150 dpi three streaks side by side covered 2.5 mm of
// an area and a small dot on them, which read empty (section 8, "Generator C, eleventh round").
// Those columns still carry the page darkened by a measured factor (`Streaks.gain`, as a code is
// read through a streak): taken back out, what is clearly dark there keeps the area from being
// called empty. It does not make a fill: the correction is too rough for that.
import type { AreaSample } from './area-sampler.ts';
import type { GreyImage } from './grey-image.ts';
import type { Streaks } from './streaks.ts';

export const STREAK_INK = {
  /** Darkness (share of paper to black) of a streak pixel with the streak taken out that counts as ink: a mark, not the correction's error. */
  dark: 0.35,
  /** Ink under streaks from this many mm² keeps an area from being empty (B's smallest dots are 1.4 mm² and more). */
  minArea: 0.3,
} as const;

/** The mm² of ink on an area's streak columns inside its sampled ellipse, the streaks taken out (0 where none runs through it). */
export function inkUnderStreaks(img: GreyImage, s: AreaSample, streaks: Streaks, pxmm: number): number {
  if (!s.place || s.paper === undefined || s.range === undefined) return 0;
  const [cx, cy, a, b, d, e, rx, ry] = s.place;
  const det = a * e - b * d;
  if (det === 0) return 0;
  // The ellipse's bounding box in the image: half-widths |J·(rx, 0)| and |J·(0, ry)| per axis.
  const hx = Math.ceil(Math.hypot(a * rx, b * ry)) + 1,
    hy = Math.ceil(Math.hypot(d * rx, e * ry)) + 1;
  const x0 = Math.max(0, Math.floor(cx - hx)),
    x1 = Math.min(img.width - 1, Math.ceil(cx + hx)),
    y0 = Math.max(0, Math.floor(cy - hy)),
    y1 = Math.min(img.height - 1, Math.ceil(cy + hy));
  let n = 0;
  for (let x = x0; x <= x1; x++) {
    if (streaks.mask[x] !== 1) continue;
    const g = streaks.gain[x]!;
    for (let y = y0; y <= y1; y++) {
      // The pixel's place in the area's millimetres (the Jacobian inverted).
      const px = x + 0.5 - cx,
        py = y + 0.5 - cy;
      const u = (e * px - b * py) / det,
        v = (a * py - d * px) / det;
      if ((u * u) / (rx * rx) + (v * v) / (ry * ry) > 1) continue;
      const k = (s.paper - img.data[y * img.width + x]! / g) / s.range;
      if (k >= STREAK_INK.dark) n++;
    }
  }
  return n / (pxmm * pxmm);
}

/** Whether an area shows ink under a streak (`inkUnderStreaks`) from `STREAK_INK.minArea`. */
export const inkHidden = (img: GreyImage, s: AreaSample, streaks: Streaks, pxmm: number): boolean =>
  inkUnderStreaks(img, s, streaks, pxmm) >= STREAK_INK.minArea;
