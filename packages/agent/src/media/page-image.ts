// A scanned page as a sharp (libvips) input. libvips evaluates lazily and streams an image
// through its pipeline in strips, so decoding, downscaling and encoding never hold a whole
// decoded page unless an operation needs it (docs/scanning.md, "On the box").
import type { JpegOptions, Sharp } from 'sharp';
import type { ScannedPage } from '../drivers/types.ts';

type SharpModule = typeof import('sharp').default;
let sharpModule: Promise<SharpModule> | undefined;

/**
 * sharp (libvips), loaded at the first page that needs it, not at the agent's start: it adds
 * about 15 MB to the box's resident memory, and a page the scanner hands over as a JPEG at the
 * task's quality goes into its item without it (docs/scanning.md, "Memory on the box").
 */
export function loadSharp(): Promise<SharpModule> {
  sharpModule ??= import('sharp').then(({ default: sharp }) => {
    // libvips' operation cache (50 MB by default) only helps when the same image is processed
    // again; every scanned page is new, so on a box it would only add to the resident memory.
    sharp.cache(false);
    return sharp;
  });
  return sharpModule;
}

export async function pageSharp(page: ScannedPage): Promise<Sharp> {
  const sharp = await loadSharp();
  const img = page.image;
  if (img.format === 'raw') {
    if (img.data.length < page.width * page.height * img.channels) {
      throw new RangeError(
        `raw page holds ${img.data.length} bytes, ${page.width}×${page.height}×${img.channels} needs ${page.width * page.height * img.channels}`,
      );
    }
    return sharp(img.data, { raw: { width: page.width, height: page.height, channels: img.channels } });
  }
  // sequentialRead: decode top to bottom once, in strips (no random access needed).
  return sharp(img.data, { sequentialRead: true });
}

/**
 * JPEG encoder settings for scanned pages. optimiseCoding (two-pass Huffman tables) makes libjpeg
 * keep the whole page's DCT coefficients in memory (measured: 300 MB peak for one 600 dpi A4
 * colour page, against 100 MB without, and twice the CPU) for about 8% smaller files.
 */
export function jpegOptions(quality: number): JpegOptions {
  return { quality, optimiseCoding: false, chromaSubsampling: '4:2:0', mozjpeg: false };
}
