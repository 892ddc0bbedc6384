// Vertical streaks from dirt on an ADF's glass: a column of the image darker than its
// neighbours over the whole page. Their pixels are left out of every area's measurement, or
// a one-pixel line through a 100-dpi area would look like a pen stroke; where a code is read,
// the column is brightened back by its measured darkening instead (a streak through a barcode
// reads as an extra bar).
import type { GreyImage } from './grey-image.ts';

export interface Streaks {
  /** 1 for columns that belong to a streak. */
  mask: Uint8Array;
  /** How much darker a streak column is than the columns beside it (1 elsewhere). */
  gain: Float32Array;
}

export function findStreaks(img: GreyImage): Streaks {
  const { width: W, height: H, data } = img;
  const sums = new Uint32Array(W);
  let rows = 0;
  for (let y = 0; y < H; y += 6, rows++) {
    const row = y * W;
    for (let x = 0; x < W; x++) sums[x]! += data[row + x]!;
  }
  const mask = new Uint8Array(W);
  for (let x = 8; x < W - 8; x++) {
    // Compared with the lightest of the columns 3-8 away on each side: a streak is at most a few
    // pixels wide, printed content changes the column means gradually and by far less. Not only
    // 3-4 away: a streak one pixel from a wider one (dust grains side by side) had its reference
    // in the other streak and was missed; on C's tuning pages of heavy streaks at 200 dpi (a
    // blurred scan, card 19) its unmasked line read five empty areas filled (docs/cards.md,
    // section 8, "Generator C, eleventh round").
    const ref = Math.min(
      Math.max(sums[x - 3]!, sums[x - 4]!, sums[x - 6]!, sums[x - 8]!),
      Math.max(sums[x + 3]!, sums[x + 4]!, sums[x + 6]!, sums[x + 8]!),
    );
    if (sums[x]! < ref * 0.9) mask[x] = 1;
  }
  // A streak wider than two pixels (heavy dust) hides from the comparison 3-4 columns away on
  // one side: runs of at least four columns darker than the columns 5-10 away on both sides
  // are streaks too. (Runs that narrow were never seen in print: a column through a card's
  // print is at most a few per cent darker over the whole page.)
  let run = 0;
  for (let x = 10; x <= W - 10; x++) {
    const dark =
      x < W - 10 &&
      sums[x]! <
        0.9 *
          Math.min(
            Math.max(sums[x - 5]!, sums[x - 7]!, sums[x - 10]!),
            Math.max(sums[x + 5]!, sums[x + 7]!, sums[x + 10]!),
          );
    if (dark) {
      run++;
      continue;
    }
    if (run >= 4) for (let k = x - run; k < x; k++) mask[k] = 1;
    run = 0;
  }
  extendToEdges(mask, sums);
  const gain = new Float32Array(W).fill(1);
  if (rows === 0) return { mask: new Uint8Array(W), gain };
  // JPEG smears a one-pixel line into its neighbours, a little too faint to be found but dark
  // enough to look like a thin stroke: their columns go too.
  const wide = new Uint8Array(mask);
  for (let x = 1; x < W - 1; x++)
    if (mask[x]) {
      wide[x - 1] = 1;
      wide[x + 1] = 1;
    }
  for (let x = 0; x < W; x++) {
    if (!wide[x]) continue;
    let l = x - 1,
      r = x + 1;
    while (l >= 0 && wide[l]) l--;
    while (r < W && wide[r]) r++;
    const ref = l >= 0 && r < W ? (sums[l]! + sums[r]!) / 2 : l >= 0 ? sums[l]! : r < W ? sums[r]! : sums[x]!;
    gain[x] = ref > 0 ? Math.min(1, Math.max(0.2, sums[x]! / ref)) : 1;
  }
  return { mask: wide, gain };
}

/**
 * A streak 12-15 pixels wide is found only in its middle: its edge columns have their
 * reference columns inside it. Left in the samples, those edges are lines through every area
 * they cross: on C's clean tuning cards at 150 dpi a streak 13 pixels wide at half the light
 * read 54 empty areas filled (docs/cards.md, section 8, "Generator C, fourteenth round"). Each
 * found run is grown outwards while the next column is darker than `darker` of the lightest of
 * the `beyond` columns past it: over a streak's sharp edge, not along the gradual change of
 * printed content; at most the run's own width plus `extra` columns on each side.
 */
const EDGE_GROWTH = { darker: 0.95, beyond: 6, extra: 2 } as const;

function extendToEdges(mask: Uint8Array, sums: Uint32Array): void {
  const W = mask.length;
  const lightest = (from: number, step: -1 | 1) => {
    let m = 0;
    for (let k = 1; k <= EDGE_GROWTH.beyond; k++) {
      const x = from + k * step;
      if (x >= 0 && x < W) m = Math.max(m, sums[x]!);
    }
    return m;
  };
  const runs: Array<[number, number]> = [];
  for (let x = 0; x < W; x++) {
    if (!mask[x]) continue;
    let b = x;
    while (b + 1 < W && mask[b + 1]) b++;
    runs.push([x, b]);
    x = b;
  }
  const edge = (x: number, step: -1 | 1) => sums[x]! < EDGE_GROWTH.darker * lightest(x, step);
  for (const [a, b] of runs) {
    const cap = b - a + 1 + EDGE_GROWTH.extra;
    for (let x = a - 1; x >= 0 && a - x <= cap && edge(x, -1); x--) mask[x] = 1;
    for (let x = b + 1; x < W && x - b <= cap && edge(x, 1); x++) mask[x] = 1;
  }
}
