// A corner mark cut by the image's border (docs/cards.md, section 5, step 2). A page enlarged
// by up to 5 % and turned by up to 3°, as a copier or a skewed feed leaves it, can lose part of a
// corner mark past the edge of the image: on generator C's scratch pages of heavy skew and scale
// at 300 dpi (cards 36-47), 4 of 30 pages were refused with 1004 for it, although every area on
// them was plain to see. The part left still shows three of the square's sides: the two that run
// into the border give its size and direction, the one facing away from the border its place,
// and its centre lies half a side in from that one. No library finds a square's edges to a tenth
// of a pixel on a grey page, so the lines are fitted here.
import type { GreyImage } from './grey-image.ts';
import { FIDUCIAL_LARGE, FIDUCIAL_SMALL } from './page-frame.ts';

export interface CutMark {
  /** Centre of the whole square, image pixels (the centroid convention: pixel i spans [i, i + 1)). */
  x: number;
  y: number;
  /** Its side, mm. */
  side: number;
  black: number;
}

/**
 * Limits: the side measured across the cut must be a small or a large mark's (6 or 9 mm) within
 * the 95-105 % scale a page may have, with the edge's blur either way; the two sides running into
 * the border parallel and square to the third within 2° (a square turned, or sheared by up to 1°,
 * stays within); at least `minShown` of the side left in the image, so that the sides running
 * into the border are long enough to fit.
 */
export const CUT_MARK = { sideMin: 0.9, sideMax: 1.12, skew: 0.035, minShown: 0.3 } as const;

type Border = 'left' | 'right' | 'top' | 'bottom';

interface Line {
  /** v = a + b·u (or u = a + b·v for the side facing away from the border). */
  a: number;
  b: number;
}

/** Least squares, once more without the points more than a pixel off the first fit. */
function fit(pts: ReadonlyArray<readonly [number, number]>): Line | null {
  const once = (p: ReadonlyArray<readonly [number, number]>): Line | null => {
    if (p.length < 5) return null;
    let su = 0,
      sv = 0,
      suu = 0,
      suv = 0;
    for (const [u, v] of p) {
      su += u;
      sv += v;
      suu += u * u;
      suv += u * v;
    }
    const n = p.length,
      den = n * suu - su * su;
    if (den === 0) return null;
    const b = (n * suv - su * sv) / den;
    return { a: (sv - b * su) / n, b };
  };
  const first = once(pts);
  if (!first) return null;
  return once(pts.filter(([u, v]) => Math.abs(v - (first.a + first.b * u)) <= 1));
}

/**
 * The whole square of which a dark region touching the image's border is a part, or null when
 * that region is not a square cut by one border. `box`: where the corner search saw the region
 * (image pixels); `pxmm`: the page's scale.
 */
export function cutMark(
  img: GreyImage,
  box: { x0: number; y0: number; x1: number; y1: number },
  pxmm: number,
): CutMark | null {
  const W = img.width,
    H = img.height;
  const x0 = Math.max(0, Math.floor(box.x0 - pxmm)),
    x1 = Math.min(W, Math.ceil(box.x1 + pxmm));
  const y0 = Math.max(0, Math.floor(box.y0 - pxmm)),
    y1 = Math.min(H, Math.ceil(box.y1 + pxmm));
  const w = x1 - x0,
    h = y1 - y0;
  if (w < 3 || h < 3) return null;
  const hist = new Uint32Array(256);
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) hist[img.data[y * W + x]!]!++;
  const pct = (q: number) => {
    let acc = 0;
    for (let v = 0; v < 256; v++) {
      acc += hist[v]!;
      if (acc >= q * w * h) return v;
    }
    return 255;
  };
  const black = pct(0.05),
    paper = pct(0.95);
  const thr = (black + paper) / 2;
  if (paper - black < 30) return null;
  const grey = (x: number, y: number) => img.data[y * W + x]!;
  // The region: dark pixels connected to the darkest one near the box's centre.
  const cx = Math.round((box.x0 + box.x1) / 2),
    cy = Math.round((box.y0 + box.y1) / 2);
  let seed = -1,
    best = 256;
  const r = Math.max(1, Math.round(pxmm));
  for (let y = Math.max(y0, cy - r); y < Math.min(y1, cy + r); y++)
    for (let x = Math.max(x0, cx - r); x < Math.min(x1, cx + r); x++)
      if (grey(x, y) < best) {
        best = grey(x, y);
        seed = (y - y0) * w + (x - x0);
      }
  if (seed < 0 || best >= thr) return null;
  const mask = new Uint8Array(w * h);
  const stack = [seed];
  mask[seed] = 1;
  const touches = new Set<Border>();
  while (stack.length > 0) {
    const k = stack.pop()!;
    const x = k % w,
      y = (k - x) / w;
    if (x0 + x === 0) touches.add('left');
    if (x0 + x === W - 1) touches.add('right');
    if (y0 + y === 0) touches.add('top');
    if (y0 + y === H - 1) touches.add('bottom');
    // A region reaching the window's own edge (not the image's) is no mark: too large.
    if ((x === 0 && x0 > 0) || (x === w - 1 && x1 < W) || (y === 0 && y0 > 0) || (y === h - 1 && y1 < H)) return null;
    for (const kk of [x > 0 ? k - 1 : -1, x < w - 1 ? k + 1 : -1, y > 0 ? k - w : -1, y < h - 1 ? k + w : -1])
      if (kk >= 0 && !mask[kk] && grey(x0 + (kk % w), y0 + Math.floor(kk / w)) < thr) {
        mask[kk] = 1;
        stack.push(kk);
      }
  }
  if (touches.size !== 1) return null;
  const border = [...touches][0]!;
  // Work in (u, v): u across the border (0 at it), v along it; back to (x, y) at the end.
  const across = border === 'left' || border === 'right';
  const nu = across ? w : h,
    nv = across ? h : w;
  const flip = border === 'right' || border === 'bottom';
  const toX = (u: number, v: number) => (across ? (flip ? w - 1 - u : u) : v);
  const toY = (u: number, v: number) => (across ? v : flip ? h - 1 - u : u);
  const inMask = (u: number, v: number) =>
    u >= 0 && v >= 0 && u < nu && v < nv && mask[toY(u, v) * w + toX(u, v)] === 1;
  const g = (u: number, v: number) => grey(x0 + toX(u, v), y0 + toY(u, v));
  // Where the grey crosses the threshold between a dark pixel and the light one next to it
  // (positions of pixel centres, i + 0.5), along v or along u.
  const edge = (dark: number, light: number, gd: number, gl: number) =>
    dark + 0.5 + (light - dark) * Math.min(1, Math.max(0, (thr - gd) / (gl - gd || 1)));
  // How far the region reaches from the border.
  let far = -1;
  for (let u = 0; u < nu; u++) for (let v = 0; v < nv; v++) if (inMask(u, v)) far = Math.max(far, u);
  if (far < 4) return null;
  // The two sides running into the border, from the columns between it and the far side (their
  // ends left out: the border's pixel and the square's rounded corners).
  const top: Array<[number, number]> = [],
    bottom: Array<[number, number]> = [];
  const uEnd = far - Math.max(2, Math.round(0.1 * far));
  for (let u = 1; u <= uEnd; u++) {
    let lo = -1,
      hi = -1;
    for (let v = 0; v < nv; v++)
      if (inMask(u, v)) {
        if (lo < 0) lo = v;
        hi = v;
      }
    if (lo <= 0 || hi < 0 || hi >= nv - 1) continue;
    top.push([u + 0.5, edge(lo, lo - 1, g(u, lo), g(u, lo - 1))]);
    bottom.push([u + 0.5, edge(hi, hi + 1, g(u, hi), g(u, hi + 1))]);
  }
  const t = fit(top),
    b = fit(bottom);
  if (!t || !b || Math.abs(t.b - b.b) > CUT_MARK.skew) return null;
  const slope = (t.b + b.b) / 2;
  const sidePx = (b.a - t.a) / Math.sqrt(1 + slope * slope);
  const sideMm = sidePx / pxmm;
  const nominal =
    Math.abs(sideMm - FIDUCIAL_SMALL) < Math.abs(sideMm - FIDUCIAL_LARGE) ? FIDUCIAL_SMALL : FIDUCIAL_LARGE;
  if (sideMm < nominal * CUT_MARK.sideMin || sideMm > nominal * CUT_MARK.sideMax) return null;
  // The side facing away from the border, from the rows between the two (their ends left out).
  const mid = (t.a + b.a) / 2;
  const facing: Array<[number, number]> = [];
  for (let v = Math.ceil(t.a + t.b * far + 0.2 * sidePx); v <= Math.floor(b.a + b.b * far - 0.2 * sidePx); v++) {
    if (v < 0 || v >= nv) continue;
    let end = -1;
    for (let u = 0; u < nu; u++) if (inMask(u, v)) end = u;
    if (end < 0 || end >= nu - 1) continue;
    facing.push([v + 0.5, edge(end, end + 1, g(end, v), g(end + 1, v))]);
  }
  const f = fit(facing);
  if (!f || Math.abs(f.b + slope) > CUT_MARK.skew) return null;
  // Where the facing side meets the line halfway between the other two: u = f.a + f.b·v, v = mid + slope·u.
  const uP = (f.a + f.b * mid) / (1 - f.b * slope),
    vP = mid + slope * uP;
  const shown = uP / Math.sqrt(1 + f.b * f.b);
  if (shown < CUT_MARK.minShown * sidePx || shown > 1.05 * sidePx) return null;
  // Half a side back towards the border, square to the facing side.
  const n = Math.sqrt(1 + f.b * f.b);
  const uC = uP - sidePx / 2 / n,
    vC = vP + ((sidePx / 2) * f.b) / n;
  // Back to image pixels (the centroid convention: a pixel centre is i + 0.5).
  const ix = across ? (flip ? w - uC : uC) : vC,
    iy = across ? vC : flip ? h - uC : uC;
  return { x: x0 + ix, y: y0 + iy, side: sideMm, black };
}
