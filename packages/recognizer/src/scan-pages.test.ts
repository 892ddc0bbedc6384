// scanPages on real files built here: PDFs wrapping the golden corpus's JPEGs, a multi-page
// TIFF of the same pages, the printed template (vector: rasterised by pdftoppm) and broken files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { PDFDocument, degrees, rgb } from 'pdf-lib';
import { scanPages, type ScanPage, type ScanPagesOptions } from './scan-pages.ts';
import { generateTemplate } from './template-pdf.ts';
import { createLayoutSet, loadLayoutDirs } from './layout-store.ts';
import { recognizePage } from './page-recognizer.ts';
import { decodeGrey } from './grey-image.ts';
import { StudentAssembler, type PageSource, type StudentResult } from './student-assembler.ts';

const corpus = new URL('../test/corpus/failures-and-recovery/', import.meta.url).pathname;
const expected = JSON.parse(readFileSync(join(corpus, 'expected.json'), 'utf8')) as {
  pages: Array<PageSource & { file: string }>;
  results: StudentResult[];
};
const jpegs = expected.pages.map((p) => new Uint8Array(readFileSync(join(corpus, p.file))));
const example = JSON.parse(readFileSync(new URL('../../../docs/examples/card.json', import.meta.url), 'utf8'));
const A4: [number, number] = [595.28, 841.89];

async function collect(bytes: Uint8Array, opts?: ScanPagesOptions): Promise<ScanPage[]> {
  const out: ScanPage[] = [];
  for await (const p of scanPages(bytes, opts)) out.push(p);
  return out;
}

function images(pages: ScanPage[]): Uint8Array[] {
  return pages.map((p) => {
    assert.ok('image' in p, JSON.stringify(p));
    return p.image;
  });
}

/** A scanner's PDF: one A4 page per JPEG, the JPEG filling the page. */
async function jpegPdf(list: Uint8Array[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const j of list) doc.addPage(A4).drawImage(await doc.embedJpg(j), { x: 0, y: 0, width: A4[0], height: A4[1] });
  return doc.save();
}

/** The pages' results through the assembler, as the corpus test makes them. */
async function recognizeAll(pages: Uint8Array[]): Promise<StudentResult[]> {
  const layouts = await loadLayoutDirs([join(corpus, 'layout')]);
  const assembler = new StudentAssembler(layouts);
  const out: StudentResult[] = [];
  for (const [i, bytes] of pages.entries()) {
    const { file: _file, ...source } = expected.pages[i]!;
    out.push(...assembler.push(source, await recognizePage(bytes, layouts)));
  }
  return [...out, ...assembler.end()];
}

test('a single JPEG, PNG, WebP or single-page TIFF yields itself, unchanged', async () => {
  const small = sharp(jpegs[0]).resize(400);
  for (const bytes of [
    jpegs[0]!,
    await small.clone().png().toBuffer(),
    await small.clone().webp().toBuffer(),
    await small.clone().tiff().toBuffer(),
  ]) {
    const pages = await collect(bytes);
    assert.equal(pages.length, 1);
    assert.ok('image' in pages[0]! && pages[0].image === bytes && pages[0].via === 'image' && pages[0].page === 1);
  }
  // A JPEG comment saying "%PDF-" in the first kilobyte does not make it a PDF.
  const comment = Buffer.from('%PDF-1.7 in a comment');
  const tricky = Buffer.concat([
    jpegs[0]!.subarray(0, 2),
    Buffer.from([0xff, 0xfe, 0, comment.length + 2]),
    comment,
    jpegs[0]!.subarray(2),
  ]);
  assert.equal((await sharp(tricky).metadata()).format, 'jpeg');
  assert.deepEqual(
    (await collect(tricky)).map((p) => 'via' in p && p.via),
    ['image'],
  );
});

test('scanner PDF: each page is its embedded JPEG byte for byte, without pdftoppm; results equal the separate images', async (t) => {
  const pdf = await jpegPdf(jpegs);
  const before = Buffer.from(pdf);
  const t0 = performance.now();
  // A command that does not exist: the JPEG pages must not need it.
  const pages = await collect(pdf, { pdftoppm: '/nonexistent/pdftoppm' });
  const ms = performance.now() - t0;
  t.diagnostic(
    `JPEG extraction: ${(ms / pages.length).toFixed(2)} ms per page (${pages.length} pages, ${pdf.length} bytes)`,
  );
  assert.deepEqual(
    pages.map((p) => p.page),
    jpegs.map((_, i) => i + 1),
  );
  assert.ok(pages.every((p) => 'via' in p && p.via === 'pdf-jpeg'));
  for (const [i, img] of images(pages).entries())
    assert.ok(Buffer.from(img).equals(jpegs[i]!), `page ${i + 1} is the embedded JPEG`);
  assert.ok(Buffer.from(pdf).equals(before), 'the PDF is not modified');
  assert.deepEqual(await recognizeAll(images(pages)), await recognizeAll(jpegs));
});

test('multi-page TIFF: every page in order, the same pixels and results as the separate images', async () => {
  // Lossless compression, so each page holds exactly the decoded JPEG's pixels.
  const tiff = new Uint8Array(
    await sharp(
      jpegs.map((j) => Buffer.from(j)),
      { join: { animated: true } },
    )
      .tiff({ compression: 'lzw' })
      .toBuffer(),
  );
  assert.equal((await sharp(tiff).metadata()).pages, jpegs.length);
  const before = Buffer.from(tiff);
  const pages = await collect(tiff);
  assert.deepEqual(
    pages.map((p) => [p.page, 'via' in p && p.via]),
    jpegs.map((_, i) => [i + 1, 'image-page']),
  );
  for (const [i, img] of images(pages).entries()) {
    const [a, b] = [await decodeGrey(img), await decodeGrey(jpegs[i]!)];
    assert.ok(
      a.width === b.width && a.height === b.height && Buffer.from(a.data).equals(Buffer.from(b.data)),
      `page ${i + 1} pixels`,
    );
  }
  assert.ok(Buffer.from(tiff).equals(before), 'the TIFF is not modified');
  const strip = (r: StudentResult) => ({ error_code: r.error_code, pages: r.pages, result: r.result });
  assert.deepEqual((await recognizeAll(images(pages))).map(strip), expected.results.map(strip));
  assert.deepEqual(await collect(tiff, { maxPages: 4 }), [
    { page: 1, error: `file has ${jpegs.length} pages; at most 4 per file (split the scan)` },
  ]);
});

test('the printed template (vector pages) is rasterised by pdftoppm and each blank side is read with its layout', async (t) => {
  const { pdf, layout } = await generateTemplate(example);
  const t0 = performance.now();
  const pages = await collect(pdf);
  t.diagnostic(`pdftoppm at 200 dpi: ${((performance.now() - t0) / pages.length).toFixed(0)} ms per page`);
  assert.deepEqual(
    pages.map((p) => [p.page, 'via' in p && p.via]),
    [
      [1, 'pdf-render'],
      [2, 'pdf-render'],
    ],
  );
  const first = images(pages)[0]!;
  const meta = await sharp(first).metadata();
  assert.deepEqual(
    [meta.format, meta.width, meta.height, meta.channels],
    ['tiff', 1654, 2339, 1],
    'A4 at 200 dpi, greyscale',
  );
  const layouts = createLayoutSet([layout]);
  for (const [i, img] of images(pages).entries()) {
    const r = await recognizePage(img, layouts);
    assert.ok(r.status === 'ok', JSON.stringify(r));
    assert.deepEqual(
      [r.layout_id, r.sheet, r.side, r.upside_down],
      [layout.layout_id, 1, i === 0 ? 'front' : 'back', false],
    );
    assert.ok(r.areas.length > 0 && r.areas.every((a) => a.state === 'empty'), 'a blank card has no fills');
    if (i === 0) assert.equal(r.qrcode, example.qrcode);
  }
});

test('PDF pages that are not exactly one upright JPEG are rasterised; text alone does not prevent extraction', async () => {
  const template = await PDFDocument.load((await generateTemplate(example)).pdf);
  const doc = await PDFDocument.create();
  const jpg = await doc.embedJpg(jpegs[0]!);
  const full = { x: 0, y: 0, width: A4[0], height: A4[1] };
  doc.addPage(A4).drawImage(jpg, full);
  const [vector] = await doc.copyPages(template, [0]);
  doc.addPage(vector!);
  doc.addPage(A4).drawImage(jpg, { x: A4[0], y: A4[1], width: A4[0], height: A4[1], rotate: degrees(180) });
  const two = doc.addPage(A4);
  two.drawImage(jpg, { x: 0, y: 0, width: 200, height: 280 });
  two.drawImage(jpg, { x: 300, y: 0, width: 200, height: 280 });
  const framed = doc.addPage(A4);
  framed.drawImage(jpg, full);
  framed.drawRectangle({ x: 10, y: 10, width: 50, height: 50, color: rgb(0, 0, 0) });
  const turned = doc.addPage(A4);
  turned.drawImage(jpg, full);
  turned.setRotation(degrees(90));
  const ocr = doc.addPage(A4);
  ocr.drawImage(jpg, full);
  ocr.drawText('Scanned (c) 2024 [OCR layer]', { x: 20, y: 20, size: 10 });
  const pages = await collect(await doc.save());
  assert.deepEqual(
    pages.map((p) => 'via' in p && p.via),
    ['pdf-jpeg', 'pdf-render', 'pdf-render', 'pdf-render', 'pdf-render', 'pdf-render', 'pdf-jpeg'],
  );
  assert.ok(Buffer.from(images(pages)[6]!).equals(jpegs[0]!));
});

test('pdftoppm failing or too slow: an error for those pages only; missing: the built-in engine renders them', async () => {
  const mixed = await PDFDocument.create();
  const [a, b] = await mixed.copyPages(await PDFDocument.load(await jpegPdf(jpegs.slice(0, 2))), [0, 1]);
  const [v] = await mixed.copyPages(await PDFDocument.load((await generateTemplate(example)).pdf), [0]);
  for (const p of [a!, v!, b!]) mixed.addPage(p);
  const pdf = await mixed.save();
  const empty = mkdtempSync(join(tmpdir(), 'boxhub-nopoppler-'));
  try {
    // Without pdftoppm the vector page is rendered by pdf.js (docs/printing.md, "PDF engines").
    const without = await collect(pdf, { pdftoppm: join(empty, 'pdftoppm') });
    assert.deepEqual(
      without.map((p) => ('via' in p ? p.via : 'error' in p ? p.error : '')),
      ['pdf-jpeg', 'pdf-render', 'pdf-jpeg'],
    );
    const meta = await sharp((without[1] as { image: Uint8Array }).image).metadata();
    assert.deepEqual(
      [meta.format, meta.width! > 1500, meta.height! > 1500],
      ['png', true, true],
      'a whole page at 200 dpi',
    );
    const cases: Array<[ScanPagesOptions, RegExp]> = [
      [{ pdftoppm: 'false' }, /^pdftoppm failed: /],
      [{ renderTimeoutMs: 1 }, /^pdftoppm took longer than 1 ms and was stopped$/],
    ];
    for (const [opts, message] of cases) {
      const pages = await collect(pdf, opts);
      assert.deepEqual(
        pages.map((p) => p.page),
        [1, 2, 3],
      );
      assert.ok('image' in pages[0]! && 'image' in pages[2]!, 'the JPEG pages still come through');
      assert.ok('error' in pages[1]! && message.test(pages[1].error), JSON.stringify(pages[1]));
    }
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test('broken and oversized files give one clear error, never a crash', async () => {
  const pdf = await jpegPdf(jpegs.slice(0, 3));
  assert.deepEqual(await collect(pdf.subarray(0, Math.floor(pdf.length * 0.6))), [
    { page: 1, error: 'PDF is truncated (no %%EOF at its end): transfer or scan it again' },
  ]);
  const cases: Array<[Uint8Array, RegExp]> = [
    [Buffer.from('%PDF-1.7\nthis is not a PDF body\n%%EOF\n'), /^(cannot read PDF|PDF has no pages)/],
    [Buffer.from('hello, not an image'), /^not a PDF or an image file that can be read/],
    [new Uint8Array(0), /^not a PDF or an image file that can be read/],
  ];
  for (const [bytes, message] of cases) {
    const pages = await collect(bytes);
    assert.equal(pages.length, 1);
    assert.ok('error' in pages[0]! && pages[0].page === 1 && message.test(pages[0].error), JSON.stringify(pages[0]));
  }
  assert.deepEqual(await collect(pdf, { maxBytes: 1000 }), [
    { page: 1, error: `file too large (${pdf.length} bytes; at most 1000)` },
  ]);
  assert.deepEqual(await collect(pdf, { maxPages: 2 }), [
    { page: 1, error: 'file has 3 pages; at most 2 per file (split the scan)' },
  ]);
});

test('the temporary copy for pdftoppm is removed, also when the caller stops early', async () => {
  const { pdf } = await generateTemplate(example);
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-scantmp-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir; // os.tmpdir() reads it on every call
  try {
    assert.equal((await collect(pdf)).length, 2);
    assert.deepEqual(readdirSync(dir), []);
    for await (const p of scanPages(pdf)) {
      assert.equal(p.page, 1);
      assert.equal(readdirSync(dir).length, 1, 'the copy exists while pages are read');
      break;
    }
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
