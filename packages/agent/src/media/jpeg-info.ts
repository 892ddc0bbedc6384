// Reads what the page pipeline needs from a JPEG's header without decoding it (ITU-T T.81
// Annex B): the frame (SOFn: size, components, precision) and the quality its quantisation
// tables were made with. Pure and bounds-checked: a broken header gives undefined, never a throw.

export interface JpegInfo {
  width: number;
  height: number;
  /** 1 = greyscale, 3 = YCbCr/RGB, 4 = CMYK/YCCK. */
  components: number;
  /** Sample precision in bits (8 for every scanner; 12-bit JPEG cannot go into a PDF). */
  precision: number;
  progressive: boolean;
  /** IJG quality 1-100 whose scaled standard luminance table is nearest to the file's table 0
   *  (exact for libjpeg, libjpeg-turbo and mozjpeg with the standard tables); undefined when
   *  the file has no table 0. */
  quality?: number;
}

/** ITU-T T.81 Annex K, table K.1: the standard luminance quantisation table, zig-zag order. */
const STD_LUMA_ZIGZAG = [
  16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58, 51, 61,
  60, 57, 51, 56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87, 95, 98, 103, 104, 103, 62, 77, 113, 121,
  112, 100, 120, 92, 101, 103, 99,
];

/** The table libjpeg's jpeg_set_quality(q, force_baseline) writes for the luminance table. */
function scaledTable(q: number): number[] {
  const scale = q < 50 ? Math.floor(5000 / q) : 200 - q * 2;
  return STD_LUMA_ZIGZAG.map((v) => Math.min(255, Math.max(1, Math.floor((v * scale + 50) / 100))));
}
const TABLES = Array.from({ length: 100 }, (_, i) => scaledTable(i + 1));

/** Nearest IJG quality for a luminance table in zig-zag order (least absolute difference). */
export function estimateQuality(table: readonly number[]): number {
  let best = 1;
  let bestDiff = Infinity;
  for (let q = 1; q <= 100; q++) {
    const t = TABLES[q - 1]!;
    let d = 0;
    for (let i = 0; i < 64; i++) d += Math.abs(t[i]! - (table[i] ?? 0));
    // `<=`: of equal fits (tables clamp to 1 near q 100) report the higher quality.
    if (d <= bestDiff) {
      bestDiff = d;
      best = q;
    }
  }
  return best;
}

const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

export function jpegInfo(data: Uint8Array): JpegInfo | undefined {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return undefined;
  let pos = 2;
  let luma: number[] | undefined;
  while (pos + 4 <= data.length) {
    if (data[pos] !== 0xff) return undefined;
    const marker = data[pos + 1]!;
    if (marker === 0xff) {
      pos++;
      continue;
    } // fill byte
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      pos += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // EOI or scan data before a frame
    const len = (data[pos + 2]! << 8) | data[pos + 3]!;
    if (len < 2 || pos + 2 + len > data.length) return undefined;
    const seg = pos + 4;
    const end = pos + 2 + len;
    if (marker === 0xdb) {
      // DQT: one or more tables, each Pq/Tq then 64 entries of 8 or 16 bits.
      let p = seg;
      while (p < end) {
        const pq = data[p]! >> 4;
        const tq = data[p]! & 15;
        const size = pq ? 128 : 64;
        if (p + 1 + size > end) return undefined;
        if (tq === 0) {
          luma = [];
          for (let i = 0; i < 64; i++)
            luma.push(pq ? (data[p + 1 + 2 * i]! << 8) | data[p + 2 + 2 * i]! : data[p + 1 + i]!);
        }
        p += 1 + size;
      }
    } else if (SOF.has(marker)) {
      if (len < 8) return undefined;
      const info: JpegInfo = {
        precision: data[seg]!,
        height: (data[seg + 1]! << 8) | data[seg + 2]!,
        width: (data[seg + 3]! << 8) | data[seg + 4]!,
        components: data[seg + 5]!,
        progressive: marker === 0xc2 || marker === 0xc6 || marker === 0xca || marker === 0xce,
      };
      // Tables may follow the frame header (allowed before SOS); look ahead for DQT.
      if (!luma) luma = lookAheadLuma(data, end);
      if (luma) info.quality = estimateQuality(luma);
      return info.width > 0 && info.height > 0 ? info : undefined;
    }
    pos = end;
  }
  return undefined;
}

function lookAheadLuma(data: Uint8Array, from: number): number[] | undefined {
  let pos = from;
  while (pos + 4 <= data.length && data[pos] === 0xff) {
    const marker = data[pos + 1]!;
    if (marker === 0xda || marker === 0xd9) return undefined;
    const len = (data[pos + 2]! << 8) | data[pos + 3]!;
    if (len < 2 || pos + 2 + len > data.length) return undefined;
    if (marker === 0xdb && (data[pos + 4]! & 15) === 0) {
      const pq = data[pos + 4]! >> 4;
      if (pos + 5 + (pq ? 128 : 64) > data.length) return undefined;
      return Array.from({ length: 64 }, (_, i) =>
        pq ? (data[pos + 5 + 2 * i]! << 8) | data[pos + 6 + 2 * i]! : data[pos + 5 + i]!,
      );
    }
    pos += 2 + len;
  }
  return undefined;
}
