// `boxhub card recognize` on scanned files as scanners deliver them: multi-page PDF and TIFF,
// mixed with single images, built here from the golden corpus; the printed template itself
// (vector PDF, rasterised by pdftoppm), with and without pdftoppm on PATH; a truncated PDF.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { PDFDocument } from 'pdf-lib';
import type { StudentResult } from '../src/index.ts';

const root = new URL('../../../', import.meta.url).pathname;
const bin = join(root, 'packages/cli/bin/boxhub.mjs');
const corpus = join(root, 'packages/recognizer/test/corpus');
const tmp = mkdtempSync(join(tmpdir(), 'boxhub-cli-scans-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function boxhub(args: string[], env: NodeJS.ProcessEnv = process.env): StudentResult[] {
  const r = spawnSync(process.execPath, [bin, 'card', ...args], { cwd: root, encoding: 'utf8', env });
  const results = JSON.parse(r.stdout) as StudentResult[];
  // Exit 1 says a student could not be read (docs/cli.md, exit codes).
  assert.equal(r.status, results.some((s) => s.error_code !== 0) ? 1 : 0, r.stderr);
  return results;
}

function corpusCase(name: string) {
  const dir = join(corpus, name);
  const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as {
    pages: Array<{ file: string }>;
    results: StudentResult[];
  };
  // The corpus numbers item_id per 4 pages; the CLI has one item.
  const results = expected.results.map((x) => ({ ...x, pages: x.pages.map((p) => ({ ...p, item_id: 1 })) }));
  return { layout: join(dir, 'layout'), files: expected.pages.map((p) => join(dir, p.file)), results };
}

async function writePdf(name: string, jpegFiles: string[]): Promise<string> {
  const doc = await PDFDocument.create();
  for (const f of jpegFiles)
    doc
      .addPage([595.28, 841.89])
      .drawImage(await doc.embedJpg(readFileSync(f)), { x: 0, y: 0, width: 595.28, height: 841.89 });
  const path = join(tmp, name);
  writeFileSync(path, await doc.save());
  return path;
}

async function writeTiff(name: string, imageFiles: string[]): Promise<string> {
  const path = join(tmp, name);
  await sharp(
    imageFiles.map((f) => readFileSync(f)),
    { join: { animated: true } },
  )
    .tiff({ compression: 'lzw' })
    .toFile(path);
  return path;
}

const strip = (r: StudentResult) => ({ error_code: r.error_code, pages: r.pages, result: r.result });

test('a stack split over a PDF, a JPEG and a multi-page TIFF reads exactly as the separate images', async () => {
  const c = corpusCase('failures-and-recovery');
  const pdf = await writePdf('first.pdf', c.files.slice(0, 4));
  const tiff = await writeTiff('last.tif', c.files.slice(5));
  // The corpus numbers these pages as a duplex scan.
  const separate = boxhub(['recognize', '--layouts', c.layout, '--duplex', '--json', ...c.files]);
  const combined = boxhub(['recognize', '--layouts', c.layout, '--duplex', '--json', pdf, c.files[4]!, tiff]);
  assert.deepEqual(combined, separate);
  assert.deepEqual(combined.map(strip), c.results.map(strip));
});

test('--duplex over one scanner PDF gives the expected students', async () => {
  const c = corpusCase('clean-duplex-bubbles');
  const pdf = await writePdf('duplex.pdf', c.files);
  assert.deepEqual(boxhub(['recognize', '--layouts', c.layout, '--duplex', '--json', pdf]), c.results);
});

test('the printed template PDF is rasterised and read, with pdftoppm or, without it, the built-in engine', async () => {
  const out = join(tmp, 'template');
  const t = spawnSync(
    process.execPath,
    [bin, 'card', 'template', '--definition', join(root, 'docs/examples/card.json'), '--out', out],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(t.status, 0, t.stderr);
  const card = join(out, 'card.pdf');
  // A blank card: both sides found and identified, the empty student number is the error.
  const blank = boxhub(['recognize', '--layouts', out, '--duplex', '--json', card]);
  assert.deepEqual(blank.map(strip), [
    {
      error_code: 1001,
      pages: [
        { paper_number: 1, page_number: 1, front: true, item_id: 1 },
        { paper_number: 1, page_number: 2, front: false, item_id: 1 },
      ],
      result: null,
    },
  ]);
  assert.match(blank[0]!.detail ?? '', /^student number: digit 1: no mark/);
  // Same layout as the corpus case, so its JPEG pages (which need no pdftoppm) come first.
  const c = corpusCase('clean-duplex-bubbles');
  const scans = await writePdf('scans.pdf', c.files);
  const empty = join(tmp, 'empty-path');
  mkdirSync(empty);
  const got = boxhub(['recognize', '--layouts', out, '--duplex', '--json', scans, card], {
    ...process.env,
    PATH: empty,
  });
  assert.deepEqual(got.slice(0, 2), c.results);
  assert.equal(got.length, 3);
  // PATH without poppler-utils: pdf.js renders the card, read as with pdftoppm (docs/printing.md, "PDF engines").
  assert.deepEqual(strip(got[2]!), {
    ...strip(blank[0]!),
    pages: blank[0]!.pages.map((p) => ({ ...p, paper_number: 3, page_number: p.page_number + 4 })),
  });
  assert.match(got[2]!.detail ?? '', /^student number: digit 1: no mark/);
});

test('a truncated PDF is one unreadable page (1004) saying so; the rest of the stack is read', async () => {
  const c = corpusCase('clean-duplex-bubbles');
  const whole = readFileSync(await writePdf('whole.pdf', c.files));
  const cut = join(tmp, 'cut.pdf');
  writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
  const got = boxhub(['recognize', '--layouts', c.layout, '--json', cut, c.files[0]!, c.files[1]!]);
  assert.deepEqual(got[0], {
    error_code: 1004,
    pages: [{ paper_number: 1, page_number: 1, front: true, item_id: 1 }],
    result: null,
    detail: `page 1: ${cut}#1: PDF is truncated (no %%EOF at its end): transfer or scan it again`,
  });
  assert.equal(got.length, 2);
  assert.equal(got[1]!.error_code, 0);
  assert.deepEqual(got[1]!.result, c.results[0]!.result);
  const help = spawnSync(process.execPath, [bin, 'card', 'help', 'recognize'], { cwd: root, encoding: 'utf8' });
  assert.match(help.stdout, /a multi-page TIFF or a PDF/);
});
