// Is a page that carries no card a blank side? (The back of a single-sided card scanned duplex;
// service spec, blank_page_skip.) Grey or recycled paper, show-through of the front and ADF
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
  const seed = (k: number) => { if (!backing[k] && data[k]! < dark) { backing[k] = 1; stack.push(k); } };
  for (let x = 0; x < W; x++) { seed(x); seed((H - 1) * W + x); }
  for (let y = 0; y < H; y++) { seed(y * W); seed(y * W + W - 1); }
  while (stack.length) {
    const k = stack.pop()!;
    const x = k % W, y = (k - x) / W;
    if (x > 0) seed(k - 1);
    if (x < W - 1) seed(k + 1);
    if (y > 0) seed(k - W);
    if (y < H - 1) seed(k + W);
  }
  // The paper level and the ink on the sheet, without the backing.
  const hist = new Uint32Array(256);
  let sheet = 0;
  for (let k = 0; k < n; k++) if (!backing[k]) { hist[data[k]!]!++; sheet++; }
  if (sheet < n * MIN_SHEET) return false;
  let acc = 0, paper = 255;
  for (let v = 0; v < 256; v++) { acc += hist[v]!; if (acc >= 0.9 * sheet) { paper = v; break; } }
  if (paper < MIN_PAPER) return false;
  let ink = 0;
  for (let v = 0; v < paper * DARK; v++) ink += hist[v]!;
  return ink / sheet < MAX_INK;
}

function percentile(data: Uint8Array, q: number): number {
  const hist = new Uint32Array(256);
  for (let i = 0; i < data.length; i++) hist[data[i]!]!++;
  let acc = 0;
  for (let v = 0; v < 256; v++) { acc += hist[v]!; if (acc >= q * data.length) return v; }
  return 255;
}
