// The paper right around one area, where the page's 8 mm paper map cannot follow it: bands
// from a dirty roller or drum (a few millimetres wide, across or along the feed), the edge of
// a cast shadow, a copier's grey patch. The paper is read on a thin rectangle just outside the
// area's printed outline (between the outline and the next area or its printed number) and
// carried inside by a Coons patch, which reproduces exactly any paper that changes along one
// direction (a band, whatever its width) or along both as a sum (docs/cards.md, section 5).
// Ink on the ring (a mark's overflow, a speck) is narrow: each side keeps the median of its
// neighbouring points, and the result may differ from the paper map by no more
// than the page's measured banding and unevenness allow (page-quality.ts).
import type { GreyImage } from './grey-image.ts';
import { apply, type Homography } from './homography.ts';
import type { MarkEvidence } from './mark-evidence.ts';

/** Paper grey at a point of the area (mm from its centre). */
export type LocalPaper = (u: number, v: number) => number;

/**
 * The ring's paper carried inside, and how far the ring departs from a paper that changes as a
 * sum along the area's two axes (grey levels), which is what the patch carries inside exactly:
 * the spread of the top side less the bottom one along the area, and of the left less the right
 * down it. A band along either axis leaves it near 0; a shadow's edge across the area
 * diagonally, or a patch's round edge, does not, and there the patch inside is only a guess.
 */
export type LocalRing = LocalPaper & { readonly misfit: number };

/** Max less min of a - b, point by point (two sides of the same length). */
function spreadOfDifference(a: Float32Array, b: Float32Array): number {
  let lo = Infinity,
    hi = -Infinity;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    if (d < lo) lo = d;
    if (d > hi) hi = d;
  }
  return hi - lo;
}

/** Distances outside the printed outline's outer edge (mm) at which the ring is read. */
const OFFSETS = [0.45, 0.7] as const;
/** Share of the paper map's level by which the ring must depart from it somewhere to be used. */
export const MIN_DEPARTURE = 0.04;
/**
 * A band's edge between a side's two offsets (`side`): the nearer one reads darker than the
 * farther by `depth` of the paper at the median, and its readings' interquartile range is
 * under `even` of it.
 */
export const OFFSET_EDGE = { depth: 0.08, even: 0.04 } as const;
/** Half the printed outline's width. */
const OUTLINE_HALF = 0.15;

function grey(
  img: GreyImage,
  h: Homography,
  cx: number,
  cy: number,
  u: number,
  v: number,
  streaks: Uint8Array,
): number {
  const q = apply(h, cx + u, cy + v);
  const x = Math.round(q.x - 0.5),
    y = Math.round(q.y - 0.5);
  if (x < 0 || y < 0 || x >= img.width || y >= img.height || streaks[x] === 1) return NaN;
  return img.data[y * img.width + x]!;
}

/** One side of the ring: `n` points along it (area mm), each the lightest over the offsets, then the median of itself and its neighbours. */
function side(
  img: GreyImage,
  h: Homography,
  cx: number,
  cy: number,
  n: number,
  at: (t: number, o: number) => [number, number],
  streaks: Uint8Array,
): Float32Array {
  const raw = new Float32Array(n);
  const near = new Float32Array(n);
  const apart: number[] = [];
  for (let i = 0; i < n; i++) {
    let m = NaN;
    for (const o of OFFSETS) {
      const [u, v] = at(i / (n - 1), o);
      const g = grey(img, h, cx, cy, u, v, streaks);
      if (!Number.isNaN(g)) m = Number.isNaN(m) ? g : Math.max(m, g);
      if (o === OFFSETS[0]) near[i] = g;
      else if (!Number.isNaN(g) && !Number.isNaN(near[i]!)) apart.push(g - near[i]!);
    }
    raw[i] = m;
  }
  // The lightest of the two offsets keeps a mark's overflow off the ring, which is a few points.
  // A band's edge running along the side between the offsets darkens the nearer one all along:
  // the lightest is then the paper beside the band, not the paper at the area's edge, and the
  // other sides' ends, which are in the band, disagree with it at the corners; the patch carried
  // a paper lighter than the band into the area's part on it. On C's clean tuning card 4 500 000
  // at 150 dpi a stripe along the feed 3 mm wide at 0.7-0.75 of the light so made an eraser's
  // residue read filled (docs/cards.md, section 8, "Generator C, fourteenth round").
  // Where most of the side's nearer points are darker than the farther ones by a band's depth,
  // and evenly (a band's edge along the side; a mark lying along it, as on the golden corpus's
  // degraded scans, is uneven), the side is read on the nearer offset.
  apart.sort((a, b) => a - b);
  const even = Array.from(near)
    .filter((g) => !Number.isNaN(g))
    .sort((a, b) => a - b);
  const paper = Math.max(...raw.filter((g) => !Number.isNaN(g)));
  if (
    apart.length > n / 2 &&
    apart[apart.length >> 1]! > OFFSET_EDGE.depth * paper &&
    even[Math.floor(even.length * 0.75)]! - even[Math.floor(even.length * 0.25)]! < OFFSET_EDGE.even * paper
  )
    for (let i = 0; i < n; i++) if (!Number.isNaN(near[i]!)) raw[i] = near[i]!;
  // The median of five neighbours: a stroke or speck up to two points wide goes, a band's
  // edge stays where it is.
  const out = new Float32Array(n);
  const w: number[] = [];
  for (let i = 0; i < n; i++) {
    w.length = 0;
    for (let k = Math.max(0, i - 2); k <= Math.min(n - 1, i + 2); k++) {
      const g = raw[k]!;
      if (!Number.isNaN(g)) w.push(g);
    }
    w.sort((a, b) => a - b);
    out[i] = w.length ? w[w.length >> 1]! : NaN;
  }
  // Points with no reading (off the image, on a streak) take their nearest neighbour's.
  for (let i = 1; i < n; i++) if (Number.isNaN(out[i]!)) out[i] = out[i - 1]!;
  for (let i = n - 2; i >= 0; i--) if (Number.isNaN(out[i]!)) out[i] = out[i + 1]!;
  return out;
}

function at(a: Float32Array, t: number): number {
  const f = Math.min(Math.max(t, 0), 1) * (a.length - 1),
    i = Math.floor(f),
    j = Math.min(i + 1, a.length - 1);
  return a[i]! * (1 - (f - i)) + a[j]! * (f - i);
}

/**
 * The area's local paper, or null where the ring cannot be read. `limit(g)` clamps a value to
 * what the paper map and the page's condition allow there.
 */
export function localPaper(
  img: GreyImage,
  h: Homography,
  cx: number,
  cy: number,
  w: number,
  hh: number,
  pxmm: number,
  streaks: Uint8Array,
  limit: (g: number) => number,
  mapLevel: number,
): LocalRing | null {
  const X = w / 2 + OUTLINE_HALF,
    Y = hh / 2 + OUTLINE_HALF;
  const step = Math.max(0.25, 1 / pxmm);
  const nx = Math.max(5, Math.round((2 * (X + 0.7)) / step) + 1),
    ny = Math.max(5, Math.round((2 * (Y + 0.7)) / step) + 1);
  const top = side(img, h, cx, cy, nx, (t, o) => [-(X + o) + t * 2 * (X + o), -(Y + o)], streaks);
  const bottom = side(img, h, cx, cy, nx, (t, o) => [-(X + o) + t * 2 * (X + o), Y + o], streaks);
  const left = side(img, h, cx, cy, ny, (t, o) => [-(X + o), -(Y + o) + t * 2 * (Y + o)], streaks);
  const right = side(img, h, cx, cy, ny, (t, o) => [X + o, -(Y + o) + t * 2 * (Y + o)], streaks);
  if (Number.isNaN(top[0]!) || Number.isNaN(bottom[0]!)) return null;
  // A left or right side wholly on an ADF streak reads nothing. A narrow band along the feed is
  // such a streak (findStreaks: its columns are left out), and giving up the ring there left the
  // area to the paper map, which cannot follow the band: on generator C's scratch seeds 5 102 503
  // and 5 102 513 (heavy bands along the feed, 200 dpi) a column of five empty areas each showed
  // the band's part inside them as a patch of 2.4-5.8 mm² and read filled (docs/cards.md, section
  // 8, "Generator C, tenth round"). Such a side takes the paper at its ends from the top and
  // bottom sides, linearly between them: the columns it lies on change the paper along x only.
  for (const [s, i] of [
    [left, 0],
    [right, nx - 1],
  ] as const)
    if (Number.isNaN(s[0]!))
      for (let k = 0; k < s.length; k++) s[k] = top[i]! + ((bottom[i]! - top[i]!) * k) / (s.length - 1);
  for (const s of [top, bottom, left, right]) for (let i = 0; i < s.length; i++) s[i] = limit(s[i]!);
  // Where the ring agrees with the paper map to within MIN_DEPARTURE everywhere, the map is
  // kept: the ring, a few pixels from the printed outline, reads a little darker than the paper
  // (the outline's blur, a hand's graphite around a fill), which on generator A's tuning pages
  // was enough to read three of the faintest fills empty.
  let far = 0;
  for (const s of [top, bottom, left, right])
    for (let i = 0; i < s.length; i++) far = Math.max(far, Math.abs(s[i]! - mapLevel) / mapLevel);
  if (far < MIN_DEPARTURE) return null;
  const c00 = (top[0]! + left[0]!) / 2,
    c10 = (top[nx - 1]! + right[0]!) / 2,
    c01 = (bottom[0]! + left[ny - 1]!) / 2,
    c11 = (bottom[nx - 1]! + right[ny - 1]!) / 2;
  const RX = X + 0.575,
    RY = Y + 0.575;
  const misfit = Math.max(spreadOfDifference(top, bottom), spreadOfDifference(left, right));
  const paper = (u: number, v: number) => {
    const s = (u + RX) / (2 * RX),
      t = (v + RY) / (2 * RY);
    const p =
      (1 - s) * at(left, t) +
      s * at(right, t) +
      (1 - t) * at(top, s) +
      t * at(bottom, s) -
      ((1 - s) * (1 - t) * c00 + s * (1 - t) * c10 + (1 - s) * t * c01 + s * t * c11);
    return limit(p);
  };
  return Object.assign(paper, { misfit });
}

/**
 * From this misfit (share of the area's range from paper to black) the paper carried inside an
 * area is only a guess: a shadow's edge across it diagonally. On generator C's tuning pages
 * (heavy shadows at 150 dpi) empty areas there measured patches up to 0.23 darker than their
 * lighter part and means up to 0.152, and three were read filled by their patch (misfits
 * 0.36-0.57); fills there without a stroke measured at least 0.187.
 */
export const RING_MISFIT = 0.3;
/** There a fill told by neither a stroke nor a mean at least this dark is uncertain. */
export const RING_MISFIT_SOLID = 0.17;

/** Whether a fill on an area whose ring misfits by `misfit` (share of its range) rests on a guess: then it is uncertain. */
export function fillOnAGuess(e: MarkEvidence, misfit: number, filledStroke: number): boolean {
  return misfit >= RING_MISFIT && e.stroke < filledStroke && e.solid < RING_MISFIT_SOLID;
}

/**
 * An area called empty by its mean, measured against a ring that misfits (a band's edge across
 * it, not quite along its axes), may be a faint fill the ring's guess lightened: on generator C's
 * tuning seed 5 002 513 (heavy bands along the feed, 200 dpi) a faint pencil fill measured 0.080
 * at a misfit of 0.104, about 0.05 lighter than such fills measure on that page, and read empty
 * (docs/cards.md, section 8, "Generator C, tenth round"). So a grey from `floor` that would not
 * read empty were it `share` of the misfit darker is uncertain, on a page whose hand has faint
 * fills (not one dark, even hand: its residue limit already reads such greys empty, section 9).
 * A paper-white mean beside a stray mark that spoilt the ring is not a grey.
 */
export const RING_GUESS = { share: 0.5, floor: 0.04 } as const;

/** The area's evidence as dark as the ring's guess may have hidden, or null where it is no grey or the ring fits. */
export function darkerOnAGuess(e: MarkEvidence, misfit: number): MarkEvidence | null {
  if (!(misfit > 0) || e.solid < RING_GUESS.floor) return null;
  return { ...e, solid: e.solid + RING_GUESS.share * misfit };
}

/**
 * The other way round: on a ring that is only a guess (`RING_MISFIT`), a fill told by its mean
 * (no stroke) stays a fill only if it would be one `RING_GUESS.share` of the misfit lighter. On
 * generator C's scratch seed 6 108 535 (heavy shadows, 300 dpi) an empty area under a shadow's
 * edge measured 0.203 on a ring misfitting by 0.663, above `RING_MISFIT_SOLID`, and read filled
 * (docs/cards.md, section 8, "Generator C, tenth round").
 */
export function lighterOnAGuess(e: MarkEvidence, misfit: number, filledStroke: number): MarkEvidence | null {
  if (misfit < RING_MISFIT || e.stroke >= filledStroke) return null;
  return { ...e, solid: e.solid - RING_GUESS.share * misfit };
}
