// The largest page image recognition takes (docs/direct-transfer.md "The service's receiver"),
// derived, not guessed: the largest page the service knows (the print media sizes: A3 is the
// widest, Tabloid the longest) at the highest resolution the recognizer reads (600 dpi,
// docs/cards.md "Scanning"). Anything larger is no scan of a card; decoding it would only cost
// memory (a 16000 × 16000 JPEG of 1.5 MB decodes to 768 MB of RGB).
import { MEDIA_SIZE_MAP } from '@boxhub/protocol/print-mapping.ts';
import { JpegError, readJpegHeader } from '@boxhub/protocol/jpeg-header.ts';

/** docs/cards.md: "Any resolution from 100 to 600 dpi". */
export const RECOGNITION_MAX_DPI = 600;

const px = (hmm: number) => Math.ceil((hmm / 2540) * RECOGNITION_MAX_DPI);
/** Longest short side and longest long side of a page, in pixels at 600 dpi. */
export const MAX_PAGE_PIXELS = {
  short: px(Math.max(...MEDIA_SIZE_MAP.map((m) => Math.min(m.x, m.y)))),
  long: px(Math.max(...MEDIA_SIZE_MAP.map((m) => Math.max(m.x, m.y)))),
};

/** Why a page image of this size is refused, or undefined when it is within the bound. */
export function pageTooLarge(width: number, height: number): string | undefined {
  const [s, l] = width <= height ? [width, height] : [height, width];
  if (s <= MAX_PAGE_PIXELS.short && l <= MAX_PAGE_PIXELS.long) return undefined;
  return `the image is ${width} × ${height} pixels; at most ${MAX_PAGE_PIXELS.short} × ${MAX_PAGE_PIXELS.long} (either orientation: the largest page at ${RECOGNITION_MAX_DPI} dpi) is accepted`;
}

/** The size a JPEG's frame header states, or why it cannot be read (nothing is decoded). */
export function jpegSize(bytes: Uint8Array): { width: number; height: number } | string {
  try {
    const h = readJpegHeader(bytes);
    return { width: h.width, height: h.height };
  } catch (e) {
    if (e instanceof JpegError) return e.message;
    throw e;
  }
}
