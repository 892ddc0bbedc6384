// Print files for the print benches: a PDF of `pages` A4 pages, each holding one JPEG of an A4
// scan at 300 dpi whose entropy-coded data is random (incompressible, so the file is as big as
// asked), as a scanned worksheet is.
import { randomBytes } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { jpegOf } from '../../packages/pdf-tools/src/testing/hostile-pdf.ts';

const A4: [number, number] = [595.28, 841.89];

export async function scannedPdf(pages: number, totalBytes: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const perPage = Math.max(1024, Math.floor(totalBytes / pages) - 600);
  for (let i = 0; i < pages; i++) {
    const body = randomBytes(perPage).map((b) => (b === 0xff ? 0xfe : b));
    const jpg = Buffer.concat([jpegOf(2480, 3508, { eoi: false }), body, Buffer.from([0xff, 0xd9])]);
    const img = await doc.embedJpg(jpg);
    doc.addPage(A4).drawImage(img, { x: 0, y: 0, width: A4[0], height: A4[1] });
  }
  return Buffer.from(await doc.save());
}
