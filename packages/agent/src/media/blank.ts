// Blank-page detection by ink coverage on a downscaled greyscale page (docs/scanning.md, "On the
// box"). Not by JPEG size: paper grain and scanner noise make a blank page's JPEG as large as a
// page with a line of text (docs/scanning.md, "Blank pages": 215 KB blank, 229 KB text).
//
// The rule, on the page downscaled to about 50 dpi (JPEG shrink-on-load decodes it at 1/2, 1/4
// or 1/8 size directly, so this costs a fraction of a full decode):
//  0. Grey: a colour page's green channel (see greyThumbnail).
//  1. Paper level: the 90th percentile of the page (grey, tinted or dim paper all work). Below
//     96 of 255 there is no paper to see: the page is covered, ink is what is below mid-grey.
//  2. Scanner backing: dark regions (below 55% of the paper level) connected to the image border
//     are the scanner's lid or backing seen around a skewed or short sheet; they are left out,
//     with 1 mm around them. A "backing" of more than half the image is content, not backing.
//  3. A margin of 3 mm at every edge is left out (paper-edge shadows, feed marks).
//  4. Streaks: a column darker than its neighbours in every quarter of the page height is a
//     line from dirt on the ADF glass (it runs along the feed over the whole sheet); left out.
//  5. Local paper level per 8 mm tile (90th percentile, the brightest of the 3×3 tiles around,
//     never below 60% of the page's level), so uneven light or a shadow is not ink.
//  6. Ink: pixels darker than 75% of the local paper level. Show-through of the other side
//     (measured at most 18% darker than the paper) and noise stay above it; pencil and pen
//     strokes fall below it.
//  7. Specks: an ink pixel with no ink neighbour (dust) does not count.
//  8. Coverage = ink pixels / pixels judged. Blank when below 0.01%: about 6 mm² of ink on A4,
//     a pencil tick of 15 mm; every defect above alone or together measures 0.
import type { ScannedPage } from '../drivers/types.ts';
import { jpegInfo } from './jpeg-info.ts';
import { pageSharp } from './page-image.ts';

export interface BlankRule {
  /** Resolution the page is judged at, dpi. */
  detectDpi: number;
  /** A pixel is ink when it is darker than the local paper level by this fraction of it. */
  inkContrast: number;
  /** Blank when ink covers less than this fraction of the judged area. */
  maxCoverage: number;
  /** Left out at every edge, mm. */
  marginMm: number;
  /** Tile for the local paper level, mm. */
  tileMm: number;
}

export const BLANK_RULE: Readonly<BlankRule> = Object.freeze({
  detectDpi: 50,
  inkContrast: 0.25,
  maxCoverage: 0.0001,
  marginMm: 3,
  tileMm: 8,
});

export interface BlankVerdict {
  blank: boolean;
  /** Fraction (0..1) of the judged page area covered by ink. */
  coverage: number;
}

/** An 8-bit greyscale image. */
export interface GreyImage {
  data: Uint8Array;
  width: number;
  height: number;
  dpi: number;
}

export interface InkMeasure {
  coverage: number;
  /** Paper level found (0-255). */
  paper: number;
  /** Fraction of the image left out as scanner backing. */
  backing: number;
}

const BACKING_LEVEL = 0.55;
const PAPER_MIN = 96;
const LOCAL_FLOOR = 0.6;
const STREAK_DARKER = 0.03;

function percentile(hist: Uint32Array, count: number, p: number): number {
  const want = count * p;
  let acc = 0;
  for (let v = 0; v < 256; v++) {
    acc += hist[v]!;
    if (acc >= want) return v;
  }
  return 255;
}

/** Separable square dilation of a 0/1 mask by `r` pixels. */
function dilate(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  if (r <= 0) return mask;
  const tmp = new Uint8Array(mask.length);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      if (!mask[row + x]) continue;
      const a = Math.max(0, x - r),
        b = Math.min(w - 1, x + r);
      for (let k = a; k <= b; k++) tmp[row + k] = 1;
    }
  }
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (!tmp[y * w + x]) continue;
      const a = Math.max(0, y - r),
        b = Math.min(h - 1, y + r);
      for (let k = a; k <= b; k++) out[k * w + x] = 1;
    }
  }
  return out;
}

/** Ink coverage of a greyscale page (steps 1-7 of the rule above). Pure. */
export function inkCoverage(img: GreyImage, rule: BlankRule = BLANK_RULE): InkMeasure {
  const { data, width: w, height: h } = img;
  const n = w * h;
  if (w < 3 || h < 3 || data.length < n) throw new RangeError(`grey image ${w}×${h} with ${data.length} bytes`);
  const pxmm = img.dpi / 25.4;
  const m = Math.min(Math.floor((Math.min(w, h) - 1) / 2), Math.max(1, Math.round(rule.marginMm * pxmm)));

  // 1. Paper level over the inner page.
  const hist = new Uint32Array(256);
  for (let y = m; y < h - m; y++) for (let x = m; x < w - m; x++) hist[data[y * w + x]!]!++;
  const paper = Math.max(1, percentile(hist, (w - 2 * m) * (h - 2 * m), 0.9));
  if (paper < PAPER_MIN) {
    // The brightest tenth of the page is dark: there is no paper to judge against, the page is
    // covered. Ink is what is darker than mid-grey.
    let dark = 0;
    for (let v = 0; v < 128; v++) dark += hist[v]!;
    return { coverage: dark / ((w - 2 * m) * (h - 2 * m)), paper, backing: 0 };
  }

  // 2. Backing: flood fill from the border through dark pixels.
  let excluded: Uint8Array = new Uint8Array(n);
  const dark = paper * BACKING_LEVEL;
  // Allocated at the first dark border pixel: most pages have none.
  let stack: Int32Array | undefined;
  let sp = 0;
  const seed = (i: number) => {
    if (!excluded[i] && data[i]! < dark) {
      excluded[i] = 1;
      stack ??= new Int32Array(n);
      stack[sp++] = i;
    }
  };
  for (let x = 0; x < w; x++) {
    seed(x);
    seed((h - 1) * w + x);
  }
  for (let y = 0; y < h; y++) {
    seed(y * w);
    seed(y * w + w - 1);
  }
  let backingCount = sp;
  while (sp > 0) {
    const i = stack![--sp]!;
    const x = i % w;
    const before = sp;
    if (x > 0) seed(i - 1);
    if (x < w - 1) seed(i + 1);
    if (i >= w) seed(i - w);
    if (i < n - w) seed(i + w);
    backingCount += sp - before;
  }
  let backing = backingCount / n;
  if (backing > 0.5) {
    excluded = new Uint8Array(n);
    backing = 0;
  } else if (backingCount > 0) excluded = dilate(excluded, w, h, Math.max(1, Math.round(pxmm)));

  // 3. Margin.
  for (let y = 0; y < h; y++) {
    const row = y * w;
    if (y < m || y >= h - m) {
      excluded.fill(1, row, row + w);
      continue;
    }
    excluded.fill(1, row, row + m);
    excluded.fill(1, row + w - m, row + w);
  }

  // 4. Streaks: a column darker on average than the columns a few pixels either side, in each
  //    quarter of the page height, is a line from dirt on the ADF glass (it runs along the feed
  //    over the whole sheet; a drawn line does not).
  const bands = 4;
  const bandRows = (h - 2 * m) / bands;
  const isStreak = new Uint8Array(w).fill(1);
  const colMean = new Float32Array(w);
  const near: number[] = [];
  for (let b = 0; b < bands; b++) {
    const y0 = m + Math.floor(b * bandRows),
      y1 = m + Math.floor((b + 1) * bandRows);
    for (let x = 0; x < w; x++) {
      let sum = 0,
        c = 0;
      for (let y = y0; y < y1; y++) {
        const k = y * w + x;
        if (!excluded[k]) {
          sum += data[k]!;
          c++;
        }
      }
      colMean[x] = c > (y1 - y0) / 2 ? sum / c : NaN;
    }
    for (let x = 0; x < w; x++) {
      if (!isStreak[x]) continue;
      if (x < m || x >= w - m || Number.isNaN(colMean[x]!)) {
        isStreak[x] = 0;
        continue;
      }
      near.length = 0;
      for (let d = 2; d <= 5; d++)
        for (const xx of [x - d, x + d]) if (xx >= 0 && xx < w && !Number.isNaN(colMean[xx]!)) near.push(colMean[xx]!);
      near.sort((p, q) => p - q);
      if (near.length < 4 || !(colMean[x]! < near[near.length >> 1]! - STREAK_DARKER * paper)) isStreak[x] = 0;
    }
  }
  for (let x = 0; x < w; x++) if (isStreak[x]) for (let y = 0; y < h; y++) excluded[y * w + x] = 1;

  // 5. Local paper level per tile.
  const t = Math.max(4, Math.round(rule.tileMm * pxmm));
  const tx = Math.ceil(w / t),
    ty = Math.ceil(h / t);
  const local = new Float32Array(tx * ty);
  const th = new Uint32Array(256);
  for (let j = 0; j < ty; j++) {
    for (let i = 0; i < tx; i++) {
      th.fill(0);
      let c = 0;
      for (let y = j * t; y < Math.min(h, (j + 1) * t); y++) {
        for (let x = i * t; x < Math.min(w, (i + 1) * t); x++) {
          const k = y * w + x;
          if (!excluded[k]) {
            th[data[k]!]!++;
            c++;
          }
        }
      }
      local[j * tx + i] = c >= (t * t) / 4 ? percentile(th, c, 0.9) : -1;
    }
  }
  const floor = paper * LOCAL_FLOOR;
  const threshold = new Float32Array(tx * ty);
  for (let j = 0; j < ty; j++) {
    for (let i = 0; i < tx; i++) {
      let best = -1;
      for (let dj = -1; dj <= 1; dj++)
        for (let di = -1; di <= 1; di++) {
          const jj = j + dj,
            ii = i + di;
          if (jj >= 0 && jj < ty && ii >= 0 && ii < tx) best = Math.max(best, local[jj * tx + ii]!);
        }
      threshold[j * tx + i] = Math.max(best < 0 ? paper : best, floor) * (1 - rule.inkContrast);
    }
  }

  // 6. Ink.
  const ink = new Uint8Array(n);
  let judged = 0;
  for (let y = 0; y < h; y++) {
    const trow = Math.floor(y / t) * tx;
    for (let x = 0; x < w; x++) {
      const k = y * w + x;
      if (excluded[k]) continue;
      judged++;
      if (data[k]! < threshold[trow + Math.floor(x / t)]!) ink[k] = 1;
    }
  }
  if (judged === 0) return { coverage: 0, paper, backing };

  // 7. Specks: count ink pixels with at least one ink neighbour.
  let count = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const k = y * w + x;
      if (!ink[k]) continue;
      if (
        ink[k - 1] ||
        ink[k + 1] ||
        ink[k - w] ||
        ink[k + w] ||
        ink[k - w - 1] ||
        ink[k - w + 1] ||
        ink[k + w - 1] ||
        ink[k + w + 1]
      )
        count++;
    }
  }
  return { coverage: count / judged, paper, backing };
}

/**
 * The page downscaled to about `dpi`, greyscale: a grey page as it is, a colour page's green
 * channel. Green carries 59% of luminance and is dark under every usual ink (black, blue, red,
 * pencil); taking it costs libvips nothing, where a luminance conversion costs more than the
 * downscaled decode itself.
 */
export async function greyThumbnail(page: ScannedPage, dpi: number = BLANK_RULE.detectDpi): Promise<GreyImage> {
  const f = page.dpi / dpi;
  let s = await pageSharp(page);
  if (f >= 1.5)
    s = s.resize({
      width: Math.max(3, Math.round(page.width / f)),
      height: Math.max(3, Math.round(page.height / f)),
      fit: 'fill',
    });
  const img = page.image;
  const channels =
    img.format === 'raw'
      ? img.channels
      : img.format === 'jpeg'
        ? (jpegInfo(img.data)?.components ?? 3)
        : ((await (await pageSharp(page)).metadata()).channels ?? 3);
  if (channels >= 3) s = s.extractChannel(1);
  const { data, info } = await s.raw().toBuffer({ resolveWithObject: true });
  const out =
    info.channels === 1
      ? new Uint8Array(data.buffer, data.byteOffset, info.width * info.height)
      : new Uint8Array(info.width * info.height).map((_, i) => data[i * info.channels]!);
  return { data: out, width: info.width, height: info.height, dpi: page.dpi * (info.width / page.width) };
}

/** Whether a scanned page is blank, with its ink coverage. */
export async function detectBlank(page: ScannedPage, rule: BlankRule = BLANK_RULE): Promise<BlankVerdict> {
  const { coverage } = inkCoverage(await greyThumbnail(page, rule.detectDpi), rule);
  return { blank: coverage < rule.maxCoverage, coverage };
}
