// Splits a scanned file into page images, in scan order (docs/cards.md, "Scanned files").
// Scanners deliver a stack as one multi-page PDF or TIFF; the recognizer reads one image per
// side. Every page yields either encoded image bytes that decodeGrey reads, or an error for
// that page only. The input bytes are never modified.
import { execFile, type ExecFileException } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRawStream, PDFRef, decodePDFRawStream, type PDFPage } from 'pdf-lib';

/** How a page's image was obtained (for tests and diagnostics; the recognizer does not care). */
export type PageVia =
  | 'image'       // a single-image file, passed on unchanged
  | 'image-page'  // one page of a multi-page TIFF, re-encoded losslessly as greyscale TIFF
  | 'pdf-jpeg'    // the JPEG embedded in a scanner's PDF page, byte for byte
  | 'pdf-render'; // a PDF page rasterised by pdftoppm

export type ScanPage =
  | { page: number; image: Uint8Array; via: PageVia }
  | { page: number; error: string };

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
const IMAGE_SIGNATURE = /^(\xff\xd8\xff|\x89PNG|II\*\x00|MM\x00\*|RIFF[^]{4}WEBP)/;

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

// ---- images (sharp) ----

async function* imagePages(bytes: Uint8Array, limits: Limits): AsyncGenerator<ScanPage> {
  let pages: number;
  try {
    pages = (await sharp(bytes).metadata()).pages ?? 1;
  } catch (e) {
    yield { page: 1, error: `not a PDF or an image file that can be read (JPEG, PNG, WebP, TIFF): ${(e as Error).message}` };
    return;
  }
  if (pages <= 1) { yield { page: 1, image: bytes, via: 'image' }; return; }
  if (pages > limits.maxPages) { yield { page: 1, error: tooManyPages(pages, limits) }; return; }
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
  if (pages.length === 0) { yield { page: 1, error: 'PDF has no pages' }; return; }
  if (pages.length > limits.maxPages) { yield { page: 1, error: tooManyPages(pages.length, limits) }; return; }
  const renderer = new PdfRenderer(bytes, limits);
  try {
    for (let i = 0; i < pages.length; i++) yield await pdfPage(pages[i]!, i + 1, encrypted, renderer, limits);
  } finally {
    await renderer.close();
  }
}

async function pdfPage(page: PDFPage, n: number, encrypted: boolean, renderer: PdfRenderer, limits: Limits): Promise<ScanPage> {
  let jpeg: Uint8Array | undefined;
  try { jpeg = encrypted ? undefined : embeddedJpeg(page); } catch { /* a damaged object: pdftoppm may still cope */ }
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
  try { const { width, height } = page.getSize(); longest = Math.max(Math.abs(width), Math.abs(height)) / 72; } catch { /* pdftoppm will say */ }
  if (!(longest > 0)) return limits.renderDpi;
  return Math.max(1, Math.min(limits.renderDpi, Math.floor(limits.maxRenderPx / longest)));
}

// ---- PDF: the embedded JPEG of a scanned page ----
//
// No library at hand extracts a page's embedded image: pdf-lib writes and edits PDFs and
// exposes objects and streams but does not interpret content streams; poppler's pdfimages
// lists a page's images but not how they are placed, and this fast path should not need
// poppler at all. So this walks just far enough, on pdf-lib's objects: the page's
// content stream operators (to see that it draws exactly one image, upright) and that
// image's dictionary (to see that its stream is a plain JPEG). Anything else is rasterised.

/** Bound on a page's decoded content stream read here; scanners write a few dozen bytes. */
const MAX_CONTENT_BYTES = 1 << 20;

/** The page's JPEG when the page is exactly one upright DCT image, else undefined. */
function embeddedJpeg(page: PDFPage): Uint8Array | undefined {
  if (((page.getRotation().angle % 360) + 360) % 360 !== 0) return undefined; // the JPEG is unrotated
  const content = pageContent(page);
  if (!content) return undefined;
  const name = singleUprightImage(content);
  if (!name) return undefined;
  const xobjects = page.node.Resources()?.lookup(PDFName.of('XObject'));
  if (!(xobjects instanceof PDFDict)) return undefined;
  const image = xobjects.lookup(PDFName.of(name));
  return image instanceof PDFRawStream ? plainJpeg(image) : undefined;
}

/** The page's content streams, decoded and joined, or undefined if too large or undecodable. */
function pageContent(page: PDFPage): Uint8Array | undefined {
  const contents = page.node.Contents();
  const streams = contents instanceof PDFArray
    ? contents.asArray().map((o) => (o instanceof PDFRef ? page.doc.context.lookup(o) : o))
    : [contents];
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const s of streams) {
    if (!(s instanceof PDFRawStream)) return undefined;
    let data: Uint8Array | Uint8ClampedArray;
    try { data = decodePDFRawStream(s).getBytes(MAX_CONTENT_BYTES + 1); } catch { return undefined; }
    total += data.length + 1;
    if (total > MAX_CONTENT_BYTES) return undefined;
    parts.push(new Uint8Array(data.buffer, data.byteOffset, data.length), new Uint8Array([0x0a])); // streams of an array are joined as if by whitespace
  }
  return Buffer.concat(parts);
}

/** The image XObject's stream is a JPEG that decodes to what the page shows. */
function plainJpeg(image: PDFRawStream): Uint8Array | undefined {
  const d = image.dict;
  if (d.lookup(PDFName.of('Subtype')) !== PDFName.of('Image')) return undefined;
  const filter = d.lookup(PDFName.of('Filter'));
  const dct = filter === PDFName.of('DCTDecode') || (filter instanceof PDFArray && filter.size() === 1 && filter.lookup(0) === PDFName.of('DCTDecode'));
  if (!dct) return undefined;
  // These change what is shown relative to the JPEG's own pixels (inverted or remapped values,
  // masks, a colour transform override); such pages are rendered instead.
  for (const key of ['Decode', 'DecodeParms', 'SMask', 'Mask', 'ImageMask']) if (d.has(PDFName.of(key))) return undefined;
  if (!greyOrRgb(d.lookup(PDFName.of('ColorSpace')))) return undefined;
  const jpeg = image.contents;
  return jpeg.length > 3 && jpeg[0] === 0xff && jpeg[1] === 0xd8 && jpeg[2] === 0xff ? jpeg : undefined;
}

/** CMYK JPEGs in PDFs are often stored inverted (Adobe); indexed and separation spaces remap. */
function greyOrRgb(cs: unknown): boolean {
  if (cs instanceof PDFName) return cs === PDFName.of('DeviceGray') || cs === PDFName.of('DeviceRGB');
  if (!(cs instanceof PDFArray) || cs.size() < 2) return false;
  const family = cs.lookup(0);
  if (family === PDFName.of('CalGray') || family === PDFName.of('CalRGB')) return true;
  if (family !== PDFName.of('ICCBased')) return false;
  const icc = cs.lookup(1);
  const n = icc instanceof PDFRawStream ? icc.dict.lookup(PDFName.of('N')) : undefined;
  return n instanceof PDFNumber && (n.asNumber() === 1 || n.asNumber() === 3);
}

type Matrix = [number, number, number, number, number, number];

/**
 * The XObject name when the content draws exactly one XObject, with a matrix that keeps it
 * upright and unmirrored, and paints nothing else (no paths, shadings or inline images).
 * Text is allowed: scanners' "searchable PDF" adds an invisible OCR text layer.
 */
function singleUprightImage(content: Uint8Array): string | undefined {
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const saved: Matrix[] = [];
  let drawn: string | undefined;
  let operands: Array<number | string | null> = [];
  for (const t of contentTokens(content)) {
    if (t.kind !== 'op') { operands.push(t.value); continue; }
    switch (t.value) {
      case 'q': saved.push(ctm); break;
      case 'Q': ctm = saved.pop() ?? ctm; break;
      case 'cm': {
        const m = operands.slice(-6);
        if (m.length !== 6 || !m.every((x) => typeof x === 'number')) return undefined;
        ctm = multiply(m as Matrix, ctm);
        break;
      }
      case 'Do': {
        const name = operands[operands.length - 1];
        if (drawn !== undefined || typeof name !== 'string' || !upright(ctm)) return undefined;
        drawn = name;
        break;
      }
      case 'S': case 's': case 'f': case 'F': case 'f*': case 'B': case 'B*': case 'b': case 'b*': case 'sh': case 'BI':
        return undefined;
      default: break;
    }
    operands = [];
  }
  return drawn;
}

/** m × n for PDF's row-vector matrices [a b c d e f] (the new CTM is cm × CTM). */
function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2], m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

/** Scaled and moved only: the image's unit square maps to the page without turning or flipping. */
function upright(m: Matrix): boolean {
  const eps = 1e-6 * (Math.abs(m[0]) + Math.abs(m[3]));
  return m[0] > 0 && m[3] > 0 && Math.abs(m[1]) <= eps && Math.abs(m[2]) <= eps;
}

type Token = { kind: 'op'; value: string } | { kind: 'operand'; value: number | string | null };

const WHITE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIM = new Set([...'()<>[]{}/%'].map((c) => c.charCodeAt(0)));

/**
 * The tokens of a content stream (ISO 32000-1, 7.2 and 7.8.2), as far as singleUprightImage
 * needs them: numbers and names as values, strings, arrays and dictionaries as null operands,
 * everything else as operators. An inline image (BI) ends the walk, as its data is binary.
 */
function* contentTokens(s: Uint8Array): Generator<Token> {
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (WHITE.has(c)) { i++; continue; }
    if (c === 0x25) { while (i < s.length && s[i] !== 0x0a && s[i] !== 0x0d) i++; continue; } // % comment
    if (c === 0x28) { i = skipLiteralString(s, i); yield { kind: 'operand', value: null }; continue; }
    if (c === 0x3c && s[i + 1] === 0x3c) { i += 2; yield { kind: 'operand', value: null }; continue; } // <<
    if (c === 0x3e && s[i + 1] === 0x3e) { i += 2; yield { kind: 'operand', value: null }; continue; } // >>
    if (c === 0x3c) { while (i < s.length && s[i] !== 0x3e) i++; i++; yield { kind: 'operand', value: null }; continue; } // <hex>
    if (c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x29 || c === 0x3e) { i++; yield { kind: 'operand', value: null }; continue; }
    const start = c === 0x2f ? i + 1 : i;
    let j = start;
    while (j < s.length && !WHITE.has(s[j]!) && !DELIM.has(s[j]!)) j++;
    const word = latin1(s.subarray(start, j));
    i = Math.max(j, i + 1);
    if (c === 0x2f) yield { kind: 'operand', value: decodeName(word) };
    else if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) yield { kind: 'operand', value: Number(word) };
    else if (word === 'true' || word === 'false' || word === 'null') yield { kind: 'operand', value: null };
    else {
      yield { kind: 'op', value: word };
      if (word === 'BI') return;
    }
  }
}

/** Index after a literal string starting at i: balanced parentheses, backslash escapes. */
function skipLiteralString(s: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === 0x5c) i++;
    else if (c === 0x28) depth++;
    else if (c === 0x29 && --depth === 0) return i + 1;
  }
  return i;
}

/** Names may escape bytes as #xx (ISO 32000-1, 7.3.5). */
function decodeName(raw: string): string {
  return raw.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

// ---- PDF: rasterising with pdftoppm ----

/** Renders pages of one PDF; the PDF is written to a private temporary file once, on first use. */
class PdfRenderer {
  readonly #bytes: Uint8Array;
  readonly #limits: Limits;
  #dir: Promise<string> | undefined;

  constructor(bytes: Uint8Array, limits: Limits) {
    this.#bytes = bytes;
    this.#limits = limits;
  }

  /** Pages are rendered one at a time (the generator awaits each), so one output name suffices. */
  async render(page: number, dpi: number): Promise<Uint8Array> {
    const dir = await (this.#dir ??= this.#writeFile());
    const out = join(dir, 'page');
    try {
      await runPdftoppm(this.#limits, join(dir, 'scan.pdf'), page, dpi, out);
      // renderDpi bounds the size from the MediaBox; a page scaled by /UserUnit could still be
      // huge, so the file is checked before it is read (one byte per pixel, plus the header).
      const { size } = await stat(`${out}.tif`);
      const max = this.#limits.maxRenderPx ** 2 + (1 << 20);
      if (size > max) throw new Error(`rasterised page too large (${size} bytes; at most ${max})`);
      return await readFile(`${out}.tif`);
    } finally {
      await rm(`${out}.tif`, { force: true });
    }
  }

  async close(): Promise<void> {
    if (!this.#dir) return;
    const dir = await this.#dir.catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }

  // A file, not stdin: pdftoppm reads stdin whole for every call, once per page.
  async #writeFile(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'boxhub-scan-'));
    await writeFile(join(dir, 'scan.pdf'), this.#bytes, { mode: 0o600 });
    return dir;
  }
}

/**
 * One page as an uncompressed greyscale TIFF (OUT.tif): about ten times faster than pdftoppm's
 * PNG at 200 dpi, and sharp reads it directly. To a file, because libtiff cannot write a pipe.
 */
function runPdftoppm(limits: Limits, file: string, page: number, dpi: number, out: string): Promise<void> {
  const args = ['-r', String(dpi), '-gray', '-tiff', '-tiffcompression', 'none', '-f', String(page), '-l', String(page), '-singlefile', file, out];
  return new Promise((resolve, reject) => {
    execFile(limits.pdftoppm, args, { encoding: 'buffer', maxBuffer: 1 << 20, timeout: limits.renderTimeoutMs }, (err, _stdout, stderr) => {
      if (err) reject(new Error(pdftoppmError(err, stderr, limits)));
      else resolve();
    });
  });
}

function pdftoppmError(err: ExecFileException, stderr: Buffer, limits: Limits): string {
  if (err.code === 'ENOENT') return `this PDF page is not a single JPEG and must be rasterised, but ${limits.pdftoppm} was not found: install poppler-utils`;
  if (err.killed) return `pdftoppm took longer than ${limits.renderTimeoutMs} ms and was stopped`;
  const line = stderr.toString('utf8').split('\n').find((l) => l.trim() !== '');
  return `pdftoppm failed: ${line ?? err.message}`;
}
