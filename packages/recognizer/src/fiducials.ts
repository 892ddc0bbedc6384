// Finds the four corner fiducials: connected components on a ~50-dpi thumbnail inside each
// corner window (nothing else is printed there, page-frame.ts), then a sub-pixel centroid on
// the full image. The larger top-left square gives the orientation without any code.
import { cutMark } from './cut-mark.ts';
import { runningExtreme } from './running-extreme.ts';
import type { GreyImage } from './grey-image.ts';
import {
  CORNER_KEEP_OUT,
  CORNERS,
  FIDUCIAL_INSET,
  FIDUCIAL_LARGE,
  FIDUCIAL_SMALL,
  fiducialCentre,
  PAGE,
  type Corner,
} from './page-frame.ts';
import type { Pt } from './homography.ts';

export interface FoundFiducial {
  imageCorner: Corner;
  x: number;
  y: number;
  areaMm2: number;
  black: number;
}

interface Blob {
  area: number;
  sx: number;
  sy: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  touchesEdge: boolean;
}

/** Pixels per millimetre, assuming the scan covers the A4 page (true for flatbed and ADF). */
export function estimateScale(img: GreyImage): number {
  return Math.min(img.width / PAGE.width, img.height / PAGE.height);
}

function percentile(values: Uint8Array, lo: number, hi: number, step: number, q: number): number {
  const hist = new Uint32Array(256);
  let n = 0;
  for (let i = lo; i < hi; i += step) {
    hist[values[i]!]!++;
    n++;
  }
  let acc = 0;
  const target = q * n;
  for (let v = 0; v < 256; v++) {
    acc += hist[v]!;
    if (acc >= target) return v;
  }
  return 255;
}

function plainBlobs(t: GreyImage, wx0: number, wy0: number, wx1: number, wy1: number): Blob[] {
  const w = wx1 - wx0,
    h = wy1 - wy0;
  const win = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) win.set(t.data.subarray((wy0 + y) * t.width + wx0, (wy0 + y) * t.width + wx1), y * w);
  const paper = percentile(win, 0, win.length, 1, 0.9);
  const thr = paper * 0.5;
  return darkBlobs(w, h, wx0, wy0, (i) => win[i]! < thr);
}

/** The 4-connected dark regions of a w×h window whose top-left is (wx0, wy0) on the page, in
 *  page coordinates. Both corner-mark searches label their window this way. */
function darkBlobs(w: number, h: number, wx0: number, wy0: number, dark: (i: number) => boolean): Blob[] {
  const seen = new Uint8Array(w * h);
  const stack: number[] = [];
  const blobs: Blob[] = [];
  for (let i = 0; i < w * h; i++) {
    if (seen[i] || !dark(i)) continue;
    const b: Blob = { area: 0, sx: 0, sy: 0, x0: w, y0: h, x1: 0, y1: 0, touchesEdge: false };
    stack.push(i);
    seen[i] = 1;
    while (stack.length) {
      const j = stack.pop()!;
      const x = j % w,
        y = (j - x) / w;
      b.area++;
      b.sx += x;
      b.sy += y;
      if (x < b.x0) b.x0 = x;
      if (x > b.x1) b.x1 = x;
      if (y < b.y0) b.y0 = y;
      if (y > b.y1) b.y1 = y;
      if (x === 0 || y === 0 || x === w - 1 || y === h - 1) b.touchesEdge = true;
      if (x > 0) {
        const k = j - 1;
        if (!seen[k] && dark(k)) {
          seen[k] = 1;
          stack.push(k);
        }
      }
      if (x < w - 1) {
        const k = j + 1;
        if (!seen[k] && dark(k)) {
          seen[k] = 1;
          stack.push(k);
        }
      }
      if (y > 0) {
        const k = j - w;
        if (!seen[k] && dark(k)) {
          seen[k] = 1;
          stack.push(k);
        }
      }
      if (y < h - 1) {
        const k = j + w;
        if (!seen[k] && dark(k)) {
          seen[k] = 1;
          stack.push(k);
        }
      }
    }
    b.x0 += wx0;
    b.x1 += wx0;
    b.y0 += wy0;
    b.y1 += wy0;
    b.sx += b.area * wx0;
    b.sy += b.area * wy0;
    blobs.push(b);
  }
  return blobs;
}

/**
 * The first try (clean scans): centroid, area and black level on the full image around a thumbnail estimate: the dark pixels
 * connected to the square itself, so that the scanner's dark backing or anything else dark in
 * the window cannot pull the centre.
 */
function plainRefine(
  img: GreyImage,
  cx: number,
  cy: number,
  halfPx: number,
): { x: number; y: number; areaPx: number; black: number; widthPx: number; heightPx: number } {
  const x0 = Math.max(0, Math.floor(cx - halfPx)),
    x1 = Math.min(img.width, Math.ceil(cx + halfPx));
  const y0 = Math.max(0, Math.floor(cy - halfPx)),
    y1 = Math.min(img.height, Math.ceil(cy + halfPx));
  const w = x1 - x0,
    h = y1 - y0;
  if (w <= 0 || h <= 0) return { x: cx, y: cy, areaPx: 0, black: 0, widthPx: 0, heightPx: 0 };
  const hist = new Uint32Array(256);
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) hist[img.data[y * img.width + x]!]!++;
  const n = w * h;
  const pct = (q: number) => {
    let acc = 0;
    for (let v = 0; v < 256; v++) {
      acc += hist[v]!;
      if (acc >= q * n) return v;
    }
    return 255;
  };
  const black = pct(0.05),
    paper = pct(0.95);
  const thr = (black + paper) / 2;
  // Flood fill from the darkest pixel near the estimate.
  let seed = -1,
    best = 256;
  const r = Math.max(1, Math.round(halfPx / 4));
  for (let y = Math.max(y0, Math.round(cy) - r); y < Math.min(y1, Math.round(cy) + r); y++)
    for (let x = Math.max(x0, Math.round(cx) - r); x < Math.min(x1, Math.round(cx) + r); x++) {
      const v = img.data[y * img.width + x]!;
      if (v < best) {
        best = v;
        seed = (y - y0) * w + (x - x0);
      }
    }
  if (seed < 0 || best >= thr) return { x: cx, y: cy, areaPx: 0, black, widthPx: 0, heightPx: 0 };
  const seen = new Uint8Array(w * h);
  const stack = [seed];
  seen[seed] = 1;
  let sx = 0,
    sy = 0,
    c = 0,
    minX = w,
    maxX = -1,
    minY = h,
    maxY = -1;
  while (stack.length) {
    const k = stack.pop()!;
    const x = k % w,
      y = (k - x) / w;
    sx += x;
    sy += y;
    c++;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
    for (const kk of [x > 0 ? k - 1 : -1, x < w - 1 ? k + 1 : -1, y > 0 ? k - w : -1, y < h - 1 ? k + w : -1]) {
      if (kk < 0 || seen[kk]) continue;
      if (img.data[(y0 + Math.floor(kk / w)) * img.width + x0 + (kk % w)]! < thr) {
        seen[kk] = 1;
        stack.push(kk);
      }
    }
  }
  return {
    x: x0 + sx / c + 0.5,
    y: y0 + sy / c + 0.5,
    areaPx: c,
    black,
    widthPx: maxX - minX + 1,
    heightPx: maxY - minY + 1,
  };
}

/**
 * A corner window flat-fielded: the paper under everything smaller than a corner mark (a grey
 * closing: the running maximum, then the minimum, over ±`r` pixels), so that shadows, lighting
 * gradients and grey patches, whose edges are longer than a mark, are paper and the marks are
 * dark against the paper right around them.
 */
interface Flat {
  norm: Float32Array;
  bg: Float32Array;
  thr: number;
}

function flatField(
  t: GreyImage,
  wx0: number,
  wy0: number,
  w: number,
  h: number,
  r: number,
  skip: Uint8Array,
): Flat | null {
  const win = new Float32Array(w * h);
  // Columns on an ADF streak take the nearest clear column's grey (a streak through the
  // window would otherwise join the mark to the window's edge).
  const from = new Int32Array(w);
  for (let x = 0; x < w; x++) {
    let k = 0;
    while (k < w && skip[wx0 + x - k] && skip[wx0 + x + k]) k++;
    from[x] = !skip[wx0 + x] ? x : x - k >= 0 && !skip[wx0 + x - k] ? x - k : Math.min(w - 1, x + k);
  }
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) win[y * w + x] = t.data[(wy0 + y) * t.width + wx0 + from[x]!]!;
  const bg = runningExtreme(runningExtreme(win, w, h, r, true), w, h, r, false);
  const norm = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) norm[i] = win[i]! / Math.max(1, bg[i]!);
  // The darkest 1 % is the marks' black (a mark covers 3.5-8 % of the window); the threshold is
  // half way between it and the paper, and the marks must stand out from the paper by 15 % at
  // least (a person reads the page down to about that).
  const sorted = Float32Array.from(norm).sort();
  const darkest = sorted[Math.floor(0.01 * sorted.length)]!;
  if (darkest > 0.85) return null;
  return { norm, bg, thr: (1 + darkest) / 2 };
}

function blobsInWindow(
  t: GreyImage,
  wx0: number,
  wy0: number,
  wx1: number,
  wy1: number,
  tmm: number,
  skip: Uint8Array,
): { blobs: Blob[]; flat: Flat | null } {
  const w = wx1 - wx0,
    h = wy1 - wy0;
  const flat = flatField(t, wx0, wy0, w, h, Math.round(6 * tmm), skip);
  if (!flat) return { blobs: [], flat };
  // Dark against the local paper, then closed over 1 mm: a line where the toner ran short
  // across a mark does not cut it in two.
  const c = Math.max(1, Math.round(tmm * 0.5));
  const darkF = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) darkF[i] = flat.norm[i]! < flat.thr ? 1 : 0;
  const closed = runningExtreme(runningExtreme(darkF, w, h, c, true), w, h, c, false);
  const blobs = darkBlobs(w, h, wx0, wy0, (i) => closed[i]! > 0.5);
  return { blobs, flat };
}

/**
 * Centroid, area and black level on the full image inside the mark's box as the thumbnail saw
 * it (plus `marginPx`): pixels darker than the flat-fielded threshold against the local paper
 * (`paperAt`), filled across each column and then each row between its first and last dark
 * pixel (a square, rotated or not, is convex; a line where the toner ran short is bridged).
 * Nothing outside the box counts, so the scanner's dark backing cannot pull the centre.
 */
function refine(
  img: GreyImage,
  bx0: number,
  by0: number,
  bx1: number,
  by1: number,
  paperAt: (x: number, y: number) => number,
  thr: number,
  streaks: Uint8Array,
): { x: number; y: number; areaPx: number; black: number } {
  const x0 = Math.max(0, Math.floor(bx0)),
    x1 = Math.min(img.width, Math.ceil(bx1));
  const y0 = Math.max(0, Math.floor(by0)),
    y1 = Math.min(img.height, Math.ceil(by1));
  const w = x1 - x0,
    h = y1 - y0;
  if (w <= 0 || h <= 0) return { x: 0, y: 0, areaPx: 0, black: 0 };
  const hist = new Uint32Array(256);
  const mask = new Uint8Array(w * h);
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const v = img.data[y * img.width + x]!;
      hist[v]!++;
      if (v < paperAt(x, y) * thr && streaks[x] !== 1) mask[(y - y0) * w + (x - x0)] = 1;
    }
  let acc = 0,
    black = 0;
  for (let v = 0; v < 256; v++) {
    acc += hist[v]!;
    if (acc >= 0.05 * w * h) {
      black = v;
      break;
    }
  }
  const filled = new Uint8Array(w * h);
  for (let x = 0; x < w; x++) {
    let a = -1,
      b = -1;
    for (let y = 0; y < h; y++)
      if (mask[y * w + x]) {
        if (a < 0) a = y;
        b = y;
      }
    if (a >= 0) for (let y = a; y <= b; y++) filled[y * w + x] = 1;
  }
  let sx = 0,
    sy = 0,
    c = 0;
  for (let y = 0; y < h; y++) {
    let a = -1,
      b = -1;
    for (let x = 0; x < w; x++)
      if (filled[y * w + x]) {
        if (a < 0) a = x;
        b = x;
      }
    if (a >= 0)
      for (let x = a; x <= b; x++) {
        sx += x;
        sy += y;
        c++;
      }
  }
  if (c === 0) return { x: 0, y: 0, areaPx: 0, black };
  return { x: x0 + sx / c + 0.5, y: y0 + sy / c + 0.5, areaPx: c, black };
}

/** Area of a whole small or large square (±2 % print and scan scale, edge blur): 36 or 81 mm². */
function wholeSquare(areaMm2: number): boolean {
  const small = FIDUCIAL_SMALL ** 2,
    large = FIDUCIAL_LARGE ** 2;
  return (areaMm2 >= small * 0.86 && areaMm2 <= small * 1.16) || (areaMm2 >= large * 0.88 && areaMm2 <= large * 1.14);
}

/** The fiducial found in each image corner (absent where none qualifies). */
export function findFiducials(
  img: GreyImage,
  thumb: GreyImage,
  factor: number,
  streaks: Uint8Array = new Uint8Array(img.width),
): FoundFiducial[] {
  const pxmm = estimateScale(img);
  const tmm = pxmm / factor;
  const skip = new Uint8Array(thumb.width + 1);
  for (let x = 0; x < streaks.length; x++) if (streaks[x]) skip[Math.min(thumb.width, Math.floor(x / factor))] = 1;
  const win = Math.round(CORNER_KEEP_OUT * tmm);
  // The three searches in a square window of the thumbnail (top-left corner, side), nearest (ex, ey).
  const search = (wx0: number, wy0: number, side: number, ex: number, ey: number) =>
    plainFind(img, thumb, factor, tmm, pxmm, wx0, wy0, side, ex, ey) ??
    flatFind(img, thumb, factor, tmm, pxmm, wx0, wy0, side, ex, ey, skip, streaks) ??
    cutFind(img, thumb, factor, tmm, pxmm, wx0, wy0, side, ex, ey);
  const out: FoundFiducial[] = [];
  for (const corner of CORNERS) {
    const right = corner === 'tr' || corner === 'br';
    const bottom = corner === 'bl' || corner === 'br';
    const wx0 = right ? thumb.width - win : 0,
      wy0 = bottom ? thumb.height - win : 0;
    const ex = right ? thumb.width - FIDUCIAL_INSET * tmm : FIDUCIAL_INSET * tmm;
    const ey = bottom ? thumb.height - FIDUCIAL_INSET * tmm : FIDUCIAL_INSET * tmm;
    const found = search(wx0, wy0, win, ex, ey);
    if (!found) continue;
    out.push({ imageCorner: corner, ...found });
  }
  if (out.length !== 2) return out;
  // Two found: the page lies far from where the corner windows expect it (shrunk and moved by
  // the feed, a mark across the window's inner edge). The two place the others as a turned and
  // scaled page would (the marks' rectangle is the same upside down); each is looked for in a
  // window of ±`PREDICTED_REACH` mm around that place.
  for (const corner of CORNERS) {
    if (out.some((f) => f.imageCorner === corner)) continue;
    const p = predicted(out, corner, factor);
    const half = Math.round(PREDICTED_REACH * tmm),
      side = 2 * half;
    if (side > thumb.width || side > thumb.height) continue;
    const wx0 = Math.min(thumb.width - side, Math.max(0, Math.round(p.x) - half)),
      wy0 = Math.min(thumb.height - side, Math.max(0, Math.round(p.y) - half));
    const found = search(wx0, wy0, side, p.x, p.y);
    if (found) out.push({ imageCorner: corner, ...found });
  }
  return out;
}

/**
 * How far from its predicted place a mark is looked for: a page sheared by up to 1° puts it up
 * to 4.7 mm from where two marks place it (267 mm apart), and half a large mark is 4.5 mm; the
 * window stays within the 17 mm around every mark where nothing else is printed (the 32 mm
 * corner keep-out, page-frame.ts). On generator C's tuning pages of heavy skew and scale, a page
 * shrunk and moved by up to 10 mm put two of its marks across the corner windows' inner edges
 * (150 dpi, seeds 4 511 508 and 4 511 511; 200 dpi, seed 5 011 504; docs/cards.md, section 8,
 * "Generator C, twentieth round").
 */
const PREDICTED_REACH = 12;

/** Where a missing mark lies (thumbnail pixels), from two found ones and the marks' rectangle (a similarity: turn, scale, move). */
function predicted(two: readonly FoundFiducial[], corner: Corner, factor: number): Pt {
  const [a, b] = two as [FoundFiducial, FoundFiducial];
  const pa = fiducialCentre(a.imageCorner),
    pb = fiducialCentre(b.imageCorner),
    pc = fiducialCentre(corner);
  // As complex numbers: image = k · page + m, k = (ib - ia) / (pb - pa).
  const dx = pb.x - pa.x,
    dy = pb.y - pa.y,
    ix = (b.x - a.x) / factor,
    iy = (b.y - a.y) / factor;
  const d2 = dx * dx + dy * dy;
  const kr = (ix * dx + iy * dy) / d2,
    ki = (iy * dx - ix * dy) / d2;
  const ux = pc.x - pa.x,
    uy = pc.y - pa.y;
  return { x: a.x / factor + kr * ux - ki * uy, y: a.y / factor + ki * ux + kr * uy };
}

/** The square nearest the expected place among a window's blobs that have a corner mark's size and shape. */
function nearestSquare(blobs: Blob[], tmm: number, ex: number, ey: number): Blob | undefined {
  let best: Blob | undefined,
    bestD = Infinity;
  for (const b of blobs) {
    if (b.touchesEdge) continue;
    const bw = (b.x1 - b.x0 + 1) / tmm,
      bh = (b.y1 - b.y0 + 1) / tmm;
    if (
      bw < FIDUCIAL_SMALL * 0.6 ||
      bh < FIDUCIAL_SMALL * 0.6 ||
      bw > FIDUCIAL_LARGE * 1.45 ||
      bh > FIDUCIAL_LARGE * 1.45
    )
      continue;
    if (bw / bh > 1.4 || bh / bw > 1.4) continue;
    if (b.area / ((b.x1 - b.x0 + 1) * (b.y1 - b.y0 + 1)) < 0.6) continue;
    const d = Math.hypot(b.sx / b.area - ex, b.sy / b.area - ey);
    if (d < bestD) {
      bestD = d;
      best = b;
    }
  }
  return best;
}

type Found = Omit<FoundFiducial, 'imageCorner'>;

/** The first try, unchanged for clean scans: dark against half the window's paper, a flood fill at full resolution. */
function plainFind(
  img: GreyImage,
  thumb: GreyImage,
  factor: number,
  tmm: number,
  pxmm: number,
  wx0: number,
  wy0: number,
  win: number,
  ex: number,
  ey: number,
): Found | null {
  const best = nearestSquare(plainBlobs(thumb, wx0, wy0, wx0 + win, wy0 + win), tmm, ex, ey);
  if (!best) return null;
  // The window: the square as the thumbnail saw it, plus 2 mm for the thumbnail's coarseness.
  const sizeMm = Math.max(best.x1 - best.x0 + 1, best.y1 - best.y0 + 1) / tmm;
  const r = plainRefine(
    img,
    (best.sx / best.area + 0.5) * factor,
    (best.sy / best.area + 0.5) * factor,
    (sizeMm / 2 + 2) * pxmm,
  );
  const areaMm2 = r.areaPx / (pxmm * pxmm);
  // A square partly hidden by a folded or torn corner passes the thumbnail's shape test but
  // its centroid is off by up to a millimetre, which would shift every area near that corner:
  // a fiducial is used only when its full-resolution area is that of a whole square, and its
  // shape a square's (`squareShape`).
  return wholeSquare(areaMm2) && squareShape(r.widthPx, r.heightPx)
    ? { x: r.x, y: r.y, areaMm2, black: r.black }
    : null;
}

/**
 * Whether a found mark's bounding box is a square's: its sides within 15 % of each other (a
 * square turned by 3° or scanned at a scale of 95-105 % either way stays within a few per cent).
 * Lines where the toner ran short can cut the large square (81 mm²) into pieces, and its middle
 * piece, 9 × 4.3 mm, has the area of a whole small one: on generator C's scratch seed 5 104 545
 * (heavy low ink, 200 dpi) it was taken for one, its centre 0.65 mm off the square's, and one
 * chapter's areas were sampled about 0.55 mm off their outlines (docs/cards.md, section 8,
 * "Generator C, nineteenth round"). Such a mark is found again as the flat-fielded window finds
 * it, which bridges the lines (`flatFind`).
 */
function squareShape(widthPx: number, heightPx: number): boolean {
  return Math.max(widthPx, heightPx) <= 1.15 * Math.min(widthPx, heightPx);
}

/**
 * Where the first try finds no whole square (a shadow or a lighting gradient across the corner,
 * low contrast, a line where the toner ran short): the window flat-fielded, dark against the
 * paper right around the mark (docs/cards.md, section 5, step 2).
 */
function flatFind(
  img: GreyImage,
  thumb: GreyImage,
  factor: number,
  tmm: number,
  pxmm: number,
  wx0: number,
  wy0: number,
  win: number,
  ex: number,
  ey: number,
  skip: Uint8Array,
  streaks: Uint8Array,
): Found | null {
  const { blobs, flat } = blobsInWindow(thumb, wx0, wy0, wx0 + win, wy0 + win, tmm, skip);
  if (!flat) return null;
  const best = nearestSquare(blobs, tmm, ex, ey);
  if (!best) return null;
  // The paper around the mark from the flat-fielded window (thumbnail pixels, nearest).
  const paperAt = (x: number, y: number) => {
    const tx = Math.min(win - 1, Math.max(0, Math.floor(x / factor) - wx0)),
      ty = Math.min(win - 1, Math.max(0, Math.floor(y / factor) - wy0));
    return flat.bg[ty * win + tx]!;
  };
  const r = refine(
    img,
    best.x0 * factor - pxmm,
    best.y0 * factor - pxmm,
    (best.x1 + 1) * factor + pxmm,
    (best.y1 + 1) * factor + pxmm,
    paperAt,
    flat.thr,
    streaks,
  );
  const areaMm2 = r.areaPx / (pxmm * pxmm);
  return wholeSquare(areaMm2) ? { x: r.x, y: r.y, areaMm2, black: r.black } : null;
}

/**
 * The last try: a mark cut by the image's border (a page enlarged and turned past the scan's
 * edge), whole again from the three sides left (cut-mark.ts). Only dark regions of the window
 * that reach the image's border are looked at; the one whose square lies nearest the expected
 * place is taken.
 */
function cutFind(
  img: GreyImage,
  thumb: GreyImage,
  factor: number,
  tmm: number,
  pxmm: number,
  wx0: number,
  wy0: number,
  win: number,
  ex: number,
  ey: number,
): Found | null {
  let best: Found | null = null,
    bestD = Infinity;
  for (const b of plainBlobs(thumb, wx0, wy0, wx0 + win, wy0 + win)) {
    if (!(b.x0 === 0 || b.y0 === 0 || b.x1 === thumb.width - 1 || b.y1 === thumb.height - 1)) continue;
    const longest = Math.max(b.x1 - b.x0 + 1, b.y1 - b.y0 + 1) / tmm;
    if (longest < FIDUCIAL_SMALL * 0.6 || longest > FIDUCIAL_LARGE * 1.45) continue;
    const m = cutMark(
      img,
      { x0: b.x0 * factor, y0: b.y0 * factor, x1: (b.x1 + 1) * factor, y1: (b.y1 + 1) * factor },
      pxmm,
    );
    if (!m) continue;
    const d = Math.hypot(m.x / factor - ex, m.y / factor - ey);
    if (d < bestD) {
      bestD = d;
      best = { x: m.x, y: m.y, areaMm2: m.side ** 2, black: m.black };
    }
  }
  return best;
}

export interface PageFrame {
  /** Image points of the layout's tl, tr, bl, br fiducials. */
  points: [Pt, Pt, Pt, Pt];
  upsideDown: boolean;
  black: number;
}

const OPPOSITE: Record<Corner, Corner> = { tl: 'br', tr: 'bl', bl: 'tr', br: 'tl' };

/**
 * Candidate frames, most likely first. With four fiducials the large one decides; with three
 * the fourth is completed as a parallelogram and, if the large one is the missing one, both
 * orientations are offered (the identification strip's CRC then decides).
 */
export function candidateFrames(found: FoundFiducial[]): PageFrame[] {
  if (found.length < 3) return [];
  const by = new Map(found.map((f) => [f.imageCorner, f] as const));
  const pts = new Map<Corner, Pt>(found.map((f) => [f.imageCorner, { x: f.x, y: f.y }] as const));
  if (found.length === 3) {
    const missing = (['tl', 'tr', 'bl', 'br'] as const).find((c) => !by.has(c))!;
    const opp = pts.get(OPPOSITE[missing])!;
    const others = (['tl', 'tr', 'bl', 'br'] as const)
      .filter((c) => c !== missing && c !== OPPOSITE[missing])
      .map((c) => pts.get(c)!);
    pts.set(missing, { x: others[0]!.x + others[1]!.x - opp.x, y: others[0]!.y + others[1]!.y - opp.y });
  }
  const black = found.map((f) => f.black).sort((a, b) => a - b)[Math.floor(found.length / 2)]!;
  const upright: PageFrame = {
    points: [pts.get('tl')!, pts.get('tr')!, pts.get('bl')!, pts.get('br')!],
    upsideDown: false,
    black,
  };
  const flipped: PageFrame = {
    points: [pts.get('br')!, pts.get('bl')!, pts.get('tr')!, pts.get('tl')!],
    upsideDown: true,
    black,
  };
  const sorted = [...found].sort((a, b) => b.areaMm2 - a.areaMm2);
  const big = sorted[0]!,
    next = sorted[1]!;
  // Areas: large 81 mm², small 36 mm²; a clear ratio means the large one was seen.
  if (big.areaMm2 > next.areaMm2 * 1.5) {
    if (big.imageCorner === 'tl') return [upright, flipped];
    if (big.imageCorner === 'br') return [flipped, upright];
  }
  return [upright, flipped];
}
