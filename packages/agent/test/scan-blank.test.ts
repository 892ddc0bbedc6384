// Blank-page detection: every defect a blank page has (grey paper, noise, show-through, the
// scanner's backing, a streak, dust) alone and together is blank; the least content (a pencil
// tick, a word) is not; at the resolutions boxes scan at, from JPEG, raw and PNG pages.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { BLANK_RULE, detectBlank, greyThumbnail, inkCoverage } from '../src/media/blank.ts';
import { SimScanner } from '../src/drivers/sim/scanner.ts';
import { asJpeg, asRaw, backing, paper, showThrough, streak, stroke, word, type Sheet } from './support/paper.ts';

type Make = (dpi: number) => Sheet;
const blankPages: [string, Make][] = [
  ['white paper', (dpi) => paper(dpi)],
  ['grey noisy paper', (dpi) => paper(dpi, 200, 8)],
  [
    'show-through at 18%',
    (dpi) => {
      const p = paper(dpi);
      showThrough(p, 0.18);
      return p;
    },
  ],
  [
    'dark backing at the edges',
    (dpi) => {
      const p = paper(dpi);
      backing(p, 4, 6);
      return p;
    },
  ],
  [
    'a streak from dirty glass',
    (dpi) => {
      const p = paper(dpi);
      streak(p, 100, Math.max(1, Math.round(dpi / 100)), 110);
      return p;
    },
  ],
  [
    'dust',
    (dpi) => {
      const p = paper(dpi);
      for (let i = 0; i < 40; i++) stroke(p, 20 + i * 4, 30 + i * 5, 20 + i * 4, 30 + i * 5, 0.25, 60);
      return p;
    },
  ],
  [
    'all of them on grey paper',
    (dpi) => {
      const p = paper(dpi, 215, 6);
      showThrough(p, 0.15, 215);
      backing(p, 3, 5);
      streak(p, 60, 1, 120);
      return p;
    },
  ],
];
const inkPages: [string, Make][] = [
  [
    'one pencil tick (15 mm)',
    (dpi) => {
      const p = paper(dpi);
      stroke(p, 100, 150, 103, 154, 0.5, 140);
      stroke(p, 103, 154, 110, 142, 0.5, 140);
      return p;
    },
  ],
  [
    'one pen word',
    (dpi) => {
      const p = paper(dpi);
      word(p, 80, 150, 15);
      return p;
    },
  ],
  [
    'one pencil word',
    (dpi) => {
      const p = paper(dpi);
      word(p, 80, 150, 12, 140);
      return p;
    },
  ],
  [
    'a word on a page with every defect',
    (dpi) => {
      const p = paper(dpi, 215, 6);
      showThrough(p, 0.15, 215);
      backing(p, 3, 5);
      streak(p, 60, 1, 120);
      word(p, 80, 150, 12, 60);
      return p;
    },
  ],
  [
    'a word near the backing',
    (dpi) => {
      const p = paper(dpi);
      backing(p, 4, 6);
      word(p, 12, 20, 12);
      return p;
    },
  ],
];

describe('blank pages are blank, pages with the least ink are not', () => {
  for (const dpi of [100, 200, 300]) {
    test(`${dpi} dpi`, async () => {
      // 300 dpi: the hardest case of each kind (drawing A4 pages pixel by pixel costs CPU).
      const some = <T>(xs: T[]) => (dpi === 300 ? [xs.at(-1)!] : xs);
      for (const [name, make] of some(blankPages)) {
        const v = await detectBlank(await asJpeg(make(dpi), 80));
        assert.ok(v.blank, `${name} at ${dpi} dpi: coverage ${v.coverage}`);
      }
      for (const [name, make] of some(inkPages.slice(0, 1)).concat(some(inkPages))) {
        const v = await detectBlank(await asJpeg(make(dpi), 80));
        assert.ok(!v.blank && v.coverage >= BLANK_RULE.maxCoverage, `${name} at ${dpi} dpi: coverage ${v.coverage}`);
      }
    });
  }
});

test('not by JPEG size: a noisy blank page makes a bigger JPEG than a page with a word, and is still blank', async () => {
  const noisy = await asJpeg(paper(200, 235, 10), 90);
  const withWord = await asJpeg(
    (() => {
      const p = paper(200, 246, 2);
      word(p, 80, 150, 20);
      return p;
    })(),
    90,
  );
  assert.ok(
    noisy.image.data.length > withWord.image.data.length,
    `${noisy.image.data.length} vs ${withWord.image.data.length}`,
  );
  assert.equal((await detectBlank(noisy)).blank, true);
  assert.equal((await detectBlank(withWord)).blank, false);
});

test('raw and PNG pages are judged like JPEG pages; a 600 dpi page is judged at about 50 dpi', async () => {
  const p = paper(150);
  word(p, 80, 150, 15);
  const raw = asRaw(p);
  const png = {
    ...raw,
    image: {
      format: 'png' as const,
      data: await sharp(p.data, { raw: { width: p.width, height: p.height, channels: 1 } })
        .png()
        .toBuffer(),
    },
  };
  const a = await detectBlank(raw),
    b = await detectBlank(png);
  assert.equal(a.blank, false);
  assert.equal(b.blank, false);
  assert.ok(Math.abs(a.coverage - b.coverage) < 1e-9);
  const a4at600 = { width: 4961, height: 7016 };
  const jpeg600 = await sharp({ create: { ...a4at600, channels: 3, background: '#f4f4f4' } })
    .jpeg({ quality: 75 })
    .toBuffer();
  const big = await greyThumbnail({
    sheet: 1,
    front: true,
    dpi: 600,
    ...a4at600,
    image: { format: 'jpeg', data: jpeg600 },
  });
  assert.ok(big.width >= 400 && big.width <= 420 && Math.abs(big.dpi - 50) < 1, `${big.width} px at ${big.dpi} dpi`);
});

test('sim pages: text is ink; blank backs with show-through, backing, grey paper and uneven light are blank', async () => {
  const s = new SimScanner('sim:');
  for (const color of ['color', 'grayscale'] as const) {
    s.load([
      { front: 'text', back: { blank: { showThrough: true } } },
      {
        front: { text: { paper: 210, unevenLight: 0.3 } },
        back: { blank: { paper: 210, backing: true, unevenLight: 0.3, noise: 8 } },
      },
    ]);
    const verdicts: boolean[] = [];
    for await (const page of s.scan(
      { duplex: true, resolution: 150, color, jpegQuality: 85 },
      new AbortController().signal,
    ))
      verdicts.push((await detectBlank(page)).blank);
    assert.deepEqual(verdicts, [false, true, false, true], color);
  }
});

test('inkCoverage: a page that is mostly dark is content, not backing; bad sizes are refused', () => {
  const p = paper(50);
  p.data.fill(20);
  assert.ok(inkCoverage(p).coverage > 0.9);
  assert.throws(() => inkCoverage({ data: new Uint8Array(4), width: 2, height: 2, dpi: 50 }), RangeError);
});
