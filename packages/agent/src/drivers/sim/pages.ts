// What the simulated scanner's sheets look like: generated A4 sides (text-like ink, blank paper
// with the defects real blank pages have) or given images. Generated sides are drawn at 100 dpi
// in JavaScript and scaled, noised and encoded by libvips at the scan resolution, so a 600 dpi
// colour page never exists decoded in memory.
import { readFile } from 'node:fs/promises';
import type { Sharp } from 'sharp';
import type { ScannedPage, ScanRequest } from '../types.ts';
import { jpegInfo } from '../../media/jpeg-info.ts';
import { jpegOptions, loadSharp } from '../../media/page-image.ts';

export interface SimLook {
  /** Paper grey level 0-255 (default 246: white office paper as scanners see it). */
  paper?: number;
  /** Paper and sensor noise, standard deviation in grey levels (default 3). */
  noise?: number;
  /** The scanner's dark backing shows along the left edge and in a wedge at the top, as
   *  around a skewed sheet. */
  backing?: boolean;
  /** Uneven light: the far corner this fraction darker (0-0.5, default 0). */
  unevenLight?: number;
}

/** A side of a sheet. Strings are the default looks. */
export type SimSide =
  | 'text'
  | 'blank'
  /** Lines of word-like strokes; `seed` picks one of the layouts (default: by sheet, 4 layouts). */
  | { text: SimLook & { seed?: number } }
  /** Nothing printed; `showThrough` shows the mirrored text of the other side faintly. */
  | { blank: SimLook & { showThrough?: boolean } }
  /** A given JPEG or PNG: a file path or its bytes, scanned at `dpi` (default: the resolution of
   *  the scan). Delivered byte for byte when its resolution and colour match the scan; otherwise
   *  scaled and converted as the scanner would. */
  | { image: string | Uint8Array; dpi?: number };

export interface SimSheet {
  front: SimSide;
  back?: SimSide;
}

/** How the simulated scanner hands pages over. */
export type SimPageFormat = 'jpeg' | 'raw' | 'png';

export const A4_MM = { width: 210, height: 297 } as const;
const DESIGN_DPI = 100;
const INK = 28;
const TEXT_LAYOUTS = 4;

export function a4Pixels(dpi: number): { width: number; height: number } {
  return { width: Math.round((A4_MM.width / 25.4) * dpi), height: Math.round((A4_MM.height / 25.4) * dpi) };
}

/** Deterministic PRNG (mulberry32): the same seed draws the same page. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ink mask (0 paper .. 255 ink) of a text page at DESIGN_DPI: lines of words of letter strokes. */
function textMask(seed: number): { mask: Uint8Array; width: number; height: number } {
  const { width, height } = a4Pixels(DESIGN_DPI);
  const mask = new Uint8Array(width * height);
  const r = rng(seed * 7919 + 17);
  const mm = DESIGN_DPI / 25.4;
  const left = Math.round(20 * mm),
    right = width - Math.round(20 * mm);
  const put = (x: number, y: number) => {
    if (x >= 0 && x < width && y >= 0 && y < height) mask[y * width + x] = 255;
  };
  // A title, then paragraphs: 5 mm line pitch, x-height 2 mm, some ascenders and descenders.
  let y = Math.round(25 * mm);
  const bottom = height - Math.round((25 + r() * 60) * mm);
  let line = 0;
  while (y < bottom) {
    const paragraphEnd = r() < 0.12;
    let x = left + (line === 0 || r() < 0.15 ? Math.round(8 * mm) : 0);
    const end = paragraphEnd ? left + Math.round((right - left) * (0.3 + 0.5 * r())) : right;
    while (x < end - 6) {
      const letters = 2 + Math.floor(r() * 8);
      for (let l = 0; l < letters && x < end - 3; l++) {
        const xh = Math.round(2 * mm);
        const up = r() < 0.3 ? Math.round(1.2 * mm) : 0;
        const down = !up && r() < 0.1 ? Math.round(1 * mm) : 0;
        const w = Math.round((1.4 + r() * 0.8) * mm);
        for (let k = -up; k < xh + down; k++) put(x, y - xh + k);
        if (r() < 0.7) for (let k = 0; k < xh; k++) put(x + w - 1, y - xh + k);
        for (let k = 0; k < w; k++) {
          if (r() < 0.8) put(x + k, y - 1);
          if (r() < 0.5) put(x + k, y - xh);
        }
        x += w + 1;
      }
      x += Math.round(1.8 * mm);
    }
    y += Math.round(5 * mm) + (paragraphEnd ? Math.round(4 * mm) : 0);
    line++;
  }
  return { mask, width, height };
}

interface Generated {
  kind: 'text' | 'blank';
  look: SimLook;
  seed: number;
  showThrough: boolean;
}

function generatedOf(side: SimSide, sheet: number): Generated | undefined {
  if (side === 'text') return { kind: 'text', look: {}, seed: (sheet - 1) % TEXT_LAYOUTS, showThrough: false };
  if (side === 'blank') return { kind: 'blank', look: {}, seed: 0, showThrough: false };
  if ('text' in side)
    return { kind: 'text', look: side.text, seed: side.text.seed ?? (sheet - 1) % TEXT_LAYOUTS, showThrough: false };
  if ('blank' in side)
    return {
      kind: 'blank',
      look: side.blank,
      seed: (sheet - 1) % TEXT_LAYOUTS,
      showThrough: side.blank.showThrough ?? false,
    };
  return undefined;
}

type Raster = { data: Buffer; width: number; height: number };

/**
 * Design rasters already drawn, by side and colour (all a raster depends on: its noise is
 * seeded). Drawing one is about 120 ms of JavaScript, and a stack of default sheets has five
 * (four text layouts and blank paper): 20 simulated scanners of a bench redrew them for every
 * page, 29 s of the machine's CPU during a storm (bench/README.md, "reconnect-storm"). At most
 * DRAWN_MAX are kept (2.9 MB each in colour), the least recently used dropped first. Callers
 * only read a raster.
 */
const drawn = new Map<string, Raster>();
const DRAWN_MAX = 16;

function designRaster(g: Generated, color: boolean): Raster {
  const key = JSON.stringify([g.kind, g.seed, g.showThrough, color, g.look]);
  let r = drawn.get(key);
  if (r) drawn.delete(key);
  else {
    r = drawRaster(g, color);
    if (drawn.size >= DRAWN_MAX) drawn.delete(drawn.keys().next().value as string);
  }
  drawn.set(key, r);
  return r;
}

/** The design raster (1 or 3 channels) of a generated side at DESIGN_DPI. */
function drawRaster(g: Generated, color: boolean): Raster {
  const { width, height } = a4Pixels(DESIGN_DPI);
  const paper = Math.min(255, Math.max(0, Math.round(g.look.paper ?? 246)));
  const grey = new Uint8Array(width * height).fill(paper);
  if (g.kind === 'text' || g.showThrough) {
    const { mask } = textMask(g.seed);
    // Show-through: the other side's print seen through the paper, mirrored and 12% as dark.
    const strength = g.kind === 'text' ? 1 : 0.12;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const m = mask[y * width + (g.kind === 'text' ? x : width - 1 - x)]!;
        if (m) grey[y * width + x] = Math.round(paper - ((paper - INK) * strength * m) / 255);
      }
    }
  }
  const light = Math.min(0.5, Math.max(0, g.look.unevenLight ?? 0));
  if (light > 0) {
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const f = 1 - (light * Math.hypot(x / width, y / height)) / Math.SQRT2;
        grey[y * width + x] = Math.round(grey[y * width + x]! * f);
      }
  }
  if (g.look.backing) {
    const mm = DESIGN_DPI / 25.4;
    const band = Math.round(3 * mm),
      wedge = 5 * mm;
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        if (x < band || y < wedge * (1 - x / width)) grey[y * width + x] = 38;
      }
  }
  // Paper grain and sensor noise, drawn here rather than at the scan resolution: libvips'
  // gaussian noise costs more than the rest of the page (845 ms for a 200 dpi A4 page); the
  // scaled-up grain still gives a JPEG the size of a real scan (about 440 KB at 200 dpi, q90).
  const sigma = Math.max(0, g.look.noise ?? 3);
  const r = rng(g.seed * 31 + 5);
  const noise = () => (sigma > 0 ? Math.round((r() + r() + r() - 1.5) * 2 * sigma) : 0);
  const clamp = (v: number) => (v < 0 ? 0 : Math.min(v, 255));
  if (!color) {
    const out = Buffer.alloc(width * height);
    for (let i = 0; i < grey.length; i++) out[i] = clamp(grey[i]! + noise());
    return { data: out, width, height };
  }
  // Colour: slightly warm paper, blue-black ink.
  const rgb = Buffer.alloc(width * height * 3);
  for (let i = 0; i < grey.length; i++) {
    const v = grey[i]! + noise();
    const ink = (paper - grey[i]!) / Math.max(1, paper - INK);
    rgb[i * 3] = clamp(v);
    rgb[i * 3 + 1] = clamp(v - 2);
    rgb[i * 3 + 2] = clamp(Math.round(v - 6 + 20 * ink));
  }
  return { data: rgb, width, height };
}

export interface RenderOptions {
  dpi: number;
  color: ScanRequest['color'];
  quality: number;
  format: SimPageFormat;
}
export type PageImage = Pick<ScannedPage, 'width' | 'height' | 'image'>;

export async function renderGenerated(g: Generated, o: RenderOptions): Promise<PageImage> {
  const color = o.color === 'color';
  const channels = color ? 3 : 1;
  const d = designRaster(g, color);
  const { width, height } = a4Pixels(o.dpi);
  const sharp = await loadSharp();
  const s = sharp(d.data, { raw: { width: d.width, height: d.height, channels } }).resize(width, height, {
    fit: 'fill',
    kernel: 'cubic',
  });
  return encode(s, { width, height }, channels, o);
}

async function encode(
  s: Sharp,
  size: { width: number; height: number },
  channels: 1 | 3,
  o: RenderOptions,
): Promise<PageImage> {
  const cs = channels === 1 ? 'b-w' : 'srgb';
  if (o.format === 'raw') {
    const data = await s.toColourspace(cs).raw().toBuffer();
    return { ...size, image: { format: 'raw', data, channels } };
  }
  if (o.format === 'png')
    return {
      ...size,
      image: { format: 'png', data: await s.toColourspace(cs).png({ compressionLevel: 1 }).toBuffer() },
    };
  return {
    ...size,
    image: {
      format: 'jpeg',
      data: await s.toColourspace(cs).jpeg(jpegOptions(o.quality)).toBuffer(),
      quality: o.quality,
    },
  };
}

/** Image bytes of a given side, read at scan time (a file path) or as given. */
export async function imageBytes(side: { image: string | Uint8Array }): Promise<Buffer> {
  if (typeof side.image === 'string') return readFile(side.image);
  return Buffer.isBuffer(side.image)
    ? side.image
    : Buffer.from(side.image.buffer, side.image.byteOffset, side.image.byteLength);
}

export function imageKind(b: Uint8Array): 'jpeg' | 'png' | undefined {
  if (b[0] === 0xff && b[1] === 0xd8) return 'jpeg';
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'png';
  return undefined;
}

/** A given image as the scanner would deliver it at this resolution and colour. */
export async function renderGiven(bytes: Buffer, imageDpi: number | undefined, o: RenderOptions): Promise<PageImage> {
  const kind = imageKind(bytes);
  if (!kind) throw new TypeError('a sheet image must be a JPEG or a PNG');
  // A JPEG's size and colour come from its header (no libvips call: a scanner hands its bytes
  // over without looking at them); a PNG's from libvips.
  const jpeg = kind === 'jpeg' ? jpegInfo(bytes) : undefined;
  if (kind === 'jpeg' && !jpeg) throw new TypeError('the sheet image is not a readable JPEG');
  const meta = jpeg
    ? { width: jpeg.width, height: jpeg.height, channels: jpeg.components }
    : await (await loadSharp())(bytes).metadata();
  if (!meta.width || !meta.height) throw new TypeError('the sheet image has no size');
  const srcChannels = meta.channels ?? 3;
  const grey = srcChannels <= 2;
  const wantGrey = o.color === 'grayscale';
  const dpi = imageDpi ?? o.dpi;
  if (dpi === o.dpi && grey === wantGrey && o.format === kind) {
    const image: ScannedPage['image'] =
      kind === 'jpeg' ? { format: 'jpeg', data: bytes } : { format: 'png', data: bytes };
    return { width: meta.width, height: meta.height, image };
  }
  const width = Math.max(1, Math.round((meta.width * o.dpi) / dpi));
  const height = Math.max(1, Math.round((meta.height * o.dpi) / dpi));
  let s = (await loadSharp())(bytes).flatten({ background: '#ffffff' });
  if (width !== meta.width || height !== meta.height) s = s.resize(width, height, { fit: 'fill' });
  return encode(s, { width, height }, wantGrey ? 1 : 3, o);
}

export { generatedOf, type Generated };
