// PDF items: pages streamed to disk (each page on disk before the next), JPEGs embedded byte
// for byte, MD5 and size of the file as written; the item rule; and the whole batch pipeline
// over the simulated scanner, with blank-page skip, faults, stop and early exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { PDFDocument } from 'pdf-lib';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { PdfItemWriter, PDF_FILE_OVERHEAD, PDF_PAGE_OVERHEAD } from '../src/media/pdf-writer.ts';
import { capsOf, closesNow, ITEM_LIMITS, ITEM_RULE, startsNewItem } from '../src/scan/item-rule.ts';
import { assembleItems, type AssembledItem, type PageOutcome } from '../src/scan/assemble.ts';
import { SimScanner } from '../src/drivers/sim/scanner.ts';
import { ScanFault, type ScannedPage, type ScanRequest } from '../src/drivers/types.ts';

function tempDir(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'boxhub-items-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const jpeg = (width: number, height: number, channels: 1 | 3, seed: number) =>
  sharp({
    create: {
      width,
      height,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 120 + seed, sigma: 40 },
    },
  })
    .toColourspace(channels === 1 ? 'b-w' : 'srgb')
    .jpeg({ quality: 80 })
    .toBuffer();

test('PdfItemWriter: JPEGs embedded unchanged, page sizes from dpi, MD5 and size of the file, each page on disk before add() returns', async (t) => {
  const dir = tempDir(t);
  const pages = [await jpeg(827, 1169, 3, 1), await jpeg(413, 584, 1, 2), await jpeg(827, 1169, 3, 3)];
  const specs = [
    { width: 827, height: 1169, dpi: 100 },
    { width: 413, height: 584, dpi: 50 },
    { width: 827, height: 1169, dpi: 100 },
  ];
  const w = await PdfItemWriter.create(join(dir, 'a.pdf'));
  let sum = 0;
  for (let i = 0; i < pages.length; i++) {
    await w.add(pages[i]!, specs[i]!);
    sum += pages[i]!.length;
    // Nothing of an added page waits in memory: it is in the file already.
    assert.ok(
      w.bytesWritten > sum && w.bytesWritten < sum + (i + 1) * PDF_PAGE_OVERHEAD + PDF_FILE_OVERHEAD,
      `${w.bytesWritten} after ${sum}`,
    );
    assert.equal(statSync(join(dir, 'a.pdf')).size, w.bytesWritten);
  }
  const r = await w.finish();
  const file = readFileSync(r.path);
  assert.deepEqual(r, { path: join(dir, 'a.pdf'), size: file.length, md5: md5(file), pages: 3 });
  for (const p of pages) assert.ok(file.indexOf(p) > 0, 'JPEG embedded byte for byte');
  // poppler reads it back without a complaint (a broken xref makes it warn and reconstruct):
  // three pages of A4, the images as DCT with their colour and resolution.
  const checked = spawnSync('pdfinfo', ['-f', '1', '-l', '3', r.path], { encoding: 'utf8' });
  assert.equal(checked.stderr, '');
  const info = checked.stdout;
  assert.match(info, /Producer:\s+boxhub agent/);
  assert.match(info, /PDF version:\s+1\.4/);
  assert.match(info, /Pages:\s+3/);
  assert.match(info, /Page {4}1 size:\s+595\.44 x 841\.68 pts/);
  assert.match(info, /Page {4}2 size:\s+594\.72 x 840\.96 pts/);
  const list = execFileSync('pdfimages', ['-list', r.path], { encoding: 'utf8' })
    .split('\n')
    .slice(2)
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/));
  assert.deepEqual(
    list.map((c) => [c[3], c[4], c[5], c[6], c[8], c[12]]),
    [
      ['827', '1169', 'rgb', '3', 'jpeg', '100'],
      ['413', '584', 'gray', '1', 'jpeg', '50'],
      ['827', '1169', 'rgb', '3', 'jpeg', '100'],
    ],
  );
  // pdf-lib, a strict parser, reads the same page sizes.
  const doc = await PDFDocument.load(file);
  assert.deepEqual(
    doc.getPages().map((pg) => [pg.getWidth(), pg.getHeight()]),
    [
      [595.44, 841.68],
      [594.72, 840.96],
      [595.44, 841.68],
    ],
  );
});

test('PdfItemWriter refuses what a PDF page cannot be and stays usable; abort deletes the file', async (t) => {
  const dir = tempDir(t);
  const w = await PdfItemWriter.create(join(dir, 'b.pdf'));
  const good = await jpeg(100, 100, 3, 1);
  await assert.rejects(w.add(Buffer.from('not a jpeg'), { width: 1, height: 1, dpi: 100 }), /not a JPEG/);
  await assert.rejects(
    w.add(
      await sharp({ create: { width: 20, height: 20, channels: 4, background: '#000' } })
        .toColourspace('cmyk')
        .jpeg()
        .toBuffer(),
      { width: 20, height: 20, dpi: 100 },
    ),
    /8-bit greyscale or colour JPEG, not 8-bit with 4 components/,
  );
  await assert.rejects(w.add(good, { width: 99, height: 100, dpi: 100 }), /page is 99×100 but its JPEG is 100×100/);
  await assert.rejects(w.add(good, { width: 100, height: 100, dpi: 0 }), /dpi must be positive/);
  await w.add(good, { width: 100, height: 100, dpi: 100 });
  assert.equal(w.pages, 1);
  await w.abort();
  assert.deepEqual(readdirSync(dir), []);
  await w.abort();
  await assert.rejects(w.add(good, { width: 100, height: 100, dpi: 100 }), /is aborted/);
  const empty = await PdfItemWriter.create(join(dir, 'c.pdf'));
  await assert.rejects(empty.finish(), /at least one page/);
  await empty.abort();
  assert.deepEqual(readdirSync(dir), []);
});

test('item rule: whole sheets, hard caps, a first page always fits', () => {
  const limits = { maxPages: 4, maxBytes: 100_000 };
  const file = (pages: number, bytes: number) => bytes + pages * PDF_PAGE_OVERHEAD + PDF_FILE_OVERHEAD;
  assert.equal(startsNewItem({ pages: 0, bytes: 0 }, { front: true, bytes: 10_000_000 }, true, limits), false);
  assert.equal(startsNewItem({ pages: 2, bytes: 20_000 }, { front: true, bytes: 10_000 }, true, limits), false);
  // 3 pages (a back was blank): a duplex sheet would make 5.
  assert.equal(startsNewItem({ pages: 3, bytes: 30_000 }, { front: true, bytes: 10_000 }, true, limits), true);
  assert.equal(startsNewItem({ pages: 3, bytes: 30_000 }, { front: true, bytes: 10_000 }, false, limits), false);
  // The back of a sheet stays with its front while the caps hold...
  assert.equal(startsNewItem({ pages: 3, bytes: 30_000 }, { front: false, bytes: 10_000 }, true, limits), false);
  // ...and not when it would break one.
  assert.equal(startsNewItem({ pages: 4, bytes: 30_000 }, { front: false, bytes: 10_000 }, true, limits), true);
  const nearly = 100_000 - file(2, 0) - 30_000;
  assert.equal(startsNewItem({ pages: 1, bytes: 30_000 }, { front: false, bytes: nearly }, true, limits), false);
  assert.equal(startsNewItem({ pages: 1, bytes: 30_000 }, { front: false, bytes: nearly + 1 }, true, limits), true);
  // A front whose sheet, at twice its size, would not fit.
  assert.equal(startsNewItem({ pages: 2, bytes: 30_000 }, { front: true, bytes: 30_000 }, true, limits), false);
  assert.equal(startsNewItem({ pages: 2, bytes: 30_000 }, { front: true, bytes: 35_000 }, true, limits), true);
  assert.equal(startsNewItem({ pages: 2, bytes: 30_000 }, { front: true, bytes: 35_000 }, false, limits), false);
  assert.deepEqual(ITEM_LIMITS, { maxPages: 200, maxBytes: 100 * 1024 * 1024 });
});

test("item rule as the stack scans: closed right after the page that completes it, by pages or by age at a sheet's end", () => {
  const rule = { pages: 4, seconds: 3 };
  const caps = capsOf(rule, ITEM_LIMITS);
  assert.deepEqual(caps, { maxPages: 4, maxBytes: ITEM_LIMITS.maxBytes });
  assert.deepEqual(capsOf({ pages: 150, seconds: 0 }, { maxPages: 100, maxBytes: 10 }), {
    maxPages: 100,
    maxBytes: 10,
  });
  const item = (pages: number, openedAt = 0) => ({ pages, bytes: pages * 10_000, openedAt });
  const front = { front: true, bytes: 10_000 };
  const back = { front: false, bytes: 10_000 };
  // Duplex, 2 pages (one sheet): the next sheet fits, the item is young.
  assert.equal(closesNow(item(2), front, true, 1000, rule, caps), false);
  // 2 pages at 3 s, at the end of a sheet: closed by age; in the middle of one (a back to come), not.
  assert.equal(closesNow(item(2), front, true, 3000, rule, caps), true);
  assert.equal(closesNow(item(1), back, true, 9000, rule, caps), false);
  // 4 pages: the next sheet cannot fit, closed now (not when its front comes).
  assert.equal(closesNow(item(4), front, true, 0, rule, caps), true);
  // 3 pages (a blank back): a whole duplex sheet would make 5; simplex one page makes 4.
  assert.equal(closesNow(item(3), front, true, 0, rule, caps), true);
  assert.equal(closesNow(item(3), front, false, 0, rule, caps), false);
  // seconds 0: no time rule; an empty item never closes.
  assert.equal(closesNow(item(2), front, true, 1e9, { pages: 4, seconds: 0 }, caps), false);
  assert.equal(closesNow(item(0), front, true, 1e9, rule, caps), false);
  assert.deepEqual(ITEM_RULE, { pages: 20, seconds: 3 });
});

const req = (o: Partial<ScanRequest> = {}): ScanRequest => ({
  duplex: true,
  resolution: 100,
  color: 'color',
  jpegQuality: 80,
  ...o,
});
async function run(items: AsyncIterable<AssembledItem>): Promise<{ items: AssembledItem[]; error?: unknown }> {
  const out: AssembledItem[] = [];
  try {
    for await (const it of items) out.push(it);
    return { items: out };
  } catch (error) {
    return { items: out, error };
  }
}

test('a batch: blank backs skipped, the scanner JPEG passed through, one item for the batch', async (t) => {
  const dir = tempDir(t);
  const s = new SimScanner('sim:');
  s.load([
    { front: 'text', back: 'blank' },
    { front: 'text', back: 'text' },
    { front: 'text', back: { blank: { showThrough: true } } },
  ]);
  const seen: PageOutcome[] = [];
  const r = await run(
    assembleItems(s.scan(req(), new AbortController().signal), {
      dir,
      request: req(),
      blankPageSkip: true,
      firstItem: 4,
      onPage: (e) => seen.push(e),
      now: () => 1234,
    }),
  );
  assert.equal(r.error, undefined);
  assert.equal(r.items.length, 1);
  const it = r.items[0]!;
  assert.deepEqual(
    [it.item, it.pages, it.scannedAt, it.sides],
    [
      4,
      4,
      1234,
      [
        { sheet: 1, front: true },
        { sheet: 2, front: true },
        { sheet: 2, front: false },
        { sheet: 3, front: true },
      ],
    ],
  );
  const file = readFileSync(it.path);
  assert.deepEqual([it.path, it.size, it.md5], [join(dir, 'item-4.pdf'), file.length, md5(file)]);
  assert.deepEqual(
    seen.map((e) => [e.sheet, e.front, e.kept, e.passedThrough ?? null]),
    [
      [1, true, true, true],
      [1, false, false, null],
      [2, true, true, true],
      [2, false, true, true],
      [3, true, true, true],
      [3, false, false, null],
    ],
  );
  assert.ok(seen.every((e) => typeof e.coverage === 'number'));
  // A batch of blank paper makes no item.
  s.load([{ front: 'blank', back: 'blank' }]);
  const none = await run(
    assembleItems(s.scan(req(), new AbortController().signal), { dir, request: req(), blankPageSkip: true }),
  );
  assert.deepEqual([none.items.length, none.error, readdirSync(dir).length], [0, undefined, 1]);
  // Without blank-page skip every side is kept.
  s.load(2);
  const all = await run(
    assembleItems(s.scan(req(), new AbortController().signal), { dir, request: req(), blankPageSkip: false }),
  );
  assert.deepEqual(
    all.items.map((i) => i.pages),
    [4],
  );
});

test('a batch larger than the caps is cut at sheet boundaries', async (t) => {
  const dir = tempDir(t);
  const s = new SimScanner('sim:');
  s.load(5);
  const r = await run(
    assembleItems(s.scan(req({ duplex: true }), new AbortController().signal), {
      dir,
      request: req(),
      blankPageSkip: false,
      limits: { maxPages: 4, maxBytes: 1e9 },
      now: () => 0,
    }),
  );
  assert.deepEqual(
    r.items.map((i) => [i.item, i.pages, i.sides.map((x) => x.sheet)]),
    [
      [1, 4, [1, 1, 2, 2]],
      [2, 4, [3, 3, 4, 4]],
      [3, 2, [5, 5]],
    ],
  );
  assert.deepEqual(readdirSync(dir).sort(), ['item-1.pdf', 'item-2.pdf', 'item-3.pdf']);
});

test('a jam keeps the pages before it as an item, then throws; a stop or an early exit leaves no file', async (t) => {
  const dir = tempDir(t);
  const s = new SimScanner('sim:');
  s.load(4);
  s.jamAfter(2);
  const jam = await run(
    assembleItems(s.scan(req(), new AbortController().signal), {
      dir,
      request: req(),
      blankPageSkip: false,
      now: () => 0,
    }),
  );
  assert.ok(jam.error instanceof ScanFault && jam.error.kind === 'jammed');
  assert.deepEqual(
    jam.items.map((i) => i.pages),
    [4],
  );
  assert.deepEqual(readdirSync(dir), ['item-1.pdf']);
  rmSync(join(dir, 'item-1.pdf'));

  s.setFault(null);
  const ac = new AbortController();
  let n = 0;
  const stopped = await run(
    assembleItems(s.scan(req(), ac.signal), {
      dir,
      request: req(),
      blankPageSkip: false,
      signal: ac.signal,
      onPage: () => {
        if (++n === 3) ac.abort(new Error('stop'));
      },
    }),
  );
  assert.equal((stopped.error as Error).message, 'stop');
  assert.deepEqual([stopped.items.length, readdirSync(dir)], [0, []]);

  s.load(3);
  const it = assembleItems(s.scan(req(), new AbortController().signal), {
    dir,
    request: req(),
    blankPageSkip: false,
    limits: { maxPages: 2, maxBytes: 1e9 },
  });
  for await (const item of it) {
    assert.equal(item.pages, 2);
    break;
  }
  // The first item is the caller's; the one that was being written is gone.
  assert.deepEqual(readdirSync(dir), ['item-1.pdf']);
});

test('a long stack is cut into items as it scans: each yielded before the scanner delivers the next page', async (t) => {
  const dir = tempDir(t);
  const s = new SimScanner('sim:');
  s.load(5);
  let delivered = 0;
  async function* counted(pages: AsyncIterable<ScannedPage>) {
    for await (const p of pages) {
      delivered++;
      yield p;
    }
  }
  const at: number[] = [];
  for await (const item of assembleItems(counted(s.scan(req(), new AbortController().signal)), {
    dir,
    request: req(),
    blankPageSkip: false,
    itemRule: { pages: 4, seconds: 0 },
    now: () => 0,
  })) {
    at.push(delivered);
    assert.deepEqual(
      item.sides.map((x) => x.sheet),
      item.item === 3 ? [5, 5] : [item.item * 2 - 1, item.item * 2 - 1, item.item * 2, item.item * 2],
    );
  }
  // Items 1 and 2 went out after pages 4 and 8, before the 5th and 9th were asked for.
  assert.deepEqual(at, [4, 8, 10]);
});

test("the time rule cuts at the end of a sheet once the item's first page is item_seconds old (injected clock)", async (t) => {
  const dir = tempDir(t);
  const s = new SimScanner('sim:');
  s.load(5);
  let clock = 0;
  // One page a second, as the demo's scanner (ppm=60) delivers them.
  async function* paced(pages: AsyncIterable<ScannedPage>) {
    for await (const p of pages) {
      clock += 1000;
      yield p;
    }
  }
  const r = await run(
    assembleItems(paced(s.scan(req(), new AbortController().signal)), {
      dir,
      request: req(),
      blankPageSkip: false,
      itemRule: { pages: 20, seconds: 3 },
      now: () => clock,
    }),
  );
  assert.deepEqual(
    r.items.map((i) => [i.pages, i.scannedAt]),
    [
      [4, 4000],
      [4, 8000],
      [2, 10000],
    ],
  );
  // Blank backs skipped end their sheets too: the item closes after the skipped back.
  s.load([
    { front: 'text', back: 'blank' },
    { front: 'text', back: 'blank' },
    { front: 'text', back: 'blank' },
  ]);
  clock = 0;
  const sk = await run(
    assembleItems(paced(s.scan(req(), new AbortController().signal)), {
      dir,
      request: req(),
      blankPageSkip: true,
      itemRule: { pages: 20, seconds: 3 },
      now: () => clock,
      firstItem: 4,
    }),
  );
  assert.deepEqual(
    sk.items.map((i) => i.sides.map((x) => x.sheet)),
    [[1, 2], [3]],
  );
});
