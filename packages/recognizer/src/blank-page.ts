// Is a page that carries no card a blank side? (The back of a single-sided card scanned duplex;
// scan create's blank_page_skip, docs/api.md.) Grey or recycled paper, show-through of the front and ADF
// streaks are light or thin; what would make the page a failure instead is print or writing
// on it. The scanner's dark backing shows around a sheet that is offset, rotated or smaller
// than the scan area: it is dark, but it touches the image's border and is not on the paper.
import type { GreyImage } from './grey-image.ts';

/** Dark pixels (below this share of the paper level) that are not backing, as a share of the sheet. */
const DARK = 0.55;
const MAX_INK = 0.004;
/** The sheet must fill most of the image: a page that is mostly backing (no paper, lid open) is no blank. */
const MIN_SHEET = 0.75;
/** Nor is a page whose "paper" is darker than any paper (a black image, a scan of the lid). */
const MIN_PAPER = 96;

export function isBlank(thumb: GreyImage): boolean {
  const { width: W, height: H, data } = thumb;
  const n = W * H;
  if (n === 0) return false;
  // The backing: dark pixels connected to the image's border.
  const firstPaper = percentile(data, 0.9);
  const dark = firstPaper * DARK;
  const backing = new Uint8Array(n);
  const stack: number[] = [];
  const seed = (k: number) => {
    if (!backing[k] && data[k]! < dark) {
      backing[k] = 1;
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
    const local = localPaper(thumb);
    let ink = 0;
    for (let k = 0; k < n; k++) if (data[k]! < local(k) * DARK) ink++;
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
  for (let k = 0; k < n; k++) if (!backing[k] && data[k]! < Math.min(paper, local(k)) * DARK) ink++;
  return ink / sheet < MAX_INK;
}

/**
 * The paper's level around each thumbnail pixel: the lightest pixel of each 4 × 4 block (about
 * 2 mm: thin print does not fill one), then a grey closing over ±3 blocks (a dark thing up to
 * about 12 mm across is not paper; a shadow's edge, longer, stays where it is), then the
 * darkest of the blocks around.
 */
function localPaper(t: GreyImage): (k: number) => number {
  const B = 4,
    R = 3;
  const bw = Math.ceil(t.width / B),
    bh = Math.ceil(t.height / B);
  const blocks = new Uint8Array(bw * bh);
  for (let y = 0; y < t.height; y++)
    for (let x = 0; x < t.width; x++) {
      const i = Math.floor(y / B) * bw + Math.floor(x / B);
      const v = t.data[y * t.width + x]!;
      if (v > blocks[i]!) blocks[i] = v;
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
  return (k) => near[Math.floor(Math.floor(k / t.width) / B) * bw + Math.floor((k % t.width) / B)]!;
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
