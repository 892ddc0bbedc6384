// How large a page's toner specks are, from those in its bare margins (docs/cards.md, section
// 5, step 4): a dot in an area that is clearly larger than the largest speck the margins show
// is a person's mark, not a speck (speck-spots.ts). Measured the way an area's patches are
// measured (mark-evidence.ts): the pixels connected to the speck that are darker than the paper
// by `T_BLOB_GROW` of the page's contrast, its blur halo included.
import type { GreyImage } from './grey-image.ts';
import { T_BLOB_GROW } from './mark-evidence.ts';

/** A speck is measured within this many millimetres of where it was found; one reaching further is no speck. */
const REACH_MM = 1.5;

/**
 * The area (mm²) of the dark spot at image pixel (x, y): pixels darker than `paper` by
 * `T_BLOB_GROW` of (paper - black), connected to it, ADF streak columns left out. Infinity when
 * it reaches `REACH_MM` from its start (print, a line, a shadow's edge: not a speck).
 */
export function speckArea(
  img: GreyImage,
  x0: number,
  y0: number,
  paper: number,
  black: number,
  pxmm: number,
  streaks: Uint8Array,
  /** Infinity also where the spot reaches an ADF streak's columns (where it is not seen). */
  streakEnds = false,
): number {
  const under = paper - T_BLOB_GROW * (paper - black);
  const reach = Math.ceil(REACH_MM * pxmm);
  const side = 2 * reach + 1;
  const seen = new Uint8Array(side * side);
  const stack = [reach * side + reach];
  const dark = (x: number, y: number) =>
    x >= 0 && y >= 0 && x < img.width && y < img.height && streaks[x] !== 1 && img.data[y * img.width + x]! < under;
  if (!dark(x0, y0)) return 0;
  seen[reach * side + reach] = 1;
  let n = 0;
  while (stack.length > 0) {
    const k = stack.pop()!;
    const i = k % side,
      j = (k - i) / side;
    n++;
    if (i === 0 || j === 0 || i === side - 1 || j === side - 1) return Infinity;
    for (const [di, dj] of [
      [1, 0],
      [-1, 0],
      [0, 1],
      [0, -1],
    ] as const) {
      const kk = (j + dj) * side + i + di;
      if (streakEnds && streaks[x0 - reach + i + di] === 1) return Infinity;
      if (!seen[kk] && dark(x0 - reach + i + di, y0 - reach + j + dj)) {
        seen[kk] = 1;
        stack.push(kk);
      }
    }
  }
  return n / (pxmm * pxmm);
}
