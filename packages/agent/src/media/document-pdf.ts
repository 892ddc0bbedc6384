// PDF work on the box, through qpdf under limits (document-tools.ts), or the built-in engine
// where qpdf is not installed (docs/printing.md, "PDF engines"): counting pages and building the
// document the box sends (pages selected, reordered, blank backs, copies).
// qpdf extracts pages in 18 ms and reverses 200 pages in 32 ms (docs/printing.md, "Document preparation").
import { writeFile } from 'node:fs/promises';
import { structureEngine } from '@boxhub/pdf-tools/pdf-engines.ts';
import { runBuiltin, type BuiltinOutcome } from '@boxhub/pdf-tools/builtin-pdf/run.ts';
import type { InspectResult } from '@boxhub/pdf-tools/builtin-pdf/tasks.ts';
import { describeFailure, runLimited, type ToolLimits } from './document-tools.ts';
import type { PageItem } from './document-plan.ts';

export class PdfToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PdfToolError';
  }
}

export interface PdfInfo {
  /** Pages qpdf finds walking the page tree (not the /Count a file claims). */
  pages: number;
  encrypted: boolean;
}

/** qpdf exit codes: 0 fine, 3 fine with warnings (it repaired something), 2 errors. */
const ok = (code: number | null) => code === 0 || code === 3;

/** Words for a built-in engine run that did not finish (the same wording as describeFailure). */
function builtinFailure(r: Exclude<BuiltinOutcome<unknown>, { ok: true }>, limits: ToolLimits): string {
  if (r.reason === 'memory' || r.reason === 'bomb')
    return `the built-in PDF engine needed more than ${limits.memoryBytes >> 20} MiB of memory`;
  return `the built-in PDF engine ${r.reason === 'failed' ? `failed: ${r.message}` : r.message}`;
}

export async function pdfInfo(path: string, limits: ToolLimits, signal?: AbortSignal): Promise<PdfInfo> {
  if (structureEngine() === 'builtin') {
    const r = await runBuiltin<InspectResult>({ kind: 'inspect', path }, limits, signal);
    if (!r.ok) throw new PdfToolError(`the PDF cannot be read: ${builtinFailure(r, limits)}`);
    return { pages: r.value.pages.length, encrypted: r.value.encrypted };
  }
  const r = await runLimited('qpdf', ['--json=2', '--json-key=pages', '--json-key=encrypt', path], limits, signal);
  if (!ok(r.code)) {
    if (/invalid password/i.test(r.stderr)) throw new PdfToolError('the PDF is encrypted and needs a password');
    throw new PdfToolError(`the PDF cannot be read: ${describeFailure('qpdf', r, limits)}`);
  }
  let json: { pages?: unknown[]; encrypt?: { encrypted?: boolean } };
  try {
    json = JSON.parse(r.stdout.toString('utf8')) as typeof json;
  } catch {
    throw new PdfToolError('qpdf gave no readable page list');
  }
  return { pages: Array.isArray(json.pages) ? json.pages.length : 0, encrypted: json.encrypt?.encrypted === true };
}

/** A one-page PDF with a blank page of this size (points): the back of an odd sheet. */
export async function writeBlankPdf(path: string, widthPt: number, heightPt: number): Promise<void> {
  // pdf-lib is loaded with the first print that needs a blank back, not at the agent's start.
  const { PDFDocument } = await import('pdf-lib');
  const doc = await PDFDocument.create();
  doc.addPage([widthPt, heightPt]);
  await writeFile(path, await doc.save());
}

/** "1-3,5,7-9": runs of ascending pages, for qpdf's page-range syntax. */
export function rangeText(pages: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++;
    parts.push(i === j ? `${pages[i]}` : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * qpdf --empty --pages SRC 3,1-2 BLANK 1 SRC 5 -- OUT. The arguments go through an @file
 * (qpdf reads arguments from `@path`), so hundreds of copies do not hit the command-line limit.
 */
export async function buildPdf(o: {
  source: string;
  blank?: string;
  sequence: readonly PageItem[];
  out: string;
  argsFile: string;
  limits: ToolLimits;
  signal?: AbortSignal;
}): Promise<void> {
  if (structureEngine() === 'builtin') {
    const r = await runBuiltin<void>(
      { kind: 'build', source: o.source, ...(o.blank ? { blank: o.blank } : {}), sequence: o.sequence, out: o.out },
      o.limits,
      o.signal,
    );
    if (!r.ok) throw new PdfToolError(`the box could not rearrange the pages: ${builtinFailure(r, o.limits)}`);
    return;
  }
  const args = ['--empty', '--pages'];
  for (let i = 0; i < o.sequence.length; ) {
    const blank = o.sequence[i] === 'blank';
    let j = i;
    while (j < o.sequence.length && (o.sequence[j] === 'blank') === blank) j++;
    const run = o.sequence.slice(i, j);
    if (blank) {
      if (!o.blank) throw new Error('a blank page is needed but none was made');
      for (let k = 0; k < run.length; k++) args.push(o.blank, '1');
    } else {
      args.push(o.source, rangeText(run as number[]));
    }
    i = j;
  }
  // --deterministic-id keeps the output stable; streams are copied as they are, not decoded.
  args.push('--', '--deterministic-id', o.out);
  await writeFile(o.argsFile, `${args.join('\n')}\n`);
  const r = await runLimited('qpdf', [`@${o.argsFile}`], o.limits, o.signal);
  if (!ok(r.code))
    throw new PdfToolError(`the box could not rearrange the pages: ${describeFailure('qpdf', r, o.limits)}`);
}
