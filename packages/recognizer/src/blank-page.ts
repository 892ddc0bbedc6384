// Is a page that carries no card a blank side? (The back of a single-sided card scanned duplex;
// scan create's blank_page_skip, docs/api.md.) Grey or recycled paper, show-through of the front and ADF
// streaks are light or thin; what would make the page a failure instead is print or writing
// on it. The scanner's dark backing shows around a sheet that is offset, rotated or smaller
// than the scan area: it is dark, but it touches the image's border and is not on the paper.
import type { GreyImage } from './grey-image.ts';

/** Dark pixels (below this share of the paper level) that are not backing, as a share of the sheet. */
const DARK = 0.55;
const MAX_INK = 0.004;
/**
 * A backing about as grey as the limit between paper and ink (half the paper's level) is split
 * by the scanner's noise: its darker pixels next to the border are backing, and islands of dark
 * pixels among its lighter ones, cut off from the border, would count as ink (on generator C's
 * bad photocopy at 150 dpi, a backing at 0.55 of the paper made 0.44 % of a blank back "ink").
 * So the backing grows from its dark pixels through those under `BACKING_GROW` of the paper
 * level, within `BACKING_REACH` thumbnail pixels (about 10 mm at 2 px/mm) of the image's
 * border: the strip is at most a few millimetres wide, a sheet's paper is far lighter.
 */
const BACKING_GROW = 0.7;
const BACKING_REACH = 20;
/** The sheet must fill most of the image: a page that is mostly backing (no paper, lid open) is no blank. */
const MIN_SHEET = 0.75;
/** Nor is a page whose "paper" is darker than any paper (a black image, a scan of the lid). */
const MIN_PAPER = 96;

export function isBlank(thumb: GreyImage): boolean {
  const { width: W, height: H, data } = thumb;
  const n = W * H;
  if (n === 0) return false;
  // The backing: dark pixels connected to the image's border.
  const dark = percentile(data, 0.9) * DARK;
  const darkMask = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (data[k]! < dark) darkMask[k] = 1;
  const backing = widenBacking(borderConnected(darkMask, W, H), data, dark / DARK, W, H);
  // The paper level and the ink on the sheet, without the backing.
  const hist = new Uint32Array(256);
  let sheet = 0;
  for (let k = 0; k < n; k++)
    if (!backing[k]) {
      hist[data[k]!]!++;
      sheet++;
    }
  if (sheet < n * MIN_SHEET) {
    // Mostly "backing": a cast shadow over the sheet's edge reads as such too. Taken as a
    // sheet after all when the whole image is light somewhere and nothing on it is dark
    // against the paper right around it (the backing's region is as large as a shadow's).
    if (percentile(data, 0.9) < MIN_PAPER) return false;
    // The backing itself, a strip a few millimetres wide along the image's border, is dark
    // against the paper the grey closing carries over it: what is dark against its local paper
    // and connected to the border is that strip (or a shadow's edge there), not ink; print and
    // writing lie inside the sheet, away from its edge.
    const local = localPaper(thumb);
    const inked = new Uint8Array(n);
    for (let k = 0; k < n; k++) if (data[k]! < local[k]! * DARK) inked[k] = 1;
    const edge = borderConnected(inked, W, H);
    let ink = 0;
    for (let k = 0; k < n; k++) if (inked[k] && !edge[k]) ink++;
    return ink / n < MAX_INK;
  }
  let acc = 0,
    paper = 255;
  for (let v = 0; v < 256; v++) {
    acc += hist[v]!;
    if (acc >= 0.9 * sheet) {
      paper = v;
      break;
    }
  }
  if (paper < MIN_PAPER) return false;
  // Ink is dark against the paper right around it (docs/cards.md, section 5, step 4): a cast
  // shadow or a lighting gradient over a blank back darkens its paper, not into ink.
  const local = localPaper(thumb);
  let ink = 0;
  for (let k = 0; k < n; k++) if (!backing[k] && data[k]! < Math.min(paper, local[k]!) * DARK) ink++;
  return ink / sheet < MAX_INK;
}

/** `backing` grown through pixels darker than `BACKING_GROW` of `paper` near the image's border (`BACKING_REACH`). */
function widenBacking(backing: Uint8Array, data: Uint8Array, paper: number, W: number, H: number): Uint8Array {
  const under = paper * BACKING_GROW;
  const near = (k: number) => {
    const x = k % W,
      y = (k - x) / W;
    return Math.min(x, y, W - 1 - x, H - 1 - y) < BACKING_REACH;
  };
  const stack: number[] = [];
  for (let k = 0; k < backing.length; k++) if (backing[k]) stack.push(k);
  while (stack.length) {
    const k = stack.pop()!;
    const x = k % W;
    for (const kk of [x > 0 ? k - 1 : -1, x < W - 1 ? k + 1 : -1, k - W, k + W]) {
      if (kk < 0 || kk >= backing.length || backing[kk] || !(data[kk]! < under) || !near(kk)) continue;
      backing[kk] = 1;
      stack.push(kk);
    }
  }
  return backing;
}

/** The pixels of `mask` (1s) connected to the image's border through other pixels of it. */
function borderConnected(mask: Uint8Array, W: number, H: number): Uint8Array {
  const out = new Uint8Array(W * H);
  const stack: number[] = [];
  const seed = (k: number) => {
    if (!out[k] && mask[k]) {
      out[k] = 1;
      stack.push(k);
    }
  };
  for (let x = 0; x < W; x++) {
    seed(x);
    seed((H - 1) * W + x);
  }
  for (let y = 0; y < H; y++) {
    seed(y * W);
    seed(y * W + W - 1);
  }
  while (stack.length) {
    const k = stack.pop()!;
    const x = k % W,
      y = (k - x) / W;
    if (x > 0) seed(k - 1);
    if (x < W - 1) seed(k + 1);
    if (y > 0) seed(k - W);
    if (y < H - 1) seed(k + W);
  }
  return out;
}

/**
 * The paper's level around each thumbnail pixel: the lightest pixel of each 4 × 4 block (about
 * 2 mm: thin print does not fill one), then a grey closing over ±3 blocks (a dark thing up to
 * about 12 mm across is not paper; a shadow's edge, longer, stays where it is), then the
 * darkest of the blocks around.
 */
function localPaper(t: GreyImage): Uint8Array {
  const B = 4,
    R = 3;
  const bw = Math.ceil(t.width / B),
    bh = Math.ceil(t.height / B);
  const blocks = new Uint8Array(bw * bh);
  for (let y = 0; y < t.height; y++) {
    const row = Math.floor(y / B) * bw;
    for (let x = 0; x < t.width; x++) {
      const i = row + Math.floor(x / B);
      const v = t.data[y * t.width + x]!;
      if (v > blocks[i]!) blocks[i] = v;
    }
  }
  const pass = (src: Uint8Array, max: boolean, dx: number, dy: number) => {
    const out = new Uint8Array(bw * bh);
    for (let y = 0; y < bh; y++)
      for (let x = 0; x < bw; x++) {
        let m = max ? 0 : 255;
        for (let k = -R; k <= R; k++) {
          const xx = x + k * dx,
            yy = y + k * dy;
          if (xx < 0 || yy < 0 || xx >= bw || yy >= bh) continue;
          const v = src[yy * bw + xx]!;
          m = max ? Math.max(m, v) : Math.min(m, v);
        }
        out[y * bw + x] = m;
      }
    return out;
  };
  const closed = pass(pass(pass(pass(blocks, true, 1, 0), true, 0, 1), false, 1, 0), false, 0, 1);
  // A block astride a shadow's edge took the lit side's level: each pixel takes the darkest of
  // its block and the blocks around it.
  const near = new Uint8Array(bw * bh);
  for (let y = 0; y < bh; y++)
    for (let x = 0; x < bw; x++) {
      let m = 255;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx,
            yy = y + dy;
          if (xx >= 0 && yy >= 0 && xx < bw && yy < bh) m = Math.min(m, closed[yy * bw + xx]!);
        }
      near[y * bw + x] = m;
    }
  // Per pixel, as the callers read it for every pixel of the thumbnail.
  const out = new Uint8Array(t.width * t.height);
  for (let y = 0; y < t.height; y++) {
    const row = Math.floor(y / B) * bw;
    for (let x = 0; x < t.width; x++) out[y * t.width + x] = near[row + Math.floor(x / B)]!;
  }
  return out;
}

function percentile(data: Uint8Array, q: number): number {
  const hist = new Uint32Array(256);
  for (let i = 0; i < data.length; i++) hist[data[i]!]!++;
  let acc = 0;
  for (let v = 0; v < 256; v++) {
    acc += hist[v]!;
    if (acc >= q * data.length) return v;
  }
  return 255;
}
