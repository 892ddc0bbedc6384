// A sample worksheet for the demo (`boxhub serve --demo` writes it to <data dir>/worksheet.pdf),
// so the quick start's print commands have a file to print: three A4 pages of exercises.
import { existsSync, writeFileSync } from 'node:fs';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

const A4 = [595.28, 841.89] as const;

export async function worksheetPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Worksheet: fractions (boxhub demo)');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  for (let p = 1; p <= 3; p++) {
    const page = doc.addPage([...A4]);
    page.drawText('Worksheet: fractions', { x: 56, y: 780, size: 20, font: bold });
    page.drawText(`Name: ______________________    Class: ______    Page ${p} of 3`, { x: 56, y: 750, size: 11, font });
    for (let i = 0; i < 10; i++) {
      const n = (p - 1) * 10 + i + 1;
      const a = (n % 7) + 1,
        b = (n % 5) + 2,
        c = (n % 4) + 1,
        d = (n % 3) + 3;
      const y = 700 - i * 62;
      page.drawText(`${n}.  ${a}/${b} + ${c}/${d} =`, { x: 56, y, size: 13, font });
      page.drawLine({
        start: { x: 200, y: y - 2 },
        end: { x: 540, y: y - 2 },
        thickness: 0.6,
        color: rgb(0.5, 0.5, 0.5),
      });
    }
  }
  return doc.save();
}

/** Writes the sample to `path` unless a file is there already (a person may have replaced it). */
export async function writeWorksheet(path: string): Promise<void> {
  if (!existsSync(path)) writeFileSync(path, await worksheetPdf());
}
