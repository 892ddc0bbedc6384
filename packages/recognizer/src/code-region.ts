// Decodes a QR code or a Code128 barcode in the image region predicted for it by the page's
// homography (docs/cards.md, "How recognition works": 2-4 ms on the predicted area instead of
// 26-37 ms on the whole page). Nothing in the page image is modified: every variant below is a copy.
import { crop, shrink, type GreyImage } from './grey-image.ts';
import { apply, type Homography } from './homography.ts';
import { readCode } from './codes.ts';
import type { Box } from './layout.ts';
import type { Streaks } from './streaks.ts';

/**
 * Tries, in order: the plain crop, downscaled to about `pxPerMmWanted`; the same with ADF streak
 * columns brightened back (a streak across a barcode reads as an extra bar);
 * the region resampled upright through the homography (no rotation or perspective left for the
 * decoder to guess), then binarised against its local mean; finally the decoder's harder modes.
 */
export async function readRegion(
  img: GreyImage,
  h: Homography,
  box: Box,
  pxmm: number,
  format: 'QRCode' | 'Code128',
  pxPerMmWanted: number,
  streaks?: Streaks,
): Promise<string | null> {
  const { x, y, w, h: hh } = box;
  const corners = [apply(h, x, y), apply(h, x + w, y), apply(h, x, y + hh), apply(h, x + w, y + hh)];
  const xs = corners.map((p) => p.x),
    ys = corners.map((p) => p.y);
  const x0 = Math.max(0, Math.floor(Math.min(...xs))),
    y0 = Math.max(0, Math.floor(Math.min(...ys)));
  const region = crop(img, x0, y0, Math.max(...xs), Math.max(...ys));
  if (region.width < 8 || region.height < 8) return null;
  const ppm = Math.max(pxPerMmWanted, 4);
  let upright: GreyImage | undefined, native: GreyImage | undefined;
  const uprightImage = () => (upright ??= warpUpright(region, x0, y0, h, box, ppm));
  // The second opinion needs every bar: the scan's own resolution (at most 12 px/mm).
  const nativeImage = () => (native ??= warpUpright(region, x0, y0, h, box, Math.min(12, Math.max(pxmm, ppm))));
  // A QR code's Reed-Solomon blocks make a wrong decode practically impossible; Code128 has one
  // check character, and a blurred 100-dpi scan was seen to decode to another valid number.
  // Every Code128 decode is therefore checked against the bars actually printed.
  const accept = async (text: string | null): Promise<string | null> => {
    if (text === null || format === 'QRCode') return text;
    return (await matchesBars(nativeImage(), text)) ? text : null;
  };
  const f = Math.floor(pxmm / pxPerMmWanted);
  const first = await accept(await readCode(f >= 2 ? shrink(region, f) : region, format));
  if (first !== null) return first;
  if (streaks && fillStreaks(region, streaks, x0)) {
    upright = undefined;
    native = undefined;
    const cleaned = await accept(await readCode(f >= 2 ? shrink(region, f) : region, format));
    if (cleaned !== null) return cleaned;
  }
  return (
    (await accept(await readCode(uprightImage(), format))) ??
    (await accept(await readCode(binarise(uprightImage(), Math.round(3 * ppm)), format))) ??
    (await accept(await readCode(region, format, true)))
  );
}

/**
 * A second opinion on a Code128 decode from other pixels: the bar rows of the upright image are
 * split into an upper and a lower band, each decoded on its own. The text stands if a band reads
 * it too and no band reads anything else; a decode that noise produced once is not repeated
 * by the other rows.
 */
async function matchesBars(img: GreyImage, text: string): Promise<boolean> {
  const { width: W, height: H, data } = img;
  // Rows that cross the bars are dark over a large part of their width; text and paper rows are not.
  const hist = new Uint32Array(256);
  for (let i = 0; i < data.length; i++) hist[data[i]!]!++;
  const pct = (q: number) => {
    let acc = 0;
    for (let v = 0; v < 256; v++) {
      acc += hist[v]!;
      if (acc >= q * data.length) return v;
    }
    return 255;
  };
  const dark = (pct(0.02) + pct(0.98)) / 2;
  const share = new Float64Array(H);
  for (let r = 0; r < H; r++) {
    let n = 0;
    for (let c = 0; c < W; c++) if (data[r * W + c]! < dark) n++;
    share[r] = n / W;
  }
  const most = Math.max(...share);
  const rows: number[] = [];
  for (let r = 0; r < H; r++) if (share[r]! >= most * 0.6) rows.push(r);
  if (rows.length < 6) return false;
  const half = Math.floor(rows.length / 2);
  const reads: Array<string | null> = [];
  for (const band of [rows.slice(0, half), rows.slice(half)]) {
    // Each band repeated to at least 12 rows: the decoder wants some height.
    const reps = Math.max(1, Math.ceil(12 / band.length));
    const out = new Uint8Array(W * band.length * reps + W * 8).fill(255);
    let k = 4 * W;
    for (const r of band) for (let t = 0; t < reps; t++, k += W) out.set(data.subarray(r * W, r * W + W), k);
    reads.push(await readCode({ data: out, width: W, height: band.length * reps + 8 }, 'Code128'));
  }
  return reads.some((r) => r === text) && reads.every((r) => r === null || r === text);
}

/** Brightens the crop's streak columns (image columns x0 + i) back by their darkening; false if none crosses it. */
function fillStreaks(region: GreyImage, streaks: Streaks, x0: number): boolean {
  const { width: W, height: H, data } = region;
  let any = false;
  for (let i = 0; i < W; i++) {
    const g = streaks.gain[x0 + i]!;
    if (streaks.mask[x0 + i] !== 1 || g >= 0.99) continue;
    any = true;
    for (let y = 0; y < H; y++) data[y * W + i] = Math.min(255, data[y * W + i]! / g);
  }
  return any;
}

/** Local-mean threshold: the decoders' own binarisers struggle with blur plus uneven light. */
function binarise(img: GreyImage, win: number): GreyImage {
  const { width: W, height: H, data } = img;
  const integral = new Float64Array((W + 1) * (H + 1));
  for (let y = 0; y < H; y++) {
    let row = 0;
    for (let x = 0; x < W; x++) {
      row += data[y * W + x]!;
      integral[(y + 1) * (W + 1) + x + 1] = integral[y * (W + 1) + x + 1]! + row;
    }
  }
  const out = new Uint8Array(W * H);
  const r = Math.max(2, win);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const x0 = Math.max(0, x - r),
        x1 = Math.min(W, x + r + 1),
        y0 = Math.max(0, y - r),
        y1 = Math.min(H, y + r + 1);
      const sum =
        integral[y1 * (W + 1) + x1]! -
        integral[y0 * (W + 1) + x1]! -
        integral[y1 * (W + 1) + x0]! +
        integral[y0 * (W + 1) + x0]!;
      out[y * W + x] = data[y * W + x]! < (sum / ((x1 - x0) * (y1 - y0))) * 0.97 ? 0 : 255;
    }
  return { data: out, width: W, height: H };
}

/** The layout box resampled upright at `ppm` pixels per mm from a crop whose top-left is image pixel (ox, oy). */
function warpUpright(src: GreyImage, ox: number, oy: number, h: Homography, box: Box, ppm: number): GreyImage {
  const W = Math.round(box.w * ppm),
    H = Math.round(box.h * ppm);
  const out = new Uint8Array(W * H);
  const data = src.data,
    sw = src.width,
    sh = src.height;
  for (let j = 0; j < H; j++) {
    for (let i = 0; i < W; i++) {
      const p = apply(h, box.x + (i + 0.5) / ppm, box.y + (j + 0.5) / ppm);
      const fx = p.x - ox - 0.5,
        fy = p.y - oy - 0.5;
      const ix = Math.floor(fx),
        iy = Math.floor(fy);
      if (ix < 0 || iy < 0 || ix + 1 >= sw || iy + 1 >= sh) {
        out[j * W + i] = 255;
        continue;
      }
      const ax = fx - ix,
        ay = fy - iy,
        k = iy * sw + ix;
      const top = data[k]! * (1 - ax) + data[k + 1]! * ax;
      const bot = data[k + sw]! * (1 - ax) + data[k + sw + 1]! * ax;
      out[j * W + i] = top * (1 - ay) + bot * ay;
    }
  }
  return { data: out, width: W, height: H };
}
