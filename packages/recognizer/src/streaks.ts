// Vertical streaks from dirt on an ADF's glass: a column of the image darker than its
// neighbours over the whole page. Their pixels are left out of every area's measurement, or
// a one-pixel line through a 100-dpi area would look like a pen stroke.
import type { GreyImage } from './grey-image.ts';

/** 1 for columns that belong to a streak. */
export function findStreakColumns(img: GreyImage): Uint8Array {
  const { width: W, height: H, data } = img;
  const sums = new Uint32Array(W);
  let rows = 0;
  for (let y = 0; y < H; y += 6, rows++) {
    const row = y * W;
    for (let x = 0; x < W; x++) sums[x]! += data[row + x]!;
  }
  const mask = new Uint8Array(W);
  for (let x = 4; x < W - 4; x++) {
    // Compared with columns 3-4 away on both sides: a streak is at most a few pixels wide,
    // printed content changes the column means gradually and by far less.
    const ref = Math.min(Math.max(sums[x - 3]!, sums[x - 4]!), Math.max(sums[x + 3]!, sums[x + 4]!));
    if (sums[x]! < ref * 0.9) mask[x] = 1;
  }
  return rows > 0 ? mask : new Uint8Array(W);
}
