// One 8-bit channel per pixel; the recognizer works in greyscale and never binarises the
// whole page (docs/cards.md, "How recognition works").
import sharp from 'sharp';

export interface GreyImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Decodes any image sharp reads (JPEG, PNG, TIFF) to luminance; the input is never modified. */
export async function decodeGrey(input: Uint8Array): Promise<GreyImage> {
  const { data, info } = await sharp(input, { failOn: 'none' })
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1) {
    const n = info.width * info.height;
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = data[i * info.channels]!;
    return { data: out, width: info.width, height: info.height };
  }
  return {
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    width: info.width,
    height: info.height,
  };
}

/**
 * Downscale by an integer factor: each output pixel averages a block's middle row (and, for
 * factors above 2, a second row). A thumbnail for locating things needs no more, and reading
 * every pixel costs more than the rest of the page's analysis.
 */
export function shrink(img: GreyImage, factor: number): GreyImage {
  const w = Math.floor(img.width / factor);
  const h = Math.floor(img.height / factor);
  const out = new Uint8Array(w * h);
  const src = img.data;
  const sw = img.width;
  const rows = factor > 2 ? [Math.floor(factor / 4), Math.floor((3 * factor) / 4)] : [0, factor - 1];
  const n = factor * 2;
  for (let y = 0; y < h; y++) {
    const r0 = (y * factor + rows[0]!) * sw,
      r1 = (y * factor + rows[1]!) * sw;
    const o = y * w;
    for (let x = 0, sx = 0; x < w; x++) {
      let s = 0;
      for (let k = 0; k < factor; k++, sx++) s += src[r0 + sx]! + src[r1 + sx]!;
      out[o + x] = (s + (n >> 1)) / n;
    }
  }
  return { data: out, width: w, height: h };
}

/** Crop of an axis-aligned rectangle, clamped to the image. */
export function crop(img: GreyImage, x0: number, y0: number, x1: number, y1: number): GreyImage {
  const ax = Math.max(0, Math.floor(x0)),
    ay = Math.max(0, Math.floor(y0));
  const bx = Math.min(img.width, Math.ceil(x1)),
    by = Math.min(img.height, Math.ceil(y1));
  const w = Math.max(0, bx - ax),
    h = Math.max(0, by - ay);
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    out.set(img.data.subarray((ay + y) * img.width + ax, (ay + y) * img.width + ax + w), y * w);
  return { data: out, width: w, height: h };
}
