// Checks a print file before anything is sent to the box (docs/api.md, "POST /api/print/create"
// preconditions; docs/printing.md "Document checks and limits"): what it is by its bytes, its
// size, that it opens, is not encrypted, has pages within the limit, every page of the size of
// media_size, page_ranges within it; and counts `pages` = selected pages × copies.
//
// PDFs are read by qpdf in child processes under prlimit (@boxhub/pdf-tools limited-tool.ts), never
// in this process: pdf-lib in-process inflates object streams without a memory bound and overflows
// the stack on a cyclic page tree (docs/printing.md, "Document checks and limits"). Two runs, side
// by side: `qpdf --json` (page list, encryption, the objects' dictionaries without stream data) and
// `qpdf --check` (decodes every stream: a compression bomb hits the memory limit there). The page
// boxes are then read from the JSON here, with the page tree walked under its own bounds (cycles,
// depth). Without qpdf on PATH the same checks run on the built-in engine (checkPdfBuiltin;
// docs/printing.md, "PDF engines"). JPEGs are read in-process: only their marker segments (protocol
// jpeg-header.ts).
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, type MediaSize, type PageRange } from '@boxhub/protocol';
import { hmmToPoints, mediaSizeFor, mediaSizeOf } from '@boxhub/protocol/print-mapping.ts';
import { isJpeg, JpegError, readJpegHeader } from '@boxhub/protocol/jpeg-header.ts';
import { runLimited, type ToolLimits } from '@boxhub/pdf-tools/limited-tool.ts';
import { structureEngine } from '@boxhub/pdf-tools/pdf-engines.ts';
import { runBuiltin } from '@boxhub/pdf-tools/builtin-pdf/run.ts';
import type { InspectResult } from '@boxhub/pdf-tools/builtin-pdf/tasks.ts';
import { limitHit } from './limit-hit.ts';

export interface DocumentCheckLimits {
  /** Largest file, bytes. */
  maxBytes: number;
  /** Most pages in a PDF. */
  maxPages: number;
  /** Largest JPEG, pixels (width × height). */
  maxJpegPixels: number;
  /** A page matches media_size within this many points per side, either orientation. */
  pageSizeTolerancePt: number;
  /** Each qpdf run. */
  tool: ToolLimits;
}

export const DOCUMENT_CHECK_LIMITS: DocumentCheckLimits = {
  maxBytes: 64 << 20,
  maxPages: 2000,
  maxJpegPixels: 100_000_000,
  pageSizeTolerancePt: 2,
  tool: { memoryBytes: 512 << 20, cpuSeconds: 20, timeoutMs: 30_000, maxOutputBytes: 32 << 20 },
};

export interface DocumentCheckInput {
  /** The file's bytes, or the path of a file holding them. */
  file: Uint8Array | string;
  fileType: 'pdf' | 'jpg';
  mediaSize: MediaSize;
  pageRanges?: readonly PageRange[];
  copies: number;
  limits?: Partial<DocumentCheckLimits>;
  signal?: AbortSignal;
}

export interface DocumentCheckResult {
  format: 'pdf' | 'jpg';
  bytes: number;
  /** Pages in the document (1 for a JPG). */
  documentPages: number;
  /** Pages page_ranges selects (a page named twice counts twice). */
  selectedPages: number;
  /** The print task's `pages` (docs/api.md): selected pages × copies. */
  pages: number;
  /** JPG: its size in pixels. */
  image?: { width: number; height: number };
}

const invalid = (msg: string) => new ApiError('PRINT_FILE_INVALID', msg);
const tooLarge = (msg: string) => new ApiError('PRINT_FILE_TOO_LARGE', msg);

/** What the first bytes say a file is. */
export function sniff(head: Uint8Array): 'pdf' | 'jpeg' | 'png' | 'gif' | 'zip' | 'html' | undefined {
  const text = Buffer.from(head.subarray(0, 1024)).toString('latin1');
  // Magic numbers at the start first: a JPEG's EXIF may well contain "%PDF-".
  if (isJpeg(head)) return 'jpeg';
  if (text.startsWith('\x89PNG')) return 'png';
  if (text.startsWith('GIF8')) return 'gif';
  if (text.startsWith('PK\x03\x04')) return 'zip';
  if (text.includes('%PDF-')) return 'pdf'; // the header may follow junk within 1024 bytes (readers allow it)
  if (/^\s*<(!doctype|html)/i.test(text)) return 'html';
  return undefined;
}

const KIND_WORDS = {
  pdf: 'a PDF',
  jpeg: 'a JPEG image',
  png: 'a PNG image',
  gif: 'a GIF image',
  zip: 'a ZIP archive (an Office document?)',
  html: 'an HTML page',
} as const;

export async function checkPrintDocument(i: DocumentCheckInput): Promise<DocumentCheckResult> {
  const limits: DocumentCheckLimits = {
    ...DOCUMENT_CHECK_LIMITS,
    ...i.limits,
    tool: { ...DOCUMENT_CHECK_LIMITS.tool, ...i.limits?.tool },
  };
  const bytes = typeof i.file === 'string' ? (await stat(i.file)).size : i.file.length;
  if (bytes === 0) throw invalid('the file is empty');
  if (bytes > limits.maxBytes) throw tooLarge(`the file is ${bytes} bytes, over the ${limits.maxBytes} byte limit`);
  const head = typeof i.file === 'string' ? await readHead(i.file, 1024) : i.file.subarray(0, 1024);
  const kind = sniff(head);
  const wanted = i.fileType === 'pdf' ? 'pdf' : 'jpeg';
  if (kind !== wanted) {
    throw invalid(
      `file_type is ${i.fileType} but the file is ${kind ? KIND_WORDS[kind] : `not ${KIND_WORDS[wanted]} (no ${wanted === 'pdf' ? '%PDF-' : 'FF D8 FF'} header)`}`,
    );
  }
  const result = i.fileType === 'jpg' ? await checkJpeg(i, limits, bytes) : await checkPdf(i, limits, bytes);
  const selected = selectPages(i.pageRanges, result.documentPages);
  return { ...result, selectedPages: selected, pages: selected * i.copies };
}

async function readHead(path: string, n: number): Promise<Buffer> {
  const f = await open(path, 'r');
  try {
    const b = Buffer.alloc(n);
    const { bytesRead } = await f.read(b, 0, n, 0);
    return b.subarray(0, bytesRead);
  } finally {
    await f.close();
  }
}

function selectPages(ranges: readonly PageRange[] | undefined, pages: number): number {
  if (!ranges?.length) return pages;
  let n = 0;
  for (const r of ranges) {
    if (r.to > pages) {
      throw new ApiError(
        'PRINT_PAGE_RANGES_OUT_OF_BOUNDS',
        `options.page_ranges ${r.from === r.to ? r.from : `${r.from}-${r.to}`} names a page after the last: the document has ${pages} page${pages === 1 ? '' : 's'}`,
      );
    }
    n += r.to - r.from + 1;
  }
  return n;
}

async function checkJpeg(
  i: DocumentCheckInput,
  limits: DocumentCheckLimits,
  bytes: number,
): Promise<Omit<DocumentCheckResult, 'selectedPages' | 'pages'>> {
  const data = typeof i.file === 'string' ? await readFile(i.file) : i.file;
  let h;
  try {
    h = readJpegHeader(data);
  } catch (e) {
    if (e instanceof JpegError) throw invalid(`the JPEG is damaged: ${e.message}`);
    throw e;
  }
  if (h.width * h.height > limits.maxJpegPixels) {
    throw tooLarge(`the JPEG is ${h.width} × ${h.height} pixels, over the ${limits.maxJpegPixels} pixel limit`);
  }
  // The picture ends with EOI (FF D9). In entropy-coded data FF is always followed by 00 or a
  // restart marker, so FF D9 after the frame header is the end, not data: a file without it
  // was cut short. Thumbnails in EXIF end with their own EOI, but before the frame header.
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const sof = Math.max(buf.indexOf(Buffer.from([0xff, 0xc0])), buf.indexOf(Buffer.from([0xff, 0xc2])), 0);
  if (buf.indexOf(Buffer.from([0xff, 0xd9]), sof) < 0)
    throw invalid('the JPEG is truncated: it has no end-of-image marker');
  return { format: 'jpg', bytes, documentPages: 1, image: { width: h.width, height: h.height } };
}

// ---------------------------------------------------------------------------------------------
// PDF

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface QpdfJson {
  pages?: Array<{ object?: string }>;
  encrypt?: { encrypted?: boolean };
  qpdf?: [unknown, Record<string, { value?: Json; stream?: { dict?: Json } }>];
}

/** qpdf names the file it read in its messages: keep the words, not the server's temp path. */
const words = (stderr: string, path: string) => {
  const line =
    stderr
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l && !/^qpdf: operation succeeded/.test(l)) ?? 'no reason given';
  return line
    .split(path)
    .join('the file')
    .replace(/^qpdf: /, '')
    .slice(0, 300);
};

async function checkPdf(
  i: DocumentCheckInput,
  limits: DocumentCheckLimits,
  bytes: number,
): Promise<Omit<DocumentCheckResult, 'selectedPages' | 'pages'>> {
  let dir: string | undefined;
  let path: string;
  if (typeof i.file === 'string') {
    path = i.file;
  } else {
    dir = await mkdtemp(join(tmpdir(), 'boxhub-print-check-'));
    path = join(dir, 'document.pdf');
    await writeFile(path, i.file, { mode: 0o600 });
  }
  try {
    if (structureEngine() === 'builtin') return await checkPdfBuiltin(path, i, limits, bytes);
    const [json, check] = await Promise.all([
      runLimited(
        'qpdf',
        [
          '--json=2',
          '--json-key=pages',
          '--json-key=encrypt',
          '--json-key=qpdf',
          '--json-stream-data=none',
          '--',
          path,
        ],
        limits.tool,
        i.signal,
      ),
      runLimited('qpdf', ['--check', '--', path], limits.tool, i.signal),
    ]);
    for (const r of [json, check]) {
      const hit = limitHit(r, limits.tool);
      if (hit) throw tooLarge(`the PDF is over the limits: ${hit}`);
    }
    if (/invalid password/i.test(json.stderr))
      throw invalid('the PDF is encrypted with a password; send it unencrypted');
    // qpdf exits 0 when fine, 3 when it read the file with warnings (it repaired a damaged
    // cross-reference table, say), 2 on errors.
    if (json.code !== 0 && json.code !== 3) throw invalid(`the PDF cannot be read: ${words(json.stderr, path)}`);
    if (check.code !== 0 && check.code !== 3)
      throw invalid(
        `the PDF is damaged: ${words(
          check.stderr
            .split('\n')
            .filter((l) => /^(ERROR|WARNING|qpdf:)/.test(l))
            .join('\n'),
          path,
        )}`,
      );
    let doc: QpdfJson;
    try {
      doc = JSON.parse(json.stdout.toString('utf8')) as QpdfJson;
    } catch {
      throw invalid('the PDF cannot be read: qpdf gave no readable description of it');
    }
    if (doc.encrypt?.encrypted)
      throw invalid('the PDF is encrypted (it carries an owner password restricting it); send an unencrypted copy');
    const pages = doc.pages ?? [];
    if (pages.length === 0) throw invalid('the PDF has no pages');
    if (pages.length > limits.maxPages)
      throw tooLarge(`the PDF has ${pages.length} pages, over the ${limits.maxPages} page limit`);
    checkPageSizes(pages, doc.qpdf?.[1] ?? {}, i.mediaSize, limits.pageSizeTolerancePt);
    return { format: 'pdf', bytes, documentPages: pages.length };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/** The same check with the built-in engine (no qpdf on this machine): pdf-lib on a worker thread
 *  under the same limits, answering in qpdf's JSON shape (@boxhub/pdf-tools builtin-pdf/). */
async function checkPdfBuiltin(
  path: string,
  i: DocumentCheckInput,
  limits: DocumentCheckLimits,
  bytes: number,
): Promise<Omit<DocumentCheckResult, 'selectedPages' | 'pages'>> {
  const r = await runBuiltin<InspectResult>({ kind: 'inspect', path }, limits.tool, i.signal);
  if (!r.ok) {
    if (r.reason === 'bomb' || r.reason === 'memory')
      throw tooLarge(
        `the PDF is over the limits: it needs more than ${limits.tool.memoryBytes >> 20} MiB of memory to read (a compression bomb?)`,
      );
    if (r.reason === 'timeout')
      throw tooLarge(
        `the PDF is over the limits: reading it took longer than ${Math.min(limits.tool.timeoutMs / 1000, limits.tool.cpuSeconds)} s`,
      );
    if (r.reason === 'aborted') throw tooLarge('the PDF is over the limits: the check was stopped');
    throw invalid(`the PDF cannot be read: ${r.message}`);
  }
  const doc = r.value;
  if (doc.encrypted)
    throw invalid('the PDF is encrypted (a password or an owner password restricting it); send an unencrypted copy');
  if (doc.pages.length === 0) throw invalid('the PDF has no pages');
  if (doc.pages.length > limits.maxPages)
    throw tooLarge(`the PDF has ${doc.pages.length} pages, over the ${limits.maxPages} page limit`);
  checkPageSizes(doc.pages, doc.objects, i.mediaSize, limits.pageSizeTolerancePt);
  return { format: 'pdf', bytes, documentPages: doc.pages.length };
}

const REF = /^(\d+) (\d+) R$/;
/** PDF 1.7 Annex C.2: a page is at most 14 400 units a side. */
const MAX_PAGE_SIDE = 14_400;

/**
 * Reads each page's box (CropBox, else MediaBox, inherited through /Parent: ISO 32000 §7.7.3.4)
 * from qpdf's object dictionaries and compares it with media_size, either orientation.
 */
export function checkPageSizes(
  pages: ReadonlyArray<{ object?: string }>,
  objects: Record<string, { value?: Json; stream?: { dict?: Json } }>,
  mediaSize: MediaSize,
  tolerance: number,
): void {
  const deref = (v: Json | undefined, hops = 0): Json | undefined => {
    if (typeof v === 'string' && REF.test(v)) {
      if (hops > 32) return undefined;
      const o = objects[`obj:${v}`];
      return deref(o?.value ?? o?.stream?.dict, hops + 1);
    }
    return v;
  };
  const media = mediaSizeOf(mediaSize);
  const [mw, mh] = [hmmToPoints(media.x), hmmToPoints(media.y)];
  const fmt = (n: number) => (Math.round(n * 10) / 10).toString();
  pages.forEach((p, index) => {
    const n = index + 1;
    const page = deref(p.object);
    if (!page || typeof page !== 'object' || Array.isArray(page))
      throw invalid(`page ${n} of the PDF is damaged: it is not a page dictionary`);
    const inherited = (key: string): Json | undefined => {
      const seen = new Set<unknown>();
      let node: Json | undefined = page;
      // The /Parent chain is finite in a sound file; cycles and absurd depth end the walk.
      for (
        let depth = 0;
        node && typeof node === 'object' && !Array.isArray(node) && depth < 1000 && !seen.has(node);
        depth++
      ) {
        seen.add(node);
        if (key in node) return deref(node[key]);
        node = deref(node['/Parent']);
      }
      return undefined;
    };
    const box = (key: '/MediaBox' | '/CropBox'): [number, number] | undefined => {
      const v = inherited(key);
      if (v === undefined) return undefined;
      const nums = Array.isArray(v) ? v.map((x) => deref(x)) : [];
      if (nums.length !== 4 || !nums.every((x): x is number => typeof x === 'number' && Number.isFinite(x))) {
        throw invalid(`page ${n} of the PDF has an invalid ${key.slice(1)} (${JSON.stringify(v).slice(0, 80)})`);
      }
      const unit = deref((page as Record<string, Json>)['/UserUnit']);
      const k = typeof unit === 'number' && unit > 0 ? unit : 1;
      const [x1, y1, x2, y2] = nums as [number, number, number, number];
      const w = Math.abs(x2 - x1) * k;
      const h = Math.abs(y2 - y1) * k;
      if (w < 1 || h < 1 || w > MAX_PAGE_SIDE * k || h > MAX_PAGE_SIDE * k) {
        throw invalid(`page ${n} of the PDF has an invalid ${key.slice(1)}: ${fmt(w)} × ${fmt(h)} pt`);
      }
      return [w, h];
    };
    const media = box('/MediaBox');
    if (!media) throw invalid(`page ${n} of the PDF has no MediaBox`);
    const [w, h] = box('/CropBox') ?? media;
    const fits = (a: number, b: number) => Math.abs(a - mw) <= tolerance && Math.abs(b - mh) <= tolerance;
    if (!fits(w, h) && !fits(h, w)) {
      const known = mediaSizeFor(Math.round((w / 72) * 2540), Math.round((h / 72) * 2540));
      throw new ApiError(
        'PRINT_PAGE_SIZE_MISMATCH',
        `page ${n} is ${fmt(w)} × ${fmt(h)} pt${known ? ` (${known.svc})` : ''}, not ${mediaSize} (${fmt(mw)} × ${fmt(mh)} pt ± ${tolerance} pt, either orientation)${
          known
            ? `: to print it on ${known.svc} paper, send options.media_size "${known.svc}"`
            : `: no media size the service knows is that size; make the PDF in the size of options.media_size (now ${mediaSize})`
        }`,
        { page: n, width_pt: Math.round(w * 100) / 100, height_pt: Math.round(h * 100) / 100, media_size: mediaSize },
      );
    }
  });
}
