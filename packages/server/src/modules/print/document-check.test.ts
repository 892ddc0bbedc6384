// The print document check (document-check.ts) on good files and on a generated hostile corpus
// (@boxhub/pdf-tools testing/hostile-pdf.ts): every hostile file gets a clear ApiError within the limits, never a hang
// or a crash. The limits are the service's own defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, type ErrorKey } from '@boxhub/protocol';
import { checkPrintDocument, DOCUMENT_CHECK_LIMITS, type DocumentCheckInput } from './document-check.ts';
import * as corpus from '@boxhub/pdf-tools/testing/hostile-pdf.ts';

const check = (file: Uint8Array | string, o: Partial<DocumentCheckInput> = {}) =>
  checkPrintDocument({ file, fileType: 'pdf', mediaSize: 'SVC_MS_A4', copies: 1, ...o });

async function refused(p: Promise<unknown>, key: ErrorKey, msg: RegExp): Promise<number> {
  const t0 = performance.now();
  await assert.rejects(p, (e: unknown) => {
    if (!(e instanceof ApiError)) throw e;
    assert.equal(e.key, key, e.message);
    assert.match(e.message, msg);
    return true;
  });
  return performance.now() - t0;
}

test('a good PDF: pages = selected pages × copies; a file path works as bytes do', async (t) => {
  const pdf = corpus.plainPdf(5);
  assert.deepEqual(await check(pdf, { copies: 3 }), {
    format: 'pdf',
    bytes: pdf.length,
    documentPages: 5,
    selectedPages: 5,
    pages: 15,
  });
  const r = await check(pdf, {
    copies: 2,
    pageRanges: [
      { from: 1, to: 2 },
      { from: 4, to: 4 },
      { from: 4, to: 5 },
    ],
  });
  assert.deepEqual([r.selectedPages, r.pages], [5, 10], 'a page named twice counts twice');
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-check-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'doc.pdf'), pdf);
  assert.equal((await check(join(dir, 'doc.pdf'))).documentPages, 5);
});

test('page sizes: media_size ± 2 pt either orientation, the CropBox when there is one', async () => {
  assert.equal((await check(corpus.plainPdf(1, '[0 0 595 842]'))).documentPages, 1, 'A4 rounded to whole points');
  assert.equal((await check(corpus.plainPdf(1, '[0 0 841.89 595.28]'))).documentPages, 1, 'A4 landscape');
  assert.equal((await check(corpus.plainPdf(2, '[0 0 612 792]'), { mediaSize: 'SVC_MS_LETTER' })).documentPages, 2);
  await refused(
    check(corpus.plainPdf(2, '[0 0 612 792]')),
    'PRINT_PAGE_SIZE_MISMATCH',
    /^page 1 is 612 × 792 pt \(SVC_MS_LETTER\), not SVC_MS_A4 \(595\.3 × 841\.9 pt ± 2 pt, either orientation\): to print it on SVC_MS_LETTER paper, send options\.media_size "SVC_MS_LETTER"$/,
  );
  await refused(
    check(corpus.plainPdf(1, '[0 0 598 842]')),
    'PRINT_PAGE_SIZE_MISMATCH',
    /^page 1 is 598 × 842 pt, not SVC_MS_A4 .*: no media size the service knows is that size; make the PDF in the size of options\.media_size \(now SVC_MS_A4\)$/,
  );
  // Inherited from the page tree, and a CropBox smaller than the MediaBox counts.
  await refused(
    check(
      corpus.pdfOf({
        1: '<< /Type /Catalog /Pages 2 0 R >>',
        2: '<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 595.28 841.89] >>',
        3: '<< /Type /Page /Parent 2 0 R >>',
        4: '<< /Type /Page /Parent 2 0 R /CropBox [0 0 420 595] >>',
      }),
    ),
    'PRINT_PAGE_SIZE_MISMATCH',
    /^page 2 is 420 × 595 pt \(SVC_MS_A5\)/,
  );
});

test('page_ranges beyond the document', async () => {
  await refused(
    check(corpus.plainPdf(3), { pageRanges: [{ from: 2, to: 4 }] }),
    'PRINT_PAGE_RANGES_OUT_OF_BOUNDS',
    /^options\.page_ranges 2-4 names a page after the last: the document has 3 pages$/,
  );
});

test('a JPG: its size in pixels; one page', async () => {
  const jpg = corpus.jpegOf(1200, 800);
  assert.deepEqual(await check(jpg, { fileType: 'jpg', copies: 4 }), {
    format: 'jpg',
    bytes: jpg.length,
    documentPages: 1,
    image: { width: 1200, height: 800 },
    selectedPages: 1,
    pages: 4,
  });
  await refused(
    check(jpg, { fileType: 'jpg', pageRanges: [{ from: 2, to: 2 }] }),
    'PRINT_PAGE_RANGES_OUT_OF_BOUNDS',
    /the document has 1 page$/,
  );
});

test('hostile and broken files: a clear error within the limits, never a hang', async (t) => {
  const gib = 1 << 30;
  const cases: Array<[string, Uint8Array, Partial<DocumentCheckInput>, ErrorKey, RegExp]> = [
    ['empty file', Buffer.alloc(0), {}, 'PRINT_FILE_INVALID', /^the file is empty$/],
    [
      'JPEG renamed .pdf',
      corpus.jpegOf(100, 100),
      {},
      'PRINT_FILE_INVALID',
      /^file_type is pdf but the file is a JPEG image$/,
    ],
    [
      'JPEG whose metadata says %PDF-, renamed .pdf',
      Buffer.concat([
        Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x0c]),
        Buffer.from('x %PDF-1.7'),
        corpus.jpegOf(10, 10).subarray(2),
      ]),
      {},
      'PRINT_FILE_INVALID',
      /the file is a JPEG image$/,
    ],
    [
      'PDF sent as jpg',
      corpus.plainPdf(1),
      { fileType: 'jpg' },
      'PRINT_FILE_INVALID',
      /^file_type is jpg but the file is a PDF$/,
    ],
    [
      'PNG as pdf',
      Buffer.from('\x89PNG\r\n\x1a\n....', 'latin1'),
      {},
      'PRINT_FILE_INVALID',
      /the file is a PNG image$/,
    ],
    [
      'HTML error page',
      Buffer.from('<!DOCTYPE html><html>404</html>'),
      {},
      'PRINT_FILE_INVALID',
      /the file is an HTML page$/,
    ],
    ['text', Buffer.from('hello'), {}, 'PRINT_FILE_INVALID', /not a PDF \(no %PDF- header\)/],
    [
      'truncated at 60 %',
      corpus.plainPdf(3).subarray(0, 700),
      {},
      'PRINT_FILE_INVALID',
      /^the PDF (cannot be read|is damaged|has no pages)/,
    ],
    [
      'cyclic page tree',
      corpus.cyclicPageTree(),
      {},
      'PRINT_FILE_INVALID',
      /^the PDF cannot be read: .*Loop detected in \/Pages structure/,
    ],
    ['no pages', corpus.noPages(), {}, 'PRINT_FILE_INVALID', /^the PDF has no pages$/],
    ['no MediaBox', corpus.noMediaBox(), {}, 'PRINT_FILE_INVALID', /^page 1 of the PDF has no MediaBox$/],
    [
      'absurd MediaBox [0 0 1e30 -5]',
      corpus.mediaBox('[0 0 1e30 -5]'),
      {},
      'PRINT_FILE_INVALID',
      /^page 1 of the PDF has an invalid MediaBox/,
    ],
    [
      'MediaBox 20 000 pt',
      corpus.mediaBox('[0 0 20000 20000]'),
      {},
      'PRINT_FILE_INVALID',
      /invalid MediaBox: 20000 × 20000 pt/,
    ],
    ['empty MediaBox', corpus.mediaBox('[0 0 0 0]'), {}, 'PRINT_FILE_INVALID', /invalid MediaBox: 0 × 0 pt/],
    [
      '100 000 nested arrays',
      corpus.nestedArrays(100_000),
      {},
      'PRINT_FILE_INVALID',
      /^page 1 of the PDF is damaged: it is not a page dictionary$/,
    ],
    [
      'AES-256, user password',
      corpus.encrypted('user'),
      {},
      'PRINT_FILE_INVALID',
      /^the PDF is encrypted with a password; send it unencrypted$/,
    ],
    [
      'AES-256, owner password only',
      corpus.encrypted(''),
      {},
      'PRINT_FILE_INVALID',
      /^the PDF is encrypted \(it carries an owner password/,
    ],
    [
      'content stream inflating to 1 GiB',
      corpus.contentBomb(gib),
      {},
      'PRINT_FILE_TOO_LARGE',
      /^the PDF is over the limits: it needs more than 512 MiB of memory to read \(a compression bomb\?\)$/,
    ],
    [
      'object stream inflating to 1 GiB',
      corpus.objectStreamBomb(gib),
      {},
      'PRINT_FILE_TOO_LARGE',
      /needs more than 512 MiB of memory/,
    ],
    [
      '2001 pages',
      corpus.plainPdf(2001),
      {},
      'PRINT_FILE_TOO_LARGE',
      /^the PDF has 2001 pages, over the 2000 page limit$/,
    ],
    [
      'over the byte limit',
      corpus.plainPdf(3),
      { limits: { maxBytes: 1000 } },
      'PRINT_FILE_TOO_LARGE',
      /^the file is \d+ bytes, over the 1000 byte limit$/,
    ],
    [
      'JPEG 20 000 × 20 000 in 100 bytes',
      corpus.jpegOf(20000, 20000),
      { fileType: 'jpg' },
      'PRINT_FILE_TOO_LARGE',
      /^the JPEG is 20000 × 20000 pixels, over the 100000000 pixel limit$/,
    ],
    [
      'JPEG cut short',
      corpus.jpegOf(100, 100, { eoi: false }),
      { fileType: 'jpg' },
      'PRINT_FILE_INVALID',
      /^the JPEG is truncated/,
    ],
    [
      'JPEG without a frame',
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xd9]),
      { fileType: 'jpg' },
      'PRINT_FILE_INVALID',
      /^the JPEG is damaged: JPEG has no frame header/,
    ],
  ];
  for (const [name, file, o, key, msg] of cases) {
    const ms = await refused(check(file, o), key, msg);
    t.diagnostic(`${name}: ${key} in ${Math.round(ms)} ms`);
    // The limits bound every case: 30 s wall clock per qpdf run; all of these take far less.
    assert.ok(ms < DOCUMENT_CHECK_LIMITS.tool.timeoutMs, `${name} took ${ms} ms`);
  }
});

test('damaged but readable files are accepted as qpdf repairs them, odd but valid trees too', async (t) => {
  for (const [name, file] of [
    ['cross-reference /Prev loop', corpus.xrefLoop()],
    ['/Count says a billion, one page', corpus.absurdCount()],
    ['page tree 200 levels deep, MediaBox at the top', corpus.deepPageTree(200)],
  ] as const) {
    const t0 = performance.now();
    const r = await check(file);
    t.diagnostic(`${name}: accepted, ${r.documentPages} page(s), ${Math.round(performance.now() - t0)} ms`);
    assert.equal(r.documentPages, 1, name);
  }
});
