// The page's condition, measured before any area is judged (docs/cards.md, section 5): bands
// and streaks across and along the feed, how uneven the paper's light is, the contrast between
// paper and print, blur, and JPEG blockiness. It decides whether each area is judged against
// the ring of paper right around it (local-paper.ts) rather than the 8 mm paper map, how far
// that ring may move the paper, and whether the page is too degraded to be read at all (1004,
// with the reason): a wrong answer is worse than none.
import type { GreyImage } from './grey-image.ts';
import { apply, type Homography } from './homography.ts';
import { speckArea } from './margin-specks.ts';
import { SortedWindow } from './sorted-window.ts';

export interface PageQuality {
  /** Deepest periodic dip of the paper across the feed (horizontal bands), share of the paper's light. */
  bandsAcross: number;
  /** The same along the feed (vertical bands and stripes). */
  bandsAlong: number;
  /** Spread of the paper's light over the sheet (lightest less darkest, share of the lightest): gradients, shadows, patches. */
  uneven: number;
  /** The steepest change of the paper's light between points 10 mm apart (share of the lighter): a shadow's or a patch's edge. */
  steep: number;
  /** Paper less the corner marks' black, in grey levels. */
  contrast: number;
  /** Width of a corner mark's edge (10-90 % rise), mm. */
  blurMm: number;
  /** Mean step across 8-pixel block edges over the mean step inside blocks (about 1 on a clean scan). */
  blockiness: number;
  /** Dark specks (toner, dirt) in the bare margins, per cm². */
  specks: number;
  /** The largest of those specks, mm² (margin-specks.ts); 0 without specks, Infinity when one could not be measured. */
  speckSize: number;
  /**
   * The largest speck that could be measured, mm² (0 without one): where another ran on
   * (`speckSize` Infinity), what the page's specks reach at least (speck-spots.ts, `shortOnSpecks`).
   */
  speckMeasured: number;
  /**
   * How strongly the other side of a duplex sheet shows through (share of its black): its large
   * corner mark, mirrored, lies around this side's top-right one; 0 on single-sided cards.
   */
  showThrough: number;
  /** Share of the paper map's level by which an area's ring of paper may move it; 0: areas are judged against the paper map. */
  local: number;
}

/**
 * A margin sample is a speck when it is darker than the paper around it by this share of the
 * page's contrast (paper less the corner marks' black): a copier's faintest toner specks are
 * about 0.4 of it, the deepest band generator C draws about 0.25.
 */
const SPECK_DEPTH = 0.3;

/** Limits beyond which no area on the page can be judged safely: refused with 1004. */
export const QUALITY_LIMITS = {
  /** Grey levels between paper and print: below this, a fill and the paper under a band cannot be told apart. */
  minContrast: 30,
  /** A band this deep is as dark as light pencil: areas under it cannot be read. */
  maxBands: 0.35,
  /**
   * From these (bands, the steepest change of the paper's light) the areas are judged against
   * their own ring of paper. A scanner's smooth falloff (generator A's uneven light: up to 0.22
   * over the sheet, at most 0.03 per 10 mm) stays with the paper map.
   */
  localBands: 0.05,
  localSteep: 0.08,
  /**
   * From these (specks per cm² of margin, show-through of the other side) a fill told only by a
   * short stroke or a patch (a speck, the other side's mark showing through look the same) is
   * uncertain. Specks: one speck's sample in the margins (about 0.013 per cm²) is enough. On
   * generator C's tuning pages 98 of 100 bad-photocopy sides at 200 dpi and all 100 at 150 dpi
   * measured at least that; every side of its classes without specks, and all of generator A's
   * (160 tuning pages at 100-300 dpi, with dust on the glass), 0. Under the earlier limit of 0.1
   * a quarter of the photocopies were not cautious, and specks in empty areas read as fills.
   */
  cautionSpecks: 0.01,
  cautionShowThrough: 0.17,
} as const;

/**
 * A profile's deepest dip (share of the paper's level) below the paper on *both* sides of it
 * (the 80th percentile of the ±`half` samples left and right): a band is darker than the paper
 * before and after it; a shadow's edge, darker on one side only, is no band.
 */
function deepestDip(p: Float32Array, half: number): { dip: number } {
  const n = p.length;
  let dip = 0;
  // The ±`half` windows slide one sample a step, each kept sorted (measured: sorting both
  // windows afresh at every sample took about a sixth of a card side's recognition).
  const left = new SortedWindow(half),
    right = new SortedWindow(half);
  for (let k = 1; k <= Math.min(n - 1, half); k++) right.add(p[k]!);
  for (let i = 0; i < n; i++) {
    const ref = Math.min(left.quantile(0.8), right.quantile(0.8));
    if (ref > 0) dip = Math.max(dip, (ref - p[i]!) / ref);
    left.add(p[i]!);
    if (i - half >= 0) left.remove(p[i - half]!);
    if (i + 1 < n) right.remove(p[i + 1]!);
    if (i + 1 + half < n) right.add(p[i + 1 + half]!);
  }
  return { dip };
}

/** The middle of three numbers. */
function median3(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}

/** The side margins' columns of the paper's steps (page x, mm) and the grid's column beside each. */
const MARGIN_COLUMNS = [
  [10, 20],
  [200, 190],
] as const;

/** The q-quantile of a few grey values (NaN left out). */
function small(values: ArrayLike<number>, q: number): number {
  // Sorted by insertion in a typed array: this runs for every step of every margin profile (a
  // few dozen values), where filtering and sorting a plain array with a comparator took about a
  // tenth of a card side's recognition; the paper map's few hundred values, once a page, cost
  // little more.
  const v = new Float64Array(values.length);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (Number.isNaN(x)) continue;
    let j = n++;
    while (j > 0 && v[j - 1]! > x) {
      v[j] = v[j - 1]!;
      j--;
    }
    v[j] = x;
  }
  return n === 0 ? Number.NaN : v[Math.min(n - 1, Math.floor(q * n))]!;
}

/**
 * Bands and unevenness, read where every card leaves the paper bare: the side margins (page
 * x 3-14 and 196-207 mm, between the corner windows) for bands across the feed, the top and
 * bottom margins (y 3-12 and 287-294 mm: above the title, below the footer) for bands along it, each as a profile in the page's
 * own millimetres (0.5 mm steps; the paper's level at each step is the 80th percentile across
 * the margin: a speck or a streak is no band). A band runs across the whole sheet, so the
 * margins see it as deep as the areas do. Unevenness: the spread of the paper map over the
 * content (10 mm grid).
 */
export function measureBands(
  img: GreyImage,
  h: Homography,
  pxmm: number,
  streaks: Uint8Array,
  paperLevel: (x: number, y: number) => number,
  black: number,
): Pick<PageQuality, 'bandsAcross' | 'bandsAlong' | 'uneven' | 'steep' | 'specks' | 'speckSize' | 'speckMeasured'> {
  // `apply` inlined (the same arithmetic): this runs for every sample of the four margins.
  const [h0, h1, h2, h3, h4, h5, h6, h7, h8] = Array.from(h);
  const at = (u: number, v: number) => {
    const w = h6! * u + h7! * v + h8!;
    const x = Math.round((h0! * u + h1! * v + h2!) / w - 0.5),
      y = Math.round((h3! * u + h4! * v + h5!) / w - 0.5);
    return x < 0 || y < 0 || x >= img.width || y >= img.height || streaks[x] === 1 ? NaN : img.data[y * img.width + x]!;
  };
  const step = Math.max(0.5, 1 / pxmm);
  const half = Math.round(12 / step);
  let dark = 0,
    seen = 0,
    speckSize = 0,
    speckMeasured = 0;
  // Whether the page point (u, v) lies in a dark spot at least half a millimetre across: at
  // least five of the nine points of a 3 × 3 grid a quarter millimetre apart around it are
  // darker than `under` (a grain of dust, a pixel or two smeared by the JPEG, darkens one or two).
  const spread = (u: number, v: number, under: number) => {
    let n = 0;
    for (let dv = -0.25; dv <= 0.25; dv += 0.25)
      for (let du = -0.25; du <= 0.25; du += 0.25) if (at(u + du, v + dv) < under) n++;
    return n >= 5;
  };
  // A margin's profile: `across` its page coordinates across the margin, `down` whether the
  // profile runs down the page (t is y) or along it (t is x).
  const profile = (from: number, to: number, across: number[], down: boolean) => {
    const p: number[] = [];
    const line = new Float64Array(across.length);
    for (let t = from; t <= to; t += step) {
      for (let i = 0; i < across.length; i++) line[i] = down ? at(across[i]!, t) : at(t, across[i]!);
      const g = small(line, 0.8);
      if (Number.isNaN(g)) continue;
      p.push(g);
      // Specks: samples darker than the paper 1.5 mm either side along the margin by a share of
      // the page's contrast (a shadow's edge, wider, is no speck; a band is lighter than that),
      // and large enough to be taken for a mark: a spot at least half a millimetre across dark
      // at half that depth (a grain of dust on the glass, a pixel or two, is not).
      for (let i = 0; i < line.length; i++) {
        const x = line[i]!;
        if (Number.isNaN(x)) continue;
        seen++;
        const ref = Math.min(g, Math.max(line[i - 3] ?? NaN, line[i + 3] ?? NaN));
        const depth = SPECK_DEPTH * (ref - black);
        if (
          ref - x > depth &&
          (down ? spread(across[i]!, t, ref - depth / 2) : spread(t, across[i]!, ref - depth / 2))
        ) {
          dark++;
          const q = down ? apply(h, across[i]!, t) : apply(h, t, across[i]!);
          const size = speckArea(img, Math.round(q.x - 0.5), Math.round(q.y - 0.5), ref, black, pxmm, streaks);
          speckSize = Math.max(speckSize, size);
          if (Number.isFinite(size)) speckMeasured = Math.max(speckMeasured, size);
        }
      }
    }
    // A band is at least a millimetre wide: the median of three steps leaves it and takes out
    // the scanner's noise.
    const m = p.map((x, i) => (i === 0 || i === p.length - 1 ? x : median3(p[i - 1]!, x, p[i + 1]!)));
    return m.length > 2 * half ? deepestDip(Float32Array.from(m), half).dip : 0;
  };
  const span = (a: number, b: number) => {
    const out: number[] = [];
    for (let x = a; x <= b; x += step) out.push(x);
    return out;
  };
  const left = span(3, 14),
    right = span(196, 207),
    top = span(3, 12),
    bottom = span(287, 294);
  const bandsAcross = Math.max(profile(34, 263, left, true), profile(34, 263, right, true));
  const bandsAlong = Math.max(profile(34, 176, top, false), profile(34, 176, bottom, false));
  const levels: number[] = [];
  const cols = 18;
  // The paper map over the whole content, from under the title to above the footer (y 20-280):
  // until the fifth round from 40 to 260 mm, which left a shadow's edge through the first rows
  // of areas unseen (generator C's heavy shadows, 200 dpi tuning pages: three empty areas read
  // filled; docs/cards.md, section 8, "Generator C, fifth round").
  for (let v = 20; v <= 280; v += 10)
    for (let u = 20; u < 20 + 10 * cols; u += 10) {
      const q = apply(h, u, v);
      levels.push(paperLevel(q.x, q.y));
    }
  const hi = small(levels, 0.95),
    lo = small(levels, 0.05);
  // The steepest step between neighbours, the fifth steepest of the sheet: a shadow's edge
  // crosses many points of the grid, the paper map's few blocks under a code or a dense barcode
  // (a step of up to 0.09 on generator A's tuning pages) are no edge.
  const steps: number[] = [];
  for (let i = 0; i < levels.length; i++) {
    const a = levels[i]!;
    if (i % cols < cols - 1) {
      const b = levels[i + 1]!;
      steps.push(Math.abs(a - b) / Math.max(a, b, 1));
    }
    if (i + cols < levels.length) {
      const b = levels[i + cols]!;
      steps.push(Math.abs(a - b) / Math.max(a, b, 1));
    }
  }
  // The side margins too (x 10 and 200 mm, beside the grid's first and last columns), between
  // the corner marks' windows (y 40-260): the paper map's 8 mm blocks take the light side of a
  // sharp edge, so a shadow's edge that runs down the margin and only its tail crosses the first
  // column of areas shows on the grid as a small step, and the map there is too light (generator
  // C's heavy shadows, 300 dpi scratch page: a step of 0.06 on the grid, three areas of the first
  // column read filled; docs/cards.md, section 8, "Generator C, eighth round").
  const mapAt = (u: number, v: number) => {
    const q = apply(h, u, v);
    return paperLevel(q.x, q.y);
  };
  const stepOf = (a: number, b: number) => Math.abs(a - b) / Math.max(a, b, 1);
  // Only across, from the margin to the grid's first column: a band or an edge across the
  // margin crosses the grid's columns too, where its steps are already measured.
  for (const [margin, inner] of MARGIN_COLUMNS)
    for (let v = 40; v <= 260; v += 10) steps.push(stepOf(mapAt(margin, v), mapAt(inner, v)));
  steps.sort((a, b) => b - a);
  return {
    bandsAcross,
    bandsAlong,
    uneven: hi > 0 ? (hi - lo) / hi : 0,
    steep: steps[4] ?? 0,
    specks: seen > 0 ? dark / ((seen * step * step) / 100) : 0,
    speckSize,
    speckMeasured,
  };
}

/**
 * The other side's show-through, from its large corner mark (9 mm, top left there): mirrored
 * over the sheet's long edge it lies centred on this side's top-right mark (6 mm), so the band
 * 3.5-4.2 mm from that centre is bare paper here with the other side's black behind it;
 * measured against the paper 5.5-7 mm out and the page's black.
 */
export function showThroughOf(img: GreyImage, h: Homography, cx: number, cy: number, black: number): number {
  const ring: number[] = [],
    out: number[] = [];
  for (let v = -7; v <= 7; v += 0.2)
    for (let u = -7; u <= 7; u += 0.2) {
      const d = Math.max(Math.abs(u), Math.abs(v));
      const into = d >= 3.5 && d <= 4.2 ? ring : d >= 5.5 ? out : null;
      if (!into) continue;
      const q = apply(h, cx + u, cy + v);
      const x = Math.round(q.x - 0.5),
        y = Math.round(q.y - 0.5);
      if (x >= 0 && y >= 0 && x < img.width && y < img.height) into.push(img.data[y * img.width + x]!);
    }
  const r = small(ring, 0.5),
    p = small(out, 0.5);
  return Number.isNaN(r) || Number.isNaN(p) || p - black < 10 ? 0 : Math.max(0, (p - r) / (p - black));
}

/** 10-90 % width (mm) of the left edge of a corner mark centred at (cx, cy) with side `sidePx`. */
export function edgeWidth(img: GreyImage, cx: number, cy: number, sidePx: number, pxmm: number): number {
  const y0 = Math.round(cy),
    x0 = Math.round(cx - sidePx / 2 - 1.5 * pxmm),
    x1 = Math.round(cx - sidePx / 2 + 1.5 * pxmm);
  if (x0 < 0 || x1 >= img.width || y0 < 3 || y0 + 3 >= img.height) return 0;
  const prof: number[] = [];
  for (let x = x0; x <= x1; x++) {
    let s = 0;
    for (let y = y0 - 2; y <= y0 + 2; y++) s += img.data[y * img.width + x]!;
    prof.push(s / 5);
  }
  const paper = Math.max(...prof.slice(0, 3)),
    black = Math.min(...prof.slice(-3));
  if (paper - black < 10) return 0;
  const cross = (f: number) => {
    const lvl = paper - f * (paper - black);
    for (let i = 1; i < prof.length; i++)
      if (prof[i]! <= lvl) {
        const a = prof[i - 1]!,
          b = prof[i]!;
        return i - 1 + (a - lvl) / Math.max(1e-6, a - b);
      }
    return prof.length;
  };
  return Math.max(0, cross(0.9) - cross(0.1)) / pxmm;
}

/** JPEG's 8×8 blocks: the mean step across block edges over the mean step inside blocks, on every 16th row of the middle of the image. */
export function blockiness(img: GreyImage): number {
  const { width: W, height: H, data } = img;
  let edge = 0,
    ne = 0,
    inner = 0,
    ni = 0;
  for (let y = Math.floor(H / 4); y < (3 * H) / 4; y += 16) {
    const o = y * W;
    for (let x = Math.floor(W / 4); x < (3 * W) / 4 - 1; x++) {
      const dlt = Math.abs(data[o + x]! - data[o + x + 1]!);
      if ((x & 7) === 7) {
        edge += dlt;
        ne++;
      } else {
        inner += dlt;
        ni++;
      }
    }
  }
  return ne > 0 && inner > 0 ? edge / ne / (inner / ni) : 1;
}

/** Why a page in this condition is refused (1004), or null when it can be read. */
export function refusal(q: PageQuality): string | null {
  if (q.contrast < QUALITY_LIMITS.minContrast)
    return `page too degraded: contrast between paper and print is ${Math.round(q.contrast)} grey levels (at least ${QUALITY_LIMITS.minContrast} needed)`;
  const bands = Math.max(q.bandsAcross, q.bandsAlong);
  if (bands > QUALITY_LIMITS.maxBands)
    return `page too degraded: bands ${Math.round(bands * 100)} % darker than the paper ${q.bandsAcross >= q.bandsAlong ? 'across' : 'along'} the feed (at most ${QUALITY_LIMITS.maxBands * 100} %)`;
  return null;
}

/**
 * A page whose printed outlines are not where its corner marks place them: the areas' 0.3 mm
 * outlines measure hardly darker than paper where they should be, and single samples inside the
 * areas are as noisy as the outlines crossing them. Then every area is measured off its place
 * (a corner mark found off its centre: on generator C's tuning pages one page with a line where
 * the toner ran short, outlines 0.15 and noise 0.16, read 47 empty areas filled), and the page
 * is refused. Every other tuning page of generator C at 150 and 200 dpi: outlines at least
 * 0.586, noise at most 0.038.
 */
export const REGISTRATION = { minOutline: 0.3, maxNoise: 0.08 } as const;

/** The reason a located page is refused because its outlines are not where they should be, or null. */
export function misregistration(lv: { line: number; noise: number }): string | null {
  if (lv.line >= REGISTRATION.minOutline || lv.noise <= REGISTRATION.maxNoise) return null;
  return `page not read: the printed outlines are not where the corner marks place them (they measure ${lv.line.toFixed(2)} of black, at least ${REGISTRATION.minOutline} expected); a corner mark may be damaged`;
}

/** Whether a fill told only by a short stroke or a patch is uncertain on this page (specks, strong show-through). */
export function cautious(q: PageQuality): boolean {
  return speckled(q) || strongShowThrough(q);
}

/** Whether the other side shows through strongly enough to look like a mark (a fill's patch, a tick). */
export function strongShowThrough(q: PageQuality): boolean {
  return q.showThrough >= QUALITY_LIMITS.cautionShowThrough;
}

/** Whether the page shows toner specks (one speck's sample in its margins): a spot a speck's size in an area may be one (speck-spots.ts). */
export function speckled(q: PageQuality): boolean {
  return q.specks >= QUALITY_LIMITS.cautionSpecks;
}

/** Whether areas are judged against their own ring of paper, and by how much (share of the paper map's level) that ring may move it. */
export function localAllowance(q: Pick<PageQuality, 'bandsAcross' | 'bandsAlong' | 'uneven' | 'steep'>): number {
  const bands = Math.max(q.bandsAcross, q.bandsAlong);
  if (bands < QUALITY_LIMITS.localBands && q.steep < QUALITY_LIMITS.localSteep) return 0;
  // A shadow's edge moves the paper by as much as its steepest step across 10 mm, or more.
  return Math.min(
    0.5,
    1.5 * bands + 0.03 + (q.steep >= QUALITY_LIMITS.localSteep ? Math.max(q.uneven, 2 * q.steep) : 0),
  );
}
