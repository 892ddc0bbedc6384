// Test fixture: A4 sheets drawn pixel by pixel at the scan resolution, with the defects that make
// blank-page detection hard (grey paper, noise, show-through, the scanner's dark backing, a
// streak from dirty glass) and the smallest content it must not lose (one pencil tick, one
// handwritten word). Encoded by sharp as a scanner would deliver them.
import sharp from 'sharp';
import type { ScannedPage } from '../../src/drivers/types.ts';

export interface Sheet {
  data: Uint8Array;
  width: number;
  height: number;
  dpi: number;
}

export function paper(dpi: number, level = 246, noise = 3, seed = 1): Sheet {
  const width = Math.round((210 / 25.4) * dpi),
    height = Math.round((297 / 25.4) * dpi);
  const data = new Uint8Array(width * height);
  let s = seed >>> 0;
  const r = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  for (let i = 0; i < data.length; i++)
    data[i] = Math.max(0, Math.min(255, Math.round(level + (r() + r() + r() - 1.5) * 2 * noise)));
  return { data, width, height, dpi };
}

/** A stroke from (x1,y1) to (x2,y2) mm, `widthMm` wide, at grey `level`, with soft edges. */
export function stroke(p: Sheet, x1: number, y1: number, x2: number, y2: number, widthMm: number, level: number): void {
  const px = p.dpi / 25.4;
  const [ax, ay, bx, by] = [x1 * px, y1 * px, x2 * px, y2 * px];
  const hw = (widthMm * px) / 2;
  const minX = Math.max(0, Math.floor(Math.min(ax, bx) - hw - 1)),
    maxX = Math.min(p.width - 1, Math.ceil(Math.max(ax, bx) + hw + 1));
  const minY = Math.max(0, Math.floor(Math.min(ay, by) - hw - 1)),
    maxY = Math.min(p.height - 1, Math.ceil(Math.max(ay, by) + hw + 1));
  const dx = bx - ax,
    dy = by - ay,
    len2 = dx * dx + dy * dy || 1;
  for (let y = minY; y <= maxY; y++)
    for (let x = minX; x <= maxX; x++) {
      const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / len2));
      const d = Math.hypot(x - (ax + t * dx), y - (ay + t * dy));
      const cover = Math.max(0, Math.min(1, hw + 0.5 - d));
      if (cover > 0) {
        const i = y * p.width + x;
        p.data[i] = Math.round(p.data[i]! * (1 - cover) + level * cover);
      }
    }
}

/** A handwritten-looking word: loops and up-strokes over `lengthMm`, pen 0.5 mm. */
export function word(p: Sheet, xMm: number, yMm: number, lengthMm: number, level = 40): void {
  let x = xMm;
  let k = 0;
  while (x < xMm + lengthMm) {
    const h = k % 3 === 0 ? 5 : 2.5;
    stroke(p, x, yMm, x + 0.8, yMm - h, 0.5, level);
    stroke(p, x + 0.8, yMm - h, x + 1.8, yMm, 0.5, level);
    x += 1.8;
    k++;
  }
}

/** Darkens the band left of `bandMm` and a wedge along the top to `level`: the scanner's backing. */
export function backing(p: Sheet, bandMm: number, wedgeMm: number, level = 30): void {
  const px = p.dpi / 25.4;
  for (let y = 0; y < p.height; y++)
    for (let x = 0; x < p.width; x++) {
      if (x < bandMm * px || y < wedgeMm * px * (1 - x / p.width)) p.data[y * p.width + x] = level;
    }
}

/** The other side's text seen through the paper: rows of strokes `strength` as dark as ink. */
export function showThrough(p: Sheet, strength: number, paperLevel = 246): void {
  const level = Math.round(paperLevel - (paperLevel - 20) * strength);
  for (let y = 30; y < 260; y += 6) for (let x = 20; x < 190; x += 12) stroke(p, x, y, x + 9, y, 1.2, level);
}

/** A vertical line the whole height of the page (dirt on the ADF glass). */
export function streak(p: Sheet, xMm: number, widthPx: number, level: number): void {
  const x0 = Math.round((xMm * p.dpi) / 25.4);
  for (let y = 0; y < p.height; y++) for (let x = x0; x < x0 + widthPx; x++) p.data[y * p.width + x] = level;
}

export async function asJpeg(p: Sheet, quality = 85): Promise<ScannedPage> {
  const data = await sharp(p.data, { raw: { width: p.width, height: p.height, channels: 1 } })
    .toColourspace('b-w')
    .jpeg({ quality })
    .toBuffer();
  return {
    sheet: 1,
    front: true,
    dpi: p.dpi,
    width: p.width,
    height: p.height,
    image: { format: 'jpeg', data, quality },
  };
}

export function asRaw(p: Sheet): ScannedPage {
  return {
    sheet: 1,
    front: true,
    dpi: p.dpi,
    width: p.width,
    height: p.height,
    image: { format: 'raw', data: Buffer.from(p.data), channels: 1 },
  };
}
