// Prepares a downloaded document for one printer: decides what the printer does itself and
// what the box does (document-plan.ts), and builds the file to send (docs/printing.md,
// "Box-side printing"). Drivers call it; the files it makes live in `workDir` until cleanup().
import { readFile, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { PrintJobOptions } from '@boxhub/protocol';
import { JpegError, readJpegHeader } from '@boxhub/protocol/jpeg-header.ts';
import { PrintRejectedError } from '../drivers/types.ts';
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from './document-tools.ts';
import { PageRangeError, planPages, type PagePlan, type PrinterPageFeatures } from './document-plan.ts';
import { buildPdf, PdfToolError, pdfInfo, writeBlankPdf } from './document-pdf.ts';
import { jpegToPdf, type Margins } from './document-jpeg.ts';

/** The document cannot be printed as it is (damaged, encrypted, a page range beyond its end,
 *  over a limit): nothing was sent to the printer. Print error 4004 document_invalid. */
export class PrintDocumentError extends PrintRejectedError {
  constructor(message: string) {
    super(message);
    this.name = 'PrintDocumentError';
  }
}

export interface DocumentLimits {
  tool: ToolLimits;
  /** Largest document the box reads into memory (JPG), bytes. */
  maxFileBytes: number;
  /** Most pages the box builds (selected pages × copies it makes itself, blanks included). */
  maxBuiltPages: number;
  /** Largest JPEG, pixels. */
  maxJpegPixels: number;
}

export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = {
  tool: DEFAULT_TOOL_LIMITS,
  maxFileBytes: 64 << 20,
  maxBuiltPages: 10_000,
  maxJpegPixels: 100_000_000,
};

export interface PrinterDocumentFeatures {
  pages: PrinterPageFeatures;
  /** document-format-supported. */
  formats: readonly string[];
  /** print-scaling-supported. */
  printScaling: readonly string[];
}

export interface PrepareInput {
  file: string;
  format: 'pdf' | 'jpg';
  options: PrintJobOptions;
  printer: PrinterDocumentFeatures;
  /** The media: size and the printer's margins for it, points. */
  page: { width: number; height: number; margins: Margins };
  workDir: string;
  limits?: DocumentLimits;
  signal?: AbortSignal;
}

export interface PreparedDocument {
  /** The file to send. */
  path: string;
  mimeType: 'application/pdf' | 'image/jpeg';
  /** Attributes the printer is asked for. */
  printer: PagePlan['printer'] & { printScaling?: 'fit' | 'fill' };
  /** Pages of the document as downloaded. */
  sourcePages: number;
  /** Pages of what is sent. */
  sentPages: number;
  /** Sides a printer that counts impressions reports at the end (blank backs included). */
  sides: number;
  /** Whether the box built a new file (else `path` is the downloaded file). */
  built: boolean;
  cleanup(): Promise<void>;
}

export async function prepareDocument(i: PrepareInput): Promise<PreparedDocument> {
  const limits = i.limits ?? DEFAULT_DOCUMENT_LIMITS;
  const made: string[] = [];
  const base = join(i.workDir, basename(i.file));
  const cleanup = async () => {
    await Promise.all(made.map((f) => rm(f, { force: true })));
  };
  try {
    return await prepare(i, limits, base, made, cleanup);
  } catch (e) {
    await cleanup();
    if (e instanceof PageRangeError || e instanceof PdfToolError || e instanceof JpegError)
      throw new PrintDocumentError(e.message);
    throw e;
  }
}

async function prepare(
  i: PrepareInput,
  limits: DocumentLimits,
  base: string,
  made: string[],
  cleanup: () => Promise<void>,
): Promise<PreparedDocument> {
  const o = i.options;
  const scaling = o.borderless ? ('fill' as const) : ('fit' as const);
  const duplex = o.duplex !== undefined && o.duplex !== 'SVC_DP_NONE';
  const pageReq = {
    reverse: o.reverse,
    duplex,
    copies: o.copies,
    collate: o.collate,
    ...(o.page_ranges ? { ranges: o.page_ranges } : {}),
  };

  let pdf = i.file;
  let sourcePages: number;
  if (i.format === 'jpg') {
    const size = (await stat(i.file)).size;
    if (size > limits.maxFileBytes)
      throw new PrintDocumentError(`the JPEG is ${size} bytes, over the box's ${limits.maxFileBytes}`);
    const jpeg = await readFile(i.file);
    const h = readJpegHeader(jpeg);
    if (h.width * h.height > limits.maxJpegPixels)
      throw new PrintDocumentError(`the JPEG is ${h.width}×${h.height} pixels, over the box's ${limits.maxJpegPixels}`);
    const plan = planPages({ ...pageReq, pages: 1 }, i.printer.pages);
    // The printer scales the JPEG itself only when it says it can, the box need not touch the
    // page, and the picture is stored upright (EXIF handling varies between printers).
    if (
      i.printer.formats.includes('image/jpeg') &&
      i.printer.printScaling.includes(scaling) &&
      plan.sequence === null &&
      h.orientation === 1
    ) {
      return {
        path: i.file,
        mimeType: 'image/jpeg',
        printer: { ...plan.printer, printScaling: scaling },
        sourcePages: 1,
        sentPages: 1,
        sides: plan.sides,
        built: false,
        cleanup,
      };
    }
    pdf = `${base}.page.pdf`;
    made.push(pdf);
    await jpegToPdf(jpeg, pdf, {
      width: i.page.width,
      height: i.page.height,
      margins: o.borderless ? { top: 0, bottom: 0, left: 0, right: 0 } : i.page.margins,
      scaling,
    });
    sourcePages = 1;
  } else {
    const info = await pdfInfo(i.file, limits.tool, i.signal);
    if (info.encrypted) throw new PrintDocumentError('the PDF is encrypted');
    if (info.pages === 0) throw new PrintDocumentError('the PDF has no pages');
    sourcePages = info.pages;
  }

  const plan = planPages({ ...pageReq, pages: sourcePages }, i.printer.pages);
  if (plan.sequence === null) {
    return {
      path: pdf,
      mimeType: 'application/pdf',
      printer: plan.printer,
      sourcePages,
      sentPages: sourcePages,
      sides: plan.sides,
      built: pdf !== i.file,
      cleanup,
    };
  }
  if (plan.sequence.length > limits.maxBuiltPages) {
    throw new PrintDocumentError(
      `the box would have to build ${plan.sequence.length} pages (copies it makes itself included), over its ${limits.maxBuiltPages}`,
    );
  }
  let blank: string | undefined;
  if (plan.sequence.includes('blank')) {
    blank = `${base}.blank.pdf`;
    made.push(blank);
    await writeBlankPdf(blank, i.page.width, i.page.height);
  }
  const out = `${base}.prepared.pdf`;
  const argsFile = `${base}.qpdf-args`;
  made.push(out, argsFile);
  await buildPdf({
    source: pdf,
    ...(blank ? { blank } : {}),
    sequence: plan.sequence,
    out,
    argsFile,
    limits: limits.tool,
    ...(i.signal ? { signal: i.signal } : {}),
  });
  return {
    path: out,
    mimeType: 'application/pdf',
    printer: plan.printer,
    sourcePages,
    sentPages: plan.sequence.length,
    sides: plan.sides,
    built: true,
    cleanup,
  };
}
