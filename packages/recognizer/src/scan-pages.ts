// Splits a scanned file into page images, in scan order (docs/cards.md, "Scanned files").
// Scanners deliver a stack as one multi-page PDF or TIFF; the recognizer reads one image per
// side. Every page yields either encoded image bytes that decodeGrey reads, or an error for
// that page only. The input bytes are never modified.
// PDF pages are taken from their embedded JPEG when possible (pdf-embedded-jpeg.ts), else
// rasterised (pdf-render.ts).
import sharp from 'sharp';
import { PDFDocument, type PDFPage } from 'pdf-lib';
import { embeddedJpeg } from './pdf-embedded-jpeg.ts';
import { PdfRenderer } from './pdf-render.ts';

/** How a page's image was obtained (for tests and diagnostics; the recognizer does not care). */
export type PageVia =
  | 'image' // a single-image file, passed on unchanged
  | 'image-page' // one page of a multi-page TIFF, re-encoded losslessly as greyscale TIFF
  | 'pdf-jpeg' // the JPEG embedded in a scanner's PDF page, byte for byte
  | 'pdf-render'; // a PDF page rasterised by pdftoppm

export type ScanPage = { page: number; image: Uint8Array; via: PageVia } | { page: number; error: string };

export interface ScanPagesOptions {
  /** Larger files are refused (one error). */
  maxBytes?: number;
  /** Files with more pages are refused as a whole: reading only the first N would silently drop students. */
  maxPages?: number;
  /** Resolution for rasterised PDF pages. */
  renderDpi?: number;
  /** Longest side of a rasterised page in pixels; larger pages are rendered at a lower dpi. */
  maxRenderPx?: number;
  /** The pdftoppm command (poppler-utils); a name is looked up in PATH. */
  pdftoppm?: string;
  renderTimeoutMs?: number;
}

type Limits = Required<ScanPagesOptions>;

export const SCAN_LIMITS: Readonly<Limits> = {
  maxBytes: 256 * 1024 * 1024,
  maxPages: 500,
  // 200 dpi is the scan default and plenty for the recognizer (docs/cards.md, placement).
  renderDpi: 200,
  maxRenderPx: 5000,
  pdftoppm: 'pdftoppm',
  renderTimeoutMs: 60_000,
};

/**
 * The pages of a scanned file in order: a JPEG/PNG/WebP/single-page TIFF yields itself, a
 * multi-page TIFF each page, a PDF each page (the embedded JPEG when the page is just that,
 * otherwise rasterised with pdftoppm). A file that cannot be split yields one error (page 1).
 * Stop iterating early with `break`/`return()` so a temporary file for pdftoppm is removed.
 */
export async function* scanPages(bytes: Uint8Array, opts: ScanPagesOptions = {}): AsyncGenerator<ScanPage> {
  const limits: Limits = { ...SCAN_LIMITS, ...definedOnly(opts) };
  if (bytes.length > limits.maxBytes) {
    yield { page: 1, error: `file too large (${bytes.length} bytes; at most ${limits.maxBytes})` };
    return;
  }
  if (isPdf(bytes)) yield* pdfPages(bytes, limits);
  else yield* imagePages(bytes, limits);
}

function definedOnly(o: ScanPagesOptions): Partial<Limits> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<Limits>;
}

/**
 * PDF readers accept the header anywhere in the first 1024 bytes (ISO 32000-1, annex H); an
 * image's metadata could contain those five bytes too, so image signatures are checked first.
 */
function isPdf(bytes: Uint8Array): boolean {
  const head = latin1(bytes.subarray(0, 1024));
  return !IMAGE_SIGNATURE.test(head) && head.includes('%PDF-');
}

/** JPEG, PNG, TIFF (both byte orders), WebP. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: file signatures are bytes (NUL among them)
const IMAGE_SIGNATURE = /^(\xff\xd8\xff|\x89PNG|II\*\x00|MM\x00\*|RIFF[\s\S]{4}WEBP)/;

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

// ---- images (sharp) ----

async function* imagePages(bytes: Uint8Array, limits: Limits): AsyncGenerator<ScanPage> {
  let pages: number;
  try {
    pages = (await sharp(bytes).metadata()).pages ?? 1;
  } catch (e) {
    yield {
      page: 1,
      error: `not a PDF or an image file that can be read (JPEG, PNG, WebP, TIFF): ${(e as Error).message}`,
    };
    return;
  }
  if (pages <= 1) {
    yield { page: 1, image: bytes, via: 'image' };
    return;
  }
  if (pages > limits.maxPages) {
    yield { page: 1, error: tooManyPages(pages, limits) };
    return;
  }
  for (let i = 0; i < pages; i++) {
    try {
      yield { page: i + 1, image: await imagePage(bytes, i), via: 'image-page' };
    } catch (e) {
      yield { page: i + 1, error: `cannot decode page ${i + 1}: ${(e as Error).message}` };
    }
  }
}

/**
 * One page as an uncompressed greyscale TIFF: lossless and the fastest thing sharp both writes
 * and reads back; the recognizer uses luminance only, so nothing it reads is lost, and the
 * page is a third of the size of its colour original while it waits in the pool's queue.
 */
async function imagePage(bytes: Uint8Array, index: number): Promise<Uint8Array> {
  // failOn 'none', as decodeGrey: a slightly damaged scan is still worth reading.
  return sharp(bytes, { page: index, failOn: 'none' }).toColourspace('b-w').tiff({ compression: 'none' }).toBuffer();
}

function tooManyPages(pages: number, limits: Limits): string {
  return `file has ${pages} pages; at most ${limits.maxPages} per file (split the scan)`;
}

// ---- PDF ----

async function* pdfPages(bytes: Uint8Array, limits: Limits): AsyncGenerator<ScanPage> {
  // A partial upload or an interrupted scan still parses up to the cut and would silently lose
  // the last students; every writer ends the file with %%EOF, so its absence means truncation.
  if (!latin1(bytes.subarray(Math.max(0, bytes.length - 1024))).includes('%%EOF')) {
    yield { page: 1, error: 'PDF is truncated (no %%EOF at its end): transfer or scan it again' };
    return;
  }
  let pages: PDFPage[];
  let encrypted: boolean;
  try {
    // ignoreEncryption: scanner PDFs with only an owner password are still readable by
    // pdftoppm; their streams are encrypted, so no JPEG is taken from them directly.
    const doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false });
    encrypted = doc.isEncrypted;
    pages = doc.getPages();
  } catch (e) {
    yield { page: 1, error: `cannot read PDF: ${(e as Error).message}` };
    return;
  }
  if (pages.length === 0) {
    yield { page: 1, error: 'PDF has no pages' };
    return;
  }
  if (pages.length > limits.maxPages) {
    yield { page: 1, error: tooManyPages(pages.length, limits) };
    return;
  }
  const renderer = new PdfRenderer(bytes, limits);
  try {
    for (let i = 0; i < pages.length; i++) yield await pdfPage(pages[i]!, i + 1, encrypted, renderer, limits);
  } finally {
    await renderer.close();
  }
}

async function pdfPage(
  page: PDFPage,
  n: number,
  encrypted: boolean,
  renderer: PdfRenderer,
  limits: Limits,
): Promise<ScanPage> {
  let jpeg: Uint8Array | undefined;
  try {
    jpeg = encrypted ? undefined : embeddedJpeg(page);
  } catch {
    /* a damaged object: pdftoppm may still cope */
  }
  if (jpeg) return { page: n, image: jpeg, via: 'pdf-jpeg' };
  try {
    return { page: n, image: await renderer.render(n, renderDpi(page, limits)), via: 'pdf-render' };
  } catch (e) {
    return { page: n, error: (e as Error).message };
  }
}

/** The configured dpi, lowered so that an oversized page stays within maxRenderPx. */
function renderDpi(page: PDFPage, limits: Limits): number {
  let longest = 0;
  try {
    const { width, height } = page.getSize();
    longest = Math.max(Math.abs(width), Math.abs(height)) / 72;
  } catch {
    /* pdftoppm will say */
  }
  if (!(longest > 0)) return limits.renderDpi;
  return Math.max(1, Math.min(limits.renderDpi, Math.floor(limits.maxRenderPx / longest)));
}
