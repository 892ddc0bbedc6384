// Pages to JPEG: the scanner's own JPEG passes through byte for byte when its quality and colour
// allow, everything else is encoded once at the task's quality. The quality of a JPEG is read
// from its quantisation tables, checked against libjpeg (sharp) and the real scanimage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { pageToJpeg } from '../src/media/jpeg.ts';
import { estimateQuality, jpegInfo } from '../src/media/jpeg-info.ts';
import type { ScannedPage } from '../src/drivers/types.ts';
import { runScanimage } from '../src/drivers/sane/run-scanimage.ts';
import { saneTestConfig } from './sane.ts';

const W = 320,
  H = 240;
const noise = (_channels: 1 | 3) =>
  sharp({
    create: { width: W, height: H, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 180, sigma: 30 } },
  });
async function jpegPage(quality: number, channels: 1 | 3, declared?: number): Promise<ScannedPage> {
  const data = await noise(channels)
    .toColourspace(channels === 1 ? 'b-w' : 'srgb')
    .jpeg({ quality })
    .toBuffer();
  return {
    sheet: 1,
    front: true,
    dpi: 100,
    width: W,
    height: H,
    image: declared === undefined ? { format: 'jpeg', data } : { format: 'jpeg', data, quality: declared },
  };
}

test('jpegInfo reads the frame and the IJG quality of libjpeg tables, exactly, at every quality', async () => {
  const raw = await noise(3).raw().toBuffer();
  for (let q = 1; q <= 100; q += 3) {
    const j = await sharp(raw, { raw: { width: W, height: H, channels: 3 } })
      .jpeg({ quality: q, progressive: q % 2 === 0 })
      .toBuffer();
    const info = jpegInfo(j)!;
    assert.deepEqual(
      info,
      { precision: 8, width: W, height: H, components: 3, progressive: q % 2 === 0, quality: q },
      `q${q}`,
    );
  }
  assert.equal(estimateQuality(new Array(64).fill(1)), 100);
});

test('the JPEG of the real scanimage (fixed at quality 75) reads as quality 75', async () => {
  const sane = saneTestConfig();
  try {
    const r = await runScanimage(
      ['-d', 'test', '--format=jpeg', '--resolution', '50', '--mode', 'Gray', '-o', join(sane.dir, 'p.jpg')],
      { env: sane.env },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(jpegInfo(readFileSync(join(sane.dir, 'p.jpg'))), {
      precision: 8,
      width: 413,
      height: 584,
      components: 1,
      progressive: false,
      quality: 75,
    });
  } finally {
    sane.close();
  }
});

test('a broken JPEG header gives undefined, never a throw (every truncation, random bytes)', async () => {
  const j = (await jpegPage(80, 3)).image.data;
  for (let n = 0; n < 700; n++) {
    const info = jpegInfo(j.subarray(0, n));
    if (info) assert.equal(info.width, W);
  }
  let s = 7;
  for (let i = 0; i < 500; i++) {
    const b = Buffer.from(j.subarray(0, 700));
    for (let k = 0; k < 8; k++) {
      s = (s * 1103515245 + 12345) >>> 0;
      b[2 + (s % 698)] = s >>> 24;
    }
    jpegInfo(b);
  }
  assert.equal(jpegInfo(Buffer.from('not a jpeg')), undefined);
});

test('pass-through: the same bytes when quality and colour allow', async () => {
  const same = await jpegPage(90, 3);
  const r = await pageToJpeg(same, 90, 'color');
  assert.equal(r.passedThrough, true);
  assert.equal(r.data, same.image.data);
  assert.deepEqual([r.width, r.height, r.components], [W, H, 3]);
  // Lower than asked: re-encoding higher would only grow it.
  assert.equal((await pageToJpeg(await jpegPage(60, 3), 90, 'color')).passedThrough, true);
  // A greyscale JPEG in a colour task: there is no colour to add.
  assert.equal((await pageToJpeg(await jpegPage(80, 1), 85, 'color')).passedThrough, true);
  // The driver's declared quality wins over the tables (a device with its own tables).
  assert.equal((await pageToJpeg(await jpegPage(95, 3, 85), 85, 'color')).passedThrough, true);
});

test('re-encoded: a JPEG above the asked quality, colour in a greyscale task, raw and PNG pages', async () => {
  const high = await pageToJpeg(await jpegPage(97, 3), 80, 'color');
  assert.deepEqual([high.passedThrough, jpegInfo(high.data)?.quality, high.components], [false, 80, 3]);
  const grey = await pageToJpeg(await jpegPage(70, 3), 80, 'grayscale');
  assert.deepEqual([grey.passedThrough, jpegInfo(grey.data)?.components, grey.components], [false, 1, 1]);
  const rgb = Buffer.alloc(W * H * 3, 200);
  const raw = await pageToJpeg(
    { sheet: 1, front: true, dpi: 100, width: W, height: H, image: { format: 'raw', data: rgb, channels: 3 } },
    66,
    'color',
  );
  assert.deepEqual(
    [raw.passedThrough, jpegInfo(raw.data)],
    [false, { precision: 8, width: W, height: H, components: 3, progressive: false, quality: 66 }],
  );
  const g = Buffer.alloc(W * H, 120);
  const rawGrey = await pageToJpeg(
    { sheet: 1, front: true, dpi: 100, width: W, height: H, image: { format: 'raw', data: g, channels: 1 } },
    66,
    'color',
  );
  assert.equal(jpegInfo(rawGrey.data)?.components, 1);
  const png = await sharp({ create: { width: W, height: H, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .png()
    .toBuffer();
  const flat = await pageToJpeg(
    { sheet: 1, front: true, dpi: 100, width: W, height: H, image: { format: 'png', data: png } },
    90,
    'color',
  );
  const px = await sharp(flat.data).raw().toBuffer();
  assert.ok(px[0]! > 245, 'a transparent PNG lies on white paper');
  await assert.rejects(pageToJpeg(await jpegPage(80, 3), 0, 'color'), RangeError);
  await assert.rejects(
    pageToJpeg(
      {
        sheet: 1,
        front: true,
        dpi: 100,
        width: W,
        height: H,
        image: { format: 'raw', data: Buffer.alloc(10), channels: 3 },
      },
      80,
      'color',
    ),
    /raw page holds 10 bytes/,
  );
});
