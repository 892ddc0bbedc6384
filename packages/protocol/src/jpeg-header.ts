// Reads what printing needs from a JPEG's markers without decoding it: dimensions, components,
// and the EXIF orientation (phone photos are stored sideways and say so in EXIF tag 0x0112).
// Pure and bounded: it walks marker segments by their lengths (ITU T.81 §B.1.1.4), never past
// the buffer, and stops at the first frame header. Shared by the server's document check and
// the box, which turns a JPG into a PDF page when the printer cannot scale JPEG itself.

export interface JpegHeader {
  width: number;
  height: number;
  /** 1 grey, 3 YCbCr/RGB, 4 CMYK/YCCK. */
  components: number;
  progressive: boolean;
  /** EXIF orientation 1-8 (1 when absent): TIFF 6.0 tag 274. */
  orientation: number;
}

export class JpegError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JpegError';
  }
}

export function isJpeg(b: Uint8Array): boolean {
  return b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
}

// Start-of-frame markers: SOF0-3, 5-7, 9-11, 13-15 (C4 DHT, C8 JPG, CC DAC are not frames).
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function exifOrientation(b: Uint8Array, start: number, end: number): number | undefined {
  // "Exif\0\0" then a TIFF header: byte order, 42, offset of IFD0.
  if (end - start < 14 || String.fromCharCode(...b.subarray(start, start + 4)) !== 'Exif') return undefined;
  const t = start + 6;
  const le = b[t] === 0x49 && b[t + 1] === 0x49;
  if (!le && !(b[t] === 0x4d && b[t + 1] === 0x4d)) return undefined;
  const u16 = (o: number) => (o + 2 > end ? -1 : le ? b[o]! | (b[o + 1]! << 8) : (b[o]! << 8) | b[o + 1]!);
  const u32 = (o: number) =>
    o + 4 > end
      ? -1
      : le
        ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16)) + b[o + 3]! * 0x1000000
        : b[o]! * 0x1000000 + ((b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!);
  const ifd = u32(t + 4);
  if (ifd < 0) return undefined;
  const at = t + ifd;
  const n = u16(at);
  if (n < 0 || n > 1000) return undefined;
  for (let i = 0; i < n; i++) {
    const e = at + 2 + i * 12;
    if (u16(e) === 0x0112) {
      const v = u16(e + 8);
      return v >= 1 && v <= 8 ? v : undefined;
    }
  }
  return undefined;
}

export function readJpegHeader(b: Uint8Array): JpegHeader {
  if (!isJpeg(b)) throw new JpegError('not a JPEG (no FF D8 FF start-of-image marker)');
  let orientation = 1;
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) throw new JpegError(`broken JPEG marker at byte ${i}`);
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i += 1;
      continue;
    } // fill byte (T.81 §B.1.1.2)
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      i += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) break; // end of image / start of scan before a frame
    const len = (b[i + 2]! << 8) | b[i + 3]!;
    if (len < 2 || i + 2 + len > b.length)
      throw new JpegError(`JPEG segment at byte ${i} runs past the end of the file`);
    const body = i + 4;
    if (marker === 0xe1) orientation = exifOrientation(b, body, i + 2 + len) ?? orientation;
    if (SOF.has(marker)) {
      if (len < 8) throw new JpegError('JPEG frame header is too short');
      const height = (b[body + 1]! << 8) | b[body + 2]!;
      const width = (b[body + 3]! << 8) | b[body + 4]!;
      const components = b[body + 5]!;
      if (width === 0 || height === 0) throw new JpegError(`JPEG has no size (${width}×${height})`);
      if (![1, 3, 4].includes(components)) throw new JpegError(`JPEG has ${components} colour components`);
      return {
        width,
        height,
        components,
        progressive: marker === 0xc2 || marker === 0xc6 || marker === 0xca || marker === 0xce,
        orientation,
      };
    }
    i += 2 + len;
  }
  throw new JpegError('JPEG has no frame header (truncated or damaged)');
}

/** Orientations 5-8 turn the picture by 90°: its displayed width is its stored height. */
export function displayedSize(h: JpegHeader): { width: number; height: number } {
  return h.orientation >= 5 ? { width: h.height, height: h.width } : { width: h.width, height: h.height };
}
