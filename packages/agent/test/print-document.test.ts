// The box's document work: JPEG headers, the JPEG page placement, and prepareDocument with the
// real qpdf under prlimit (documents built, limits enforced, hostile input refused; hostile files
// from the corpus the server's document check is tested on, @boxhub/pdf-tools/testing/hostile-pdf.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PrintJobOptions } from '@boxhub/protocol';
import { displayedSize, JpegError, readJpegHeader } from '@boxhub/protocol/jpeg-header.ts';
import { placement } from '../src/media/document-jpeg.ts';
import {
  prepareDocument,
  PrintDocumentError,
  DEFAULT_DOCUMENT_LIMITS,
  type PrinterDocumentFeatures,
} from '../src/media/document.ts';
import { describeFailure, runLimited } from '../src/media/document-tools.ts';
import { jpegOf, objectStreamBomb } from '@boxhub/pdf-tools/testing/hostile-pdf.ts';
import { jpeg, numberedPdf, pageSizes, pageTexts, withExifOrientation } from './print-fixtures.ts';
import { tempDirUntilExit as tempDir } from '../src/store/temp-state-dir.ts';

const page = { width: 595.28, height: 841.89, margins: { top: 10, bottom: 10, left: 10, right: 10 } };
const bare: PrinterDocumentFeatures = {
  pages: { pageRanges: false, maxCopies: 1, collation: { collated: false, uncollated: false } },
  formats: ['application/pdf'],
  printScaling: [],
};
const opts = (o: Partial<PrintJobOptions> = {}): PrintJobOptions => ({
  media_size: 'SVC_MS_A4',
  media_type: 'SVC_MT_PLAIN',
  borderless: false,
  copies: 1,
  collate: true,
  reverse: false,
  strict: false,
  ...o,
});

function file(bytes: Uint8Array, name = 'doc.pdf'): { file: string; dir: string } {
  const dir = tempDir('boxhub-doc-');
  writeFileSync(join(dir, name), bytes);
  return { file: join(dir, name), dir };
}

test('JPEG header: size, components, EXIF orientation; damage is a JpegError', async () => {
  const j = await jpeg(40, 30);
  assert.deepEqual(readJpegHeader(j), { width: 40, height: 30, components: 3, progressive: false, orientation: 1 });
  const turned = readJpegHeader(withExifOrientation(j, 6));
  assert.equal(turned.orientation, 6);
  assert.deepEqual(displayedSize(turned), { width: 30, height: 40 });
  assert.throws(
    () => readJpegHeader(Buffer.from('%PDF-1.7')),
    (e: unknown) => e instanceof JpegError && /not a JPEG/.test(e.message),
  );
  const sof = j.indexOf(Buffer.from([0xff, 0xc0]));
  assert.ok(sof > 0);
  for (let cut = 3; cut < sof + 9; cut += 3) {
    // Cut before the frame header: an error, never a read past the end.
    assert.throws(() => readJpegHeader(j.subarray(0, cut)), JpegError, `cut at ${cut}`);
  }
});

test('JPEG placement: fit inside the margins, fill the page, turned to the page and by EXIF', () => {
  // A 400×300 landscape picture on a portrait page is turned a quarter and fits the width.
  const fit = placement({ width: 400, height: 300, orientation: 1 }, { ...page, scaling: 'fit' });
  assert.equal(fit.turned, true);
  assert.ok(Math.abs(fit.scale - (595.28 - 20) / 300) < 1e-9);
  const [a, b, c, d, e, f] = fit.matrix;
  // The unit square's corners land inside the printable area.
  for (const [u, v] of [
    [0, 0],
    [1, 0],
    [0, 1],
    [1, 1],
  ]) {
    const x = a * u! + c * v! + e;
    const y = b * u! + d * v! + f;
    assert.ok(x >= 10 - 1e-6 && x <= 585.28 + 1e-6 && y >= 10 - 1e-6 && y <= 831.89 + 1e-6, `${u},${v} → ${x},${y}`);
  }
  // Fill covers the whole page (borderless): the scale is the larger ratio.
  const fill = placement(
    { width: 400, height: 300, orientation: 1 },
    { width: 288, height: 432, margins: { top: 0, bottom: 0, left: 0, right: 0 }, scaling: 'fill' },
  );
  assert.ok(Math.abs(fill.scale - Math.max(288 / 300, 432 / 400)) < 1e-9);
  // EXIF 6 stores a portrait photo sideways: upright it is portrait, so no extra turn.
  assert.equal(placement({ width: 400, height: 300, orientation: 6 }, { ...page, scaling: 'fit' }).turned, false);
});

test('prepareDocument builds what the printer cannot do, and cleans up', async () => {
  const { file: f, dir } = file(await numberedPdf(5));
  const doc = await prepareDocument({
    file: f,
    format: 'pdf',
    options: opts({ reverse: true, duplex: 'SVC_DP_NOTUMBLE', copies: 2, page_ranges: [{ from: 2, to: 4 }] }),
    printer: bare,
    page,
    workDir: dir,
  });
  assert.equal(doc.built, true);
  assert.equal(doc.sourcePages, 5);
  // Pages 2-4 two-sided, sheets reversed ([4, blank], [2, 3]); two collated copies by the box.
  assert.deepEqual(pageTexts(doc.path), ['page 4', '', 'page 2', 'page 3', 'page 4', '', 'page 2', 'page 3']);
  assert.equal(doc.sides, 8);
  assert.deepEqual(doc.printer, { copies: 1 });
  assert.deepEqual(
    pageSizes(doc.path).map(([w]) => w),
    Array(8).fill(595.3),
    'the blank back is the media size',
  );
  await doc.cleanup();
  assert.deepEqual(readdirSync(dir), ['doc.pdf']);
});

test('prepareDocument leaves a document the printer handles alone', async () => {
  const { file: f, dir } = file(await numberedPdf(3));
  const doc = await prepareDocument({
    file: f,
    format: 'pdf',
    options: opts({ copies: 4 }),
    printer: { ...bare, pages: { ...bare.pages, maxCopies: 99, collation: { collated: true, uncollated: true } } },
    page,
    workDir: dir,
  });
  assert.deepEqual([doc.path, doc.built, doc.sides, doc.printer], [f, false, 12, { copies: 4, collate: true }]);
});

test('a JPG becomes a PDF page of the media size when the printer cannot scale JPEG', async () => {
  const { file: f, dir } = file(await jpeg(300, 200), 'photo.jpg');
  const doc = await prepareDocument({
    file: f,
    format: 'jpg',
    options: opts({ copies: 2 }),
    printer: bare,
    page,
    workDir: dir,
  });
  assert.equal(doc.mimeType, 'application/pdf');
  assert.deepEqual(
    pageSizes(doc.path),
    [
      [595.3, 841.9],
      [595.3, 841.9],
    ],
    'two copies made by the box',
  );
  await doc.cleanup();
  const direct = await prepareDocument({
    file: f,
    format: 'jpg',
    options: opts({ borderless: true }),
    printer: { ...bare, formats: ['application/pdf', 'image/jpeg'], printScaling: ['fit', 'fill'] },
    page,
    workDir: dir,
  });
  assert.deepEqual([direct.mimeType, direct.path, direct.printer.printScaling], ['image/jpeg', f, 'fill']);
});

test('hostile or broken documents are refused with a reason, within the limits', async () => {
  const limits = {
    ...DEFAULT_DOCUMENT_LIMITS,
    tool: { memoryBytes: 128 << 20, cpuSeconds: 5, timeoutMs: 10_000, maxOutputBytes: 8 << 20 },
  };
  const good = Buffer.from(await numberedPdf(2));
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ['truncated', good.subarray(0, Math.floor(good.length * 0.6)), /the PDF cannot be read/],
    ['a JPEG named .pdf', jpegOf(20, 20), /the PDF cannot be read/],
    ['empty', Buffer.alloc(0), /the PDF cannot be read/],
  ];
  for (const [name, bytes, re] of cases) {
    const { file: f, dir } = file(bytes);
    await assert.rejects(
      prepareDocument({ file: f, format: 'pdf', options: opts(), printer: bare, page, workDir: dir, limits }),
      (e: unknown) => e instanceof PrintDocumentError && re.test(e.message),
      name,
    );
    assert.deepEqual(readdirSync(dir), ['doc.pdf'], `${name}: nothing left behind`);
  }
  const { file: j, dir } = file(Buffer.from('not a jpeg'), 'x.jpg');
  await assert.rejects(
    prepareDocument({ file: j, format: 'jpg', options: opts(), printer: bare, page, workDir: dir }),
    (e: unknown) => e instanceof PrintDocumentError && /not a JPEG/.test(e.message),
  );
});

test('runLimited: a tool over its memory or time limit is stopped and said so', async () => {
  // An object stream that inflates to 128 MiB: qpdf must decode it to read the page in it.
  const lim = { memoryBytes: 64 << 20, cpuSeconds: 20, timeoutMs: 20_000, maxOutputBytes: 1 << 20 };
  const { file: f } = file(objectStreamBomb(128 << 20));
  const r = await runLimited('qpdf', ['--json=2', '--json-key=pages', f], lim);
  assert.notEqual(r.code, 0);
  assert.match(describeFailure('qpdf', r, lim), /needed more than 64 MiB of memory/);
  // The same file with room enough is a valid one-page PDF: the limit made the difference.
  const roomy = await runLimited('qpdf', ['--json=2', '--json-key=pages', f], { ...lim, memoryBytes: 512 << 20 });
  assert.equal(roomy.code, 0, roomy.stderr);
  assert.equal((JSON.parse(roomy.stdout.toString()) as { pages: unknown[] }).pages.length, 1);
  const slow = await runLimited('sleep', ['5'], { ...lim, timeoutMs: 200 });
  assert.equal(slow.killed, 'timeout');
  assert.ok(slow.ms < 2000, `${slow.ms} ms`);
  assert.match(describeFailure('sleep', slow, { ...lim, timeoutMs: 1000 }), /took longer than 1 s/);
});
