// Documents for print tests: PDFs whose pages say their number (so a test reads back which
// pages a printer got, in which order, with pdftotext), and real JPEGs made by pdftoppm.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';

export const A4: [number, number] = [595.28, 841.89];

export async function numberedPdf(pages: number, size: [number, number] = A4): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage(size).drawText(`page ${i + 1}`, { x: 50, y: size[1] - 100, size: 24 });
  return doc.save();
}

/** The text of each page of a PDF (pdftotext), trimmed; a blank page gives ''. */
export function pageTexts(pdf: string): string[] {
  const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' });
  const pages = text.split('\f');
  pages.pop(); // pdftotext ends every page with a form feed
  return pages.map((p) => p.trim());
}

/** Page sizes in points (pdfinfo), rounded to 0.1 pt. */
export function pageSizes(pdf: string): Array<[number, number]> {
  const out = execFileSync('pdfinfo', ['-f', '1', '-l', '9999', pdf], { encoding: 'utf8' });
  return [...out.matchAll(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts/gm)].map((m) => [
    Math.round(Number(m[1]) * 10) / 10,
    Math.round(Number(m[2]) * 10) / 10,
  ]);
}

/** A real baseline JPEG of `width`×`height` points of a one-page PDF, rendered at 72 dpi. */
export async function jpeg(width: number, height: number): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-jpeg-'));
  try {
    const doc = await PDFDocument.create();
    doc.addPage([width, height]).drawText('photo', { x: 10, y: height / 2, size: 12 });
    writeFileSync(join(dir, 'in.pdf'), await doc.save());
    execFileSync('pdftoppm', ['-jpeg', '-r', '72', '-singlefile', join(dir, 'in.pdf'), join(dir, 'out')]);
    return readFileSync(join(dir, 'out.jpg'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same JPEG with an EXIF APP1 segment saying `orientation` (TIFF tag 274), after SOI. */
export function withExifOrientation(jpg: Buffer, orientation: number): Buffer {
  const tiff = Buffer.from([
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0x00,
    0x00,
    0x00,
    0x08, // big-endian TIFF, IFD0 at 8
    0x00,
    0x01, // one entry
    0x01,
    0x12,
    0x00,
    0x03,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    orientation,
    0x00,
    0x00, // Orientation SHORT 1
    0x00,
    0x00,
    0x00,
    0x00, // no next IFD
  ]);
  const body = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const len = body.length + 2;
  return Buffer.concat([jpg.subarray(0, 2), Buffer.from([0xff, 0xe1, len >> 8, len & 0xff]), body, jpg.subarray(2)]);
}
