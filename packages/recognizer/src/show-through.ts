// The other side's QR code seen through the paper (docs/cards.md, "How recognition works"). On the side of a
// sheet behind the QR code, its modules show through as blotchy grey (up to about 0.12 of black
// on the benchmark's scans): over an erasure's residue that reads as dark as a faint fill, and
// its blotches look like faint patches. The layout says where that QR code is and its content
// (the layout's own) says which modules are dark, so the recognizer knows the pattern behind each
// area. How strongly it shows through, and how much the paper blurs it, are measured on the page
// itself, from the areas over the code (most of them empty); the pattern is then taken out of the
// scan there (the paper around those areas too, which is what they are measured against) before
// they are judged. Where the pattern does not explain what the page shows (another print behind,
// the sheet's two sides printed out of register, no show-through to speak of), nothing is taken
// out and those areas are judged as before, with that print's show-through in mind
// (mark-classifier.ts, `behindPrint`).
import type { AreaSample } from './area-sampler.ts';
import type { ModuleMatrix } from './codes.ts';
import type { GreyImage } from './grey-image.ts';
import { apply, invert, type Homography } from './homography.ts';
import type { Layout, LayoutSide } from './layout.ts';
import { PAGE } from './page-frame.ts';
import { buildPaperMap, type PaperMap } from './paper-map.ts';

export const SHOW_THROUGH = {
  /**
   * Blurs (mm, Gaussian sigma) the paper's fibres may give the modules seen through it: the one
   * that explains the page best is taken (the benchmark's generator A blurs by 0.3).
   */
  blurs: [0.2, 0.3, 0.45, 0.65],
  /** An area counts towards the page's estimate when the pattern behind it varies this much (sd of the modules' coverage). */
  minPatternSd: 0.15,
  /** Areas needed for an estimate. */
  minAreas: 4,
  /**
   * The pattern explains the page when, over the areas in front of the code, the median
   * correlation between an area's samples and the pattern behind them is at least this (on A's
   * tuning pages 0.35-0.9, lowest where the show-through is faintest).
   */
  minCorrelation: 0.3,
  /**
   * The pattern must fit best where the layout puts it: when it fits the page better shifted
   * this far (mm) in any direction, the sheet's two sides are out of register (or another code
   * is behind) and nothing is taken out.
   */
  registration: 0.5,
} as const;

/** The other side's QR code, in that side's page millimetres; seen from this side it is mirrored over the sheet's long edge. */
export interface QrBehind {
  matrix: ModuleMatrix;
  x: number;
  y: number;
  module: number;
}

/** The QR code printed on the other side of this side's sheet, or null (none there, or a matrix of another size than the layout's). */
export function qrBehind(layout: Layout, side: LayoutSide, matrix: ModuleMatrix): QrBehind | null {
  const other = layout.sides.find((s) => s.sheet === side.sheet && s.side !== side.side);
  const q = other?.qrcode;
  if (!q || matrix.cols !== q.modules || matrix.rows !== q.modules) return null;
  return { matrix, x: q.x, y: q.y, module: q.module };
}

/** Whether an area (centre, size in mm) lies over the QR code behind it. */
export function overQr(q: QrBehind, a: { x: number; y: number; w: number; h: number }): boolean {
  const x0 = PAGE.width - a.x - a.w / 2,
    x1 = PAGE.width - a.x + a.w / 2;
  const size = q.matrix.cols * q.module;
  return x1 > q.x && x0 < q.x + size && a.y + a.h / 2 > q.y && a.y - a.h / 2 < q.y + size;
}

/** The standard normal distribution function (Abramowitz and Stegun 7.1.26, error under 2e-7). */
function phi(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const e =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + e) : 0.5 * (1 - e);
}

/**
 * Separable weights for `n` positions (`pos(i)`, mm from the code's edge along one axis): for
 * each, the first module index it sees (`first`) and how much of each of the `width` modules from
 * there (`w`, row-major; 0 beyond the code).
 */
function axisWeights(
  n: number,
  pos: (i: number) => number,
  module: number,
  modules: number,
  sigma: number,
): { first: Int32Array; w: Float64Array; width: number } {
  const reach = Math.ceil((3 * sigma) / module),
    width = 2 * reach + 2;
  const first = new Int32Array(n),
    w = new Float64Array(n * width);
  for (let i = 0; i < n; i++) {
    const p = pos(i),
      k0 = Math.floor(p / module) - reach;
    first[i] = k0;
    let prev = phi((p - k0 * module) / sigma);
    for (let d = 0; d < width; d++) {
      const next = phi((p - (k0 + d + 1) * module) / sigma);
      const k = k0 + d;
      if (k >= 0 && k < modules) w[i * width + d] = prev - next;
      prev = next;
    }
  }
  return { first, w, width };
}

/** The blurred dark-module coverage (0..1) of the code behind the point (x, y), in this side's page mm. */
export function coverage(q: QrBehind, x: number, y: number, sigma: number): number {
  const m = q.matrix;
  const X = axisWeights(1, () => PAGE.width - x - q.x, q.module, m.cols, sigma);
  const Y = axisWeights(1, () => y - q.y, q.module, m.rows, sigma);
  let sum = 0;
  for (let dr = 0; dr < Y.width; dr++) {
    const r = Y.first[0]! + dr,
      a = Y.w[dr]!;
    if (a === 0) continue;
    for (let dc = 0; dc < X.width; dc++) {
      const b = X.w[dc]!;
      if (b !== 0 && m.data[r * m.cols + X.first[0]! + dc]) sum += a * b;
    }
  }
  return sum;
}

/**
 * The blurred dark-module coverage (0..1) of the code behind each of an area's samples (NaN
 * where there is no sample), for the area centred at (cx, cy) mm on this side; the sample grid is
 * laid out as area-sampler.ts lays it (u along the page's x, v along its y). The blur is
 * separable: along the code's rows first, then across them.
 */
export function patternBehind(q: QrBehind, s: AreaSample, cx: number, cy: number, sigma: number): Float32Array {
  const { cols, rows, step, grid } = s;
  const m = q.matrix;
  const x0 = cx - (cols * step) / 2,
    y0 = cy - (rows * step) / 2;
  const X = axisWeights(cols, (i) => PAGE.width - (x0 + (i + 0.5) * step) - q.x, q.module, m.cols, sigma);
  const Y = axisWeights(rows, (j) => y0 + (j + 0.5) * step - q.y, q.module, m.rows, sigma);
  const t = new Float32Array(cols * rows).fill(NaN);
  // The module rows any sample row sees, each blurred along the row for every sample column.
  let r0 = Infinity,
    r1 = -Infinity;
  for (let j = 0; j < rows; j++) {
    r0 = Math.min(r0, Y.first[j]!);
    r1 = Math.max(r1, Y.first[j]! + Y.width - 1);
  }
  r0 = Math.max(0, r0);
  r1 = Math.min(m.rows - 1, r1);
  if (r1 < r0) return t.fill(0).map((v, k) => (Number.isNaN(grid[k]) ? NaN : v));
  const along = new Float64Array((r1 - r0 + 1) * cols);
  for (let r = r0; r <= r1; r++) {
    for (let i = 0; i < cols; i++) {
      const k0 = X.first[i]!;
      let sum = 0;
      for (let d = 0; d < X.width; d++) {
        const c = k0 + d;
        if (c >= 0 && c < m.cols && m.data[r * m.cols + c]) sum += X.w[i * X.width + d]!;
      }
      along[(r - r0) * cols + i] = sum;
    }
  }
  for (let j = 0; j < rows; j++) {
    const k0 = Y.first[j]!;
    for (let i = 0; i < cols; i++) {
      const k = j * cols + i;
      if (Number.isNaN(grid[k])) continue;
      let sum = 0;
      for (let d = 0; d < Y.width; d++) {
        const r = k0 + d;
        if (r >= r0 && r <= r1) sum += Y.w[j * Y.width + d]! * along[(r - r0) * cols + i]!;
      }
      t[k] = sum;
    }
  }
  return t;
}

/** How an area's samples follow the pattern behind them: regression slope, correlation, the pattern's spread. */
export function followsPattern(
  s: AreaSample,
  t: Float32Array,
): { slope: number; correlation: number; patternSd: number } {
  let n = 0,
    sx = 0,
    sy = 0;
  for (let k = 0; k < t.length; k++) {
    const x = t[k]!;
    if (Number.isNaN(x)) continue;
    n++;
    sx += x;
    sy += s.grid[k]!;
  }
  if (n < 3) return { slope: 0, correlation: 0, patternSd: 0 };
  const mx = sx / n,
    my = sy / n;
  let sxx = 0,
    sxy = 0,
    syy = 0;
  for (let k = 0; k < t.length; k++) {
    const x = t[k]!;
    if (Number.isNaN(x)) continue;
    const dx = x - mx,
      dy = s.grid[k]! - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  return {
    slope: sxx > 0 ? sxy / sxx : 0,
    correlation: sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0,
    patternSd: Math.sqrt(sxx / n),
  };
}

function median(v: readonly number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

/**
 * How strongly the code behind shows through (darkness added by a fully dark module, in the
 * samples' units) and how well the pattern explains the areas over it: the median slope of their
 * samples on the pattern and the median correlation, over the areas where the pattern varies;
 * null when too few. Most of those areas are empty; a mark's own shape moves its own slope only.
 */
export function measureShowThrough(
  fits: ReadonlyArray<{ slope: number; correlation: number; patternSd: number }>,
): { strength: number; correlation: number } | null {
  const used = fits.filter((f) => f.patternSd >= SHOW_THROUGH.minPatternSd);
  if (used.length < SHOW_THROUGH.minAreas) return null;
  return { strength: median(used.map((f) => f.slope)), correlation: median(used.map((f) => f.correlation)) };
}

/** The code behind a page, as measured on it: its strength (samples' units), the blur that fits, and the pattern behind each area over it. */
export interface ShowThrough {
  q: QrBehind;
  strength: number;
  correlation: number;
  blur: number;
  patterns: Map<number, Float32Array>;
}

/**
 * The show-through of the QR code behind, measured on the areas over it (`measureShowThrough`)
 * with the blur that fits best, when the pattern explains them (`minCorrelation`) and fits best
 * where the layout puts it (`registration`); else null.
 */
export function measureQrBehind(
  q: QrBehind | null,
  areas: ReadonlyArray<{ x: number; y: number; w: number; h: number }>,
  samples: readonly AreaSample[],
  o: { blurs?: readonly number[] } = {},
): ShowThrough | null {
  if (!q) return null;
  const over = areas.map((a, i) => (overQr(q, a) && samples[i]!.grid.length > 0 ? i : -1)).filter((i) => i >= 0);
  if (over.length < SHOW_THROUGH.minAreas) return null;
  const fitAt = (dx: number, dy: number, blur: number) => {
    const shifted = { ...q, x: q.x + dx, y: q.y + dy };
    const patterns = new Map(over.map((i) => [i, patternBehind(shifted, samples[i]!, areas[i]!.x, areas[i]!.y, blur)]));
    return { patterns, measured: measureShowThrough(over.map((i) => followsPattern(samples[i]!, patterns.get(i)!))) };
  };
  let best: (ReturnType<typeof fitAt> & { blur: number }) | undefined;
  for (const blur of o.blurs ?? SHOW_THROUGH.blurs) {
    const f = fitAt(0, 0, blur);
    if (f.measured && (!best?.measured || f.measured.correlation > best.measured.correlation)) best = { ...f, blur };
  }
  const m = best?.measured;
  if (!best || !m || m.correlation < SHOW_THROUGH.minCorrelation || m.strength <= 0) return null;
  const r = SHOW_THROUGH.registration;
  for (const [dx, dy] of [
    [r, 0],
    [-r, 0],
    [0, r],
    [0, -r],
  ] as const) {
    if ((fitAt(dx, dy, best.blur).measured?.correlation ?? -1) >= m.correlation) return null;
  }
  return { q, strength: m.strength, correlation: m.correlation, blur: best.blur, patterns: best.patterns };
}

/**
 * The fraction of light the code behind takes away where it is fully dark: the measured strength
 * is in darkness relative to the range from paper to black, the show-through takes a fraction of
 * the paper's light (the median over the areas' own paper and range).
 */
function lightTaken(st: ShowThrough, samples: readonly AreaSample[]): number {
  const ratios = [...st.patterns.keys()].map((i) => {
    const s = samples[i]!;
    return s.paper && s.range ? s.range / s.paper : 1;
  });
  return Math.min(0.5, st.strength * median(ratios));
}

/**
 * The page's paper map with the code's show-through taken out of the thumbnail first, around
 * the code behind (thumbnail pixels there brightened by `taken`, the light a fully dark module
 * takes as `lightTaken` measures it, times their coverage): what the
 * areas over the code are measured against. Elsewhere it is the page's own paper map.
 */
export function paperWithout(
  st: ShowThrough,
  taken: number,
  thumb: GreyImage,
  factor: number,
  h: Homography,
  pxmm: number,
): PaperMap | null {
  const back = invert(h);
  if (!back) return null;
  const size = st.q.matrix.cols * st.q.module;
  const margin = 3 * st.blur + 1;
  // The code's mirror image on this side, in page mm, and its bounding box in thumbnail pixels.
  const x0 = PAGE.width - st.q.x - size - margin,
    x1 = PAGE.width - st.q.x + margin,
    y0 = st.q.y - margin,
    y1 = st.q.y + size + margin;
  const corners = [apply(h, x0, y0), apply(h, x1, y0), apply(h, x0, y1), apply(h, x1, y1)];
  const tx0 = Math.max(0, Math.floor(Math.min(...corners.map((c) => c.x)) / factor)),
    tx1 = Math.min(thumb.width - 1, Math.ceil(Math.max(...corners.map((c) => c.x)) / factor));
  const ty0 = Math.max(0, Math.floor(Math.min(...corners.map((c) => c.y)) / factor)),
    ty1 = Math.min(thumb.height - 1, Math.ceil(Math.max(...corners.map((c) => c.y)) / factor));
  // A thumbnail pixel averages `factor` pixels across: the pattern it sees is blurred that much more.
  const sigma = Math.hypot(st.blur, factor / pxmm / Math.sqrt(12));
  const data = new Uint8Array(thumb.data);
  for (let y = ty0; y <= ty1; y++) {
    for (let x = tx0; x <= tx1; x++) {
      const p = apply(back, (x + 0.5) * factor, (y + 0.5) * factor);
      if (p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) continue;
      const t = coverage(st.q, p.x, p.y, sigma);
      if (t <= 0) continue;
      const k = y * thumb.width + x;
      data[k] = Math.min(255, Math.round(data[k]! / (1 - taken * t)));
    }
  }
  return buildPaperMap({ data, width: thumb.width, height: thumb.height }, factor, 16);
}

/**
 * An area's samples with the show-through taken out: the code behind takes `taken` × its
 * coverage of the light (from paper and mark alike), so a sample's grey g was g / (1 - taken·t);
 * it is measured again against `paper`, the paper around the area with the show-through taken out
 * too (`paperWithout`), and the same black.
 */
export function withoutShowThrough(s: AreaSample, t: Float32Array, taken: number, paper: number): AreaSample {
  if (s.paper === undefined || s.range === undefined) return s;
  const black = s.paper - s.range;
  const range = Math.max(paper - black, 20);
  const grid = new Float32Array(s.grid.length).fill(NaN);
  let n = 0,
    sum = 0,
    sum2 = 0;
  for (let k = 0; k < grid.length; k++) {
    const v = s.grid[k]!;
    if (Number.isNaN(v)) continue;
    const grey = (s.paper - v * s.range) / (1 - taken * (Number.isNaN(t[k]!) ? 0 : t[k]!));
    const c = Math.max(-0.5, Math.min(1.2, (paper - grey) / range));
    grid[k] = c;
    if (s.inner[k]) {
      n++;
      sum += c;
      sum2 += c * c;
    }
  }
  const mean = n > 0 ? sum / n : 0;
  return { ...s, grid, mean, sd: n > 1 ? Math.sqrt(Math.max(0, sum2 / n - mean * mean)) : 0, paper, range };
}

/**
 * A page's area samples with the QR code behind them taken out where its show-through is
 * measured (`measureQrBehind`); `cleared` marks the areas corrected. Other areas, and every area
 * when nothing was measured, keep their samples. Nothing is taken out on a page whose areas are
 * judged against their own ring of paper (`ringJudged`: a band, a shadow's edge): the areas are
 * measured again against the paper map, which there cannot follow the paper (on generator C's
 * tuning pages under a heavy shadow, empty areas in its penumbra then read as dark as pencil);
 * they keep the cautious reading of areas behind print (docs/cards.md, section 5, step 5).
 */
export function takeOutQrBehind(
  q: QrBehind | null,
  areas: ReadonlyArray<{ x: number; y: number; w: number; h: number }>,
  samples: readonly AreaSample[],
  view: { thumb: GreyImage; factor: number; h: Homography; pxmm: number; ringJudged?: boolean },
): {
  samples: AreaSample[];
  cleared: boolean[];
  measured: ShowThrough | null;
  taken: number;
  paper: Map<number, number>;
} {
  const none = {
    samples: [...samples],
    cleared: areas.map(() => false),
    measured: null,
    taken: 0,
    paper: new Map<number, number>(),
  };
  if (view.ringJudged) return none;
  const st = measureQrBehind(q, areas, samples);
  if (!st) return none;
  const taken = lightTaken(st, samples);
  const map = paperWithout(st, taken, view.thumb, view.factor, view.h, view.pxmm);
  if (!map) return none;
  const out = [...samples],
    cleared = areas.map(() => false),
    paper = new Map<number, number>();
  for (const [i, t] of st.patterns) {
    const c = apply(view.h, areas[i]!.x, areas[i]!.y);
    const p = map.level(c.x, c.y);
    paper.set(i, p);
    out[i] = withoutShowThrough(samples[i]!, t, taken, p);
    cleared[i] = out[i] !== samples[i];
  }
  return { samples: out, cleared, measured: st, taken, paper };
}
