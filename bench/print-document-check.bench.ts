// Cost of the print document check (server modules/print/document-check.ts) on a 20-page,
// 10 MB PDF, against MD5 of the same bytes (what print create computes for file_check_sum
// anyway) measured side by side: ms per MB and the ratio check / MD5. Two kinds of pages:
// "scanned" pages hold a JPEG each (DCT data, which the check copies but does not decode), and
// "flate" pages hold a Flate-compressed image each (which `qpdf --check` decodes). Then the
// time the check takes to refuse the hostile files of the test corpus, with the default limits.
//
// Env: BENCH_ROUNDS (20).
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import {
  PDFDocument,
  type PDFName,
  drawObject,
  popGraphicsState,
  pushGraphicsState,
  concatTransformationMatrix,
} from 'pdf-lib';
import { checkPrintDocument } from '../packages/server/src/modules/print/document-check.ts';
import * as corpus from '../packages/pdf-tools/src/testing/hostile-pdf.ts';
import { header, median, percentile } from './support/child.ts';
import { scannedPdf } from './print/pdf.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const PAGES = 20;
const A4: [number, number] = [595.28, 841.89];

async function flatePdf(bytesPerPage: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const side = Math.floor(Math.sqrt(bytesPerPage / 3));
  for (let i = 0; i < PAGES; i++) {
    const pixels = randomBytes(side * side * 3); // incompressible: the file is as big as the pixels
    const stream = doc.context.flateStream(pixels, {
      Type: 'XObject',
      Subtype: 'Image',
      Width: side,
      Height: side,
      ColorSpace: 'DeviceRGB',
      BitsPerComponent: 8,
    });
    const ref = doc.context.register(stream);
    const page = doc.addPage(A4);
    const name: PDFName = page.node.newXObject('Im', ref);
    page.pushOperators(
      pushGraphicsState(),
      concatTransformationMatrix(A4[0], 0, 0, A4[0], 0, 100),
      drawObject(name),
      popGraphicsState(),
    );
  }
  return doc.save();
}

async function time<T>(f: () => Promise<T> | T): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

header('print document check: 20-page 10 MB PDF vs MD5 of the same bytes', [
  `${ROUNDS} rounds each after 3 warm-up runs; qpdf ${'--json'} and ${'--check'} run side by side under prlimit`,
]);
for (const [kind, pdf] of [
  ['scanned (JPEG pages)', await scannedPdf(PAGES, PAGES * 500_000)],
  ['flate (compressed image pages)', await flatePdf(500_000)],
] as const) {
  const mb = pdf.length / 2 ** 20;
  for (let i = 0; i < 3; i++)
    await checkPrintDocument({ file: pdf, fileType: 'pdf', mediaSize: 'SVC_MS_A4', copies: 1 });
  const check: number[] = [];
  const md5: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    check.push(await time(() => checkPrintDocument({ file: pdf, fileType: 'pdf', mediaSize: 'SVC_MS_A4', copies: 1 })));
    md5.push(await time(() => createHash('md5').update(pdf).digest('hex')));
  }
  check.sort((a, b) => a - b);
  md5.sort((a, b) => a - b);
  const c = median(check);
  const m = median(md5);
  console.log(`${kind}: ${mb.toFixed(1)} MB, ${PAGES} pages`);
  console.log(
    `  check  median ${c.toFixed(1)} ms (p90 ${percentile(check, 90).toFixed(1)}), ${(c / mb).toFixed(1)} ms/MB`,
  );
  console.log(`  md5    median ${m.toFixed(1)} ms, ${(m / mb).toFixed(2)} ms/MB`);
  console.log(`  ratio check / md5: ${(c / m).toFixed(1)}`);
}

console.log('hostile files (default limits: 512 MiB, 20 s CPU, 30 s wall per qpdf run):');
const hostile: Array<[string, Uint8Array]> = [
  ['cyclic page tree', corpus.cyclicPageTree()],
  ['100 000 nested arrays', corpus.nestedArrays(100_000)],
  ['/Count 1e9, one page', corpus.absurdCount()],
  ['content stream inflating to 1 GiB', corpus.contentBomb(1 << 30)],
  ['object stream inflating to 1 GiB', corpus.objectStreamBomb(1 << 30)],
  ['2001 pages', corpus.plainPdf(2001)],
];
for (const [name, file] of hostile) {
  let outcome = 'accepted';
  const ms = await time(async () => {
    try {
      await checkPrintDocument({ file, fileType: 'pdf', mediaSize: 'SVC_MS_A4', copies: 1 });
    } catch (e) {
      outcome = (e as { key?: string }).key ?? String(e);
    }
  });
  console.log(`  ${name} (${file.length} bytes): ${outcome} in ${Math.round(ms)} ms`);
}
