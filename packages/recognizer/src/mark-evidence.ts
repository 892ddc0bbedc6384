// What an area's darkness grid shows (area-sampler.ts), as numbers the decision can weigh
// (mark-classifier.ts): its mean darkness above the page's empty areas; strokes, connected
// samples grown from clearly dark seeds (ticks, crosses, slashes, dots, fills), measured by
// their length; and patches clearly darker than the rest of the area (a small light mark, a
// light half fill), measured by size and contrast. A smooth residue, grey paper or soft
// show-through gives none of the latter two.
import type { AreaSample } from './area-sampler.ts';
import type { PageLevels } from './page-levels.ts';

export interface MarkEvidence {
  /** Mean darkness above the page's baseline. */
  solid: number;
  /** Darkness of the darkest tenth above the baseline: a uniform fill has solid close to it, a stroke far below. */
  peak: number;
  /** Length (mm, bounding-box diagonal) of the longest connected stroke. */
  stroke: number;
  /** Fraction of the inner area covered by stroke-dark samples. */
  cover: number;
  /**
   * The largest patch clearly darker than the rest of the area (mm²) and by how much: a small
   * light mark off-centre, which neither darkens the mean much nor is dark enough for a stroke.
   * Uniform residue, grey paper and smooth show-through make no patch.
   */
  blob: number;
  blobContrast: number;
}

/** Patches start this much darker than the area's floor: above show-through of the other side's print. */
export const T_BLOB_SEED = 0.12;
/** Patches grow through samples this much darker than the floor. */
export const T_BLOB_GROW = 0.07;

/** Stroke-dark levels for this page: seeds above `high`, grown through samples above `low`. */
export function strokeLevels(lv: PageLevels): { high: number; low: number } {
  const high = Math.max(0.3, lv.baseline + 6 * lv.noise * 0.56, lv.baseline + 0.5 * lv.line);
  const low = Math.max(0.2, lv.baseline + 4 * lv.noise * 0.56, lv.baseline + 0.33 * lv.line);
  return { high, low: Math.min(low, high) };
}

/** Light smoothing: each sample with its four neighbours, weights 4:1 (noise drops to ~0.56 σ). */
export function smooth(grid: Float32Array, cols: number, rows: number): Float32Array {
  const sm = new Float32Array(cols * rows).fill(NaN);
  for (let j = 0; j < rows; j++) {
    for (let i = 0; i < cols; i++) {
      const k = j * cols + i,
        v = grid[k]!;
      if (Number.isNaN(v)) continue; // outside the ellipse or on a streak
      let sum = 4 * v,
        w = 4;
      // A neighbour counts when it is inside the grid and measured (not NaN).
      const left = i > 0 ? grid[k - 1]! : NaN,
        right = i < cols - 1 ? grid[k + 1]! : NaN;
      const up = j > 0 ? grid[k - cols]! : NaN,
        down = j < rows - 1 ? grid[k + cols]! : NaN;
      if (!Number.isNaN(left)) {
        sum += left;
        w++;
      }
      if (!Number.isNaN(right)) {
        sum += right;
        w++;
      }
      if (!Number.isNaN(up)) {
        sum += up;
        w++;
      }
      if (!Number.isNaN(down)) {
        sum += down;
        w++;
      }
      sm[k] = sum / w;
    }
  }
  return sm;
}

interface Components {
  longest: number;
  biggest: number;
  biggestSum: number;
}

/** 8-connected components grown from samples at least `seedAt` through samples at least `growAt`. */
function components(
  sm: Float32Array,
  cols: number,
  rows: number,
  seedAt: number,
  growAt: number,
  seen: Uint8Array,
  stack: Int32Array,
): Components {
  seen.fill(0);
  let longest = 0,
    biggest = 0,
    biggestSum = 0;
  for (let k = 0; k < sm.length; k++) {
    if (seen[k] || !(sm[k]! >= seedAt)) continue;
    let i0 = cols,
      i1 = -1,
      j0 = rows,
      j1 = -1,
      n = 0,
      sum = 0,
      top = 0;
    stack[top++] = k;
    seen[k] = 1;
    while (top > 0) {
      const q = stack[--top]!;
      const i = q % cols,
        j = (q - i) / cols;
      n++;
      sum += sm[q]!;
      if (i < i0) i0 = i;
      if (i > i1) i1 = i;
      if (j < j0) j0 = j;
      if (j > j1) j1 = j;
      const ia = i > 0 ? i - 1 : 0,
        ib = i < cols - 1 ? i + 1 : i,
        ja = j > 0 ? j - 1 : 0,
        jb = j < rows - 1 ? j + 1 : j;
      for (let jj = ja; jj <= jb; jj++) {
        for (let ii = ia; ii <= ib; ii++) {
          const kk = jj * cols + ii;
          if (!seen[kk] && sm[kk]! >= growAt) {
            seen[kk] = 1;
            stack[top++] = kk;
          }
        }
      }
    }
    const len = Math.hypot(i1 - i0 + 1, j1 - j0 + 1);
    if (len > longest) longest = len;
    if (n > biggest) {
      biggest = n;
      biggestSum = sum;
    }
  }
  return { longest, biggest, biggestSum };
}

/**
 * The q-quantile of the inner samples of `values` (NaN left out), from a histogram over the
 * samples' range (-0.5..1.2 in steps of 1/256): exact enough, and no sort per area.
 */
const BINS = 436;
const hist = new Uint32Array(BINS);
export function innerQuantile(values: Float32Array, inner: Uint8Array, q: number): number {
  hist.fill(0);
  let n = 0;
  for (let k = 0; k < values.length; k++) {
    const x = values[k]!;
    if (!inner[k] || Number.isNaN(x)) continue;
    const b = Math.floor((x + 0.5) * 256);
    hist[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]!++;
    n++;
  }
  if (n === 0) return 0;
  const target = Math.floor(q * (n - 1)) + 1;
  let acc = 0;
  for (let b = 0; b < BINS; b++) {
    acc += hist[b]!;
    if (acc >= target) return (b + 0.5) / 256 - 0.5;
  }
  return 1.2;
}

/** Scratch buffers, reused from area to area (a page has hundreds). */
let scratch = { seen: new Uint8Array(0), stack: new Int32Array(0) };
function buffers(n: number): { seen: Uint8Array; stack: Int32Array } {
  if (scratch.seen.length < n) scratch = { seen: new Uint8Array(n), stack: new Int32Array(n) };
  return { seen: scratch.seen.subarray(0, n), stack: scratch.stack };
}

/**
 * The evidence of one area. `enoughStroke` (mm): a stroke at least this long makes the area a
 * mark whatever else it shows, so its patches are not measured (blob 0).
 */
export function evidence(s: AreaSample, lv: PageLevels, enoughStroke = Infinity): MarkEvidence {
  const { cols, rows, grid, inner } = s;
  const sm = smooth(grid, cols, rows);
  const { seen, stack } = buffers(cols * rows);
  // Strokes: components grown from clearly dark seeds (hysteresis), measured by their extent.
  const { high, low } = strokeLevels(lv);
  const strokes = components(sm, cols, rows, high, low, seen, stack);
  let covered = 0,
    innerN = 0;
  for (let k = 0; k < sm.length; k++)
    if (inner[k]) {
      innerN++;
      if (sm[k]! >= low) covered++;
    }
  const peak = innerQuantile(grid, inner, 0.9) - lv.baseline;
  const stroke = strokes.longest * s.step;
  if (stroke >= enoughStroke)
    return {
      solid: s.mean - lv.baseline,
      peak,
      stroke,
      cover: innerN > 0 ? covered / innerN : 0,
      blob: 0,
      blobContrast: 0,
    };
  // Patches against the area's own floor (its lighter part), so uniform darkness makes none.
  const floor = innerQuantile(sm, inner, 0.2);
  const sigma = 0.56 * lv.noise;
  const patches = components(
    sm,
    cols,
    rows,
    floor + Math.max(T_BLOB_SEED, 5 * sigma),
    floor + Math.max(T_BLOB_GROW, 3 * sigma),
    seen,
    stack,
  );
  return {
    solid: s.mean - lv.baseline,
    peak,
    stroke,
    cover: innerN > 0 ? covered / innerN : 0,
    blob: patches.biggest * s.step * s.step,
    blobContrast: patches.biggest > 0 ? patches.biggestSum / patches.biggest - floor : 0,
  };
}

/** Samples this much darker than an area's median are a speck's (toner, dirt), not its fill's grain. */
const SPECK_ABOVE_MEDIAN = 0.25;

/**
 * An area's mean darkness above the page's baseline leaving out what is far darker than its
 * median: a toner speck on an erasure's residue raises the mean of the area without being a
 * fill (docs/cards.md, section 5, step 4: caution on a speckled page). A uniform fill's grain
 * stays within that of its median, so its mean hardly moves.
 */
export function solidApartFromSpecks(s: AreaSample, baseline: number): number {
  const cut = innerQuantile(s.grid, s.inner, 0.5) + SPECK_ABOVE_MEDIAN;
  let sum = 0,
    n = 0;
  for (let k = 0; k < s.grid.length; k++) {
    const x = s.grid[k]!;
    if (!s.inner[k] || Number.isNaN(x) || x > cut) continue;
    sum += x;
    n++;
  }
  return n > 0 ? sum / n - baseline : s.mean - baseline;
}
