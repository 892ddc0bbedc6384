// The print document check on the built-in PDF engine (no qpdf: pdf-lib on a worker thread,
// docs/printing.md "PDF engines"), on the same hostile corpus as document-check.test.ts: a clear
// ApiError within the same limits for each, never a hang or a crash; good and damaged-but-readable
// files are read as with qpdf. BOXHUB_PDF_ENGINE=builtin picks the engine in this process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type ErrorKey } from '@boxhub/protocol';
import { checkPrintDocument, DOCUMENT_CHECK_LIMITS, type DocumentCheckInput } from './document-check.ts';
import * as corpus from '@boxhub/pdf-tools/testing/hostile-pdf.ts';

process.env.BOXHUB_PDF_ENGINE = 'builtin';

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

test('built-in engine: good PDFs, page sizes (inherited, CropBox), page ranges', async () => {
  const pdf = corpus.plainPdf(5);
  assert.deepEqual(await check(pdf, { copies: 3 }), {
    format: 'pdf',
    bytes: pdf.length,
    documentPages: 5,
    selectedPages: 5,
    pages: 15,
  });
  assert.equal((await check(corpus.plainPdf(1, '[0 0 841.89 595.28]'))).documentPages, 1, 'A4 landscape');
  await refused(
    check(corpus.plainPdf(2, '[0 0 612 792]')),
    'PRINT_PAGE_SIZE_MISMATCH',
    /^page 1 is 612 × 792 pt \(SVC_MS_LETTER\), not SVC_MS_A4/,
  );
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
  await refused(
    check(corpus.plainPdf(3), { pageRanges: [{ from: 2, to: 4 }] }),
    'PRINT_PAGE_RANGES_OUT_OF_BOUNDS',
    /the document has 3 pages$/,
  );
});

test('built-in engine: hostile and broken files get a clear error within the same limits', async (t) => {
  const gib = 1 << 30;
  const cases: Array<[string, Uint8Array, ErrorKey, RegExp]> = [
    [
      'truncated at 60 %',
      corpus.plainPdf(3).subarray(0, 700),
      'PRINT_FILE_INVALID',
      /^the PDF (cannot be read|is damaged|has no pages)/,
    ],
    ['cyclic page tree', corpus.cyclicPageTree(), 'PRINT_FILE_INVALID', /^the PDF cannot be read: /],
    ['no pages', corpus.noPages(), 'PRINT_FILE_INVALID', /^the PDF has no pages$/],
    ['no MediaBox', corpus.noMediaBox(), 'PRINT_FILE_INVALID', /^page 1 of the PDF has no MediaBox$/],
    [
      'absurd MediaBox',
      corpus.mediaBox('[0 0 1e30 -5]'),
      'PRINT_FILE_INVALID',
      /^(page 1 of the PDF has an invalid MediaBox|the PDF cannot be read: Trying to parse invalid object)/,
    ],
    [
      'MediaBox 20 000 pt',
      corpus.mediaBox('[0 0 20000 20000]'),
      'PRINT_FILE_INVALID',
      /invalid MediaBox: 20000 × 20000 pt/,
    ],
    [
      '100 000 nested arrays',
      corpus.nestedArrays(100_000),
      'PRINT_FILE_INVALID',
      /^(page 1 of the PDF is damaged|the PDF cannot be read|the PDF has no pages)/,
    ],
    [
      'AES-256, user password',
      corpus.encrypted('user'),
      'PRINT_FILE_INVALID',
      /^the PDF is encrypted .*send an unencrypted copy$/,
    ],
    ['AES-256, owner password only', corpus.encrypted(''), 'PRINT_FILE_INVALID', /^the PDF is encrypted /],
    [
      'content stream inflating to 1 GiB',
      corpus.contentBomb(gib),
      'PRINT_FILE_TOO_LARGE',
      /^the PDF is over the limits: it needs more than 512 MiB of memory to read \(a compression bomb\?\)$/,
    ],
    [
      'object stream inflating to 1 GiB',
      corpus.objectStreamBomb(gib),
      'PRINT_FILE_TOO_LARGE',
      /needs more than 512 MiB of memory/,
    ],
    ['2001 pages', corpus.plainPdf(2001), 'PRINT_FILE_TOO_LARGE', /^the PDF has 2001 pages, over the 2000 page limit$/],
  ];
  for (const [name, file, key, msg] of cases) {
    const ms = await refused(check(file), key, msg);
    t.diagnostic(`${name}: ${key} in ${Math.round(ms)} ms`);
    assert.ok(ms < DOCUMENT_CHECK_LIMITS.tool.timeoutMs, `${name} took ${ms} ms`);
  }
  // The clock bounds a run the way prlimit bounds qpdf's: past it the worker is terminated.
  await refused(
    check(corpus.plainPdf(2001), { limits: { tool: { ...DOCUMENT_CHECK_LIMITS.tool, timeoutMs: 1 } } }),
    'PRINT_FILE_TOO_LARGE',
    /^the PDF is over the limits: reading it took longer than 0\.001 s$/,
  );
});

test('built-in engine: damaged but readable files are accepted, odd but valid trees too', async () => {
  for (const [name, file] of [
    ['cross-reference /Prev loop', corpus.xrefLoop()],
    ['/Count says a billion, one page', corpus.absurdCount()],
    ['page tree 200 levels deep, MediaBox at the top', corpus.deepPageTree(200)],
  ] as const) {
    assert.equal((await check(file)).documentPages, 1, name);
  }
});
