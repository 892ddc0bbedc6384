// A scanned page as the JPEG that goes into the PDF item, at the quality the task asked for
// (scan create options.quality, options.color_type; docs/scanning.md).
//
// Pass-through: a JPEG the scanner made is used byte for byte (no decode, no generation loss)
// when it can go into a PDF as it is (8-bit, 1 or 3 components, a valid frame) and
//  - its quality is not above the requested one (+2 for rounding in devices' own tables): the
//    quality the driver declares, else the IJG quality of its luminance table (jpeg-info.ts).
//    A lower-quality JPEG is passed through too: re-encoding it at a higher quality would only
//    make it larger, never better;
//  - its colour matches: a greyscale task re-encodes a colour JPEG as greyscale; a colour task
//    passes a greyscale JPEG through (there is no colour to add).
// Anything else (raw pixels, PNG, a JPEG above the quality) is encoded by libvips once.
import type { ScannedPage, ScanRequest } from '../drivers/types.ts';
import { jpegInfo } from './jpeg-info.ts';
import { jpegOptions, pageSharp } from './page-image.ts';

export interface PageJpeg {
  data: Buffer;
  width: number;
  height: number;
  components: 1 | 3;
  /** The scanner's own bytes, unchanged. */
  passedThrough: boolean;
}

/** How far above the requested quality a device JPEG may be and still pass through. */
export const PASS_THROUGH_SLACK = 2;

export async function pageToJpeg(page: ScannedPage, quality: number, color: ScanRequest['color']): Promise<PageJpeg> {
  if (!Number.isInteger(quality) || quality < 1 || quality > 100)
    throw new RangeError(`JPEG quality must be an integer 1-100, not ${quality}`);
  const img = page.image;
  if (img.format === 'jpeg') {
    const info = jpegInfo(img.data);
    if (info && info.precision === 8 && (info.components === 1 || info.components === 3)) {
      const q = img.quality ?? info.quality;
      const colourOk = color === 'color' || info.components === 1;
      if (colourOk && q !== undefined && q <= quality + PASS_THROUGH_SLACK) {
        return {
          data: img.data,
          width: info.width,
          height: info.height,
          components: info.components,
          passedThrough: true,
        };
      }
    }
  }
  const grey = color === 'grayscale' || (await sourceChannels(page)) <= 2;
  // flatten: a PNG page with transparency lies on white paper (no-op without alpha).
  const s = (await pageSharp(page)).flatten({ background: '#ffffff' }).toColourspace(grey ? 'b-w' : 'srgb');
  const { data, info } = await s.jpeg(jpegOptions(quality)).toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, components: grey ? 1 : 3, passedThrough: false };
}

/** Channels of the page as scanned (a greyscale page stays greyscale in a colour task). */
async function sourceChannels(page: ScannedPage): Promise<number> {
  const img = page.image;
  if (img.format === 'raw') return img.channels;
  if (img.format === 'jpeg') return jpegInfo(img.data)?.components ?? 3;
  const m = await (await pageSharp(page)).metadata();
  return m.channels ?? 3;
}
