// Single-page outcomes that the corpus shows only indirectly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { createLayoutSet, loadLayoutDirs, recognizePage } from '../src/index.ts';

const hard = new URL('./corpus/hard-rotated-upside-down/', import.meta.url).pathname;

test('an upside-down page is recognised as such and read', async () => {
  const layouts = await loadLayoutDirs([`${hard}layout`]);
  const r = await recognizePage(readFileSync(`${hard}01.jpg`), layouts);
  assert.equal(r.status, 'ok');
  assert.ok(r.status === 'ok' && r.upside_down && r.sheet === 1 && r.side === 'front' && typeof r.qrcode === 'string');
  const r2 = await recognizePage(readFileSync(`${hard}02.jpg`), layouts);
  assert.ok(r2.status === 'ok' && !r2.upside_down && r2.side === 'back');
});

test('a card of a layout that is not loaded: 1003, naming the layout id', async () => {
  const r = await recognizePage(readFileSync(`${hard}02.jpg`), createLayoutSet([]));
  assert.equal(r.status, 'unreadable');
  assert.ok(r.status === 'unreadable' && r.error_code === 1003 && /layout [0-9a-f]{8}/.test(r.detail));
});

test('blank sides are blank; garbage and non-cards are 1004', async () => {
  const layouts = createLayoutSet([]);
  const blank = await sharp({
    create: { width: 1654, height: 2339, channels: 3, background: { r: 245, g: 245, b: 240 } },
  })
    .jpeg()
    .toBuffer();
  assert.equal((await recognizePage(blank, layouts)).status, 'blank');
  const garbage = await recognizePage(new Uint8Array([1, 2, 3, 4]), layouts);
  assert.ok(garbage.status === 'unreadable' && garbage.error_code === 1004);
  // A printed page without corner marks (stripes of "text").
  const text = await sharp({
    create: { width: 827, height: 1169, channels: 3, background: { r: 255, g: 255, b: 255 } },
  })
    .composite(
      Array.from({ length: 40 }, (_, i) => ({
        input: { create: { width: 600, height: 6, channels: 3 as const, background: { r: 0, g: 0, b: 0 } } },
        left: 110,
        top: 120 + i * 24,
      })),
    )
    .jpeg()
    .toBuffer();
  const t = await recognizePage(text, layouts);
  assert.ok(t.status === 'unreadable' && t.error_code === 1004, JSON.stringify(t));
});

test('a blank back on grey paper with the dark backing around it is blank; a page of backing only is not', async () => {
  const layouts = createLayoutSet([]);
  // 150 dpi: the sheet (grey 190) offset and slightly rotated on a dark backing (35), with a
  // faint mirrored front showing through.
  const W = 1276,
    H = 1786;
  const sheet = await sharp({
    create: { width: 1220, height: 1740, channels: 3, background: { r: 190, g: 190, b: 190 } },
  })
    .composite([
      {
        input: { create: { width: 300, height: 200, channels: 3, background: { r: 172, g: 172, b: 172 } } },
        left: 700,
        top: 200,
      },
    ])
    .rotate(1.5, { background: { r: 35, g: 35, b: 35 } })
    .toColourspace('b-w')
    .png()
    .toBuffer();
  const meta = await sharp(sheet).metadata();
  const page = await sharp({ create: { width: W, height: H, channels: 3, background: { r: 35, g: 35, b: 35 } } })
    .composite([{ input: sheet, left: Math.max(0, W - meta.width! - 20), top: 12 }])
    .toColourspace('b-w')
    .jpeg({ quality: 60 })
    .toBuffer();
  assert.equal((await recognizePage(page, layouts)).status, 'blank');
  const dark = await sharp({ create: { width: W, height: H, channels: 3, background: { r: 30, g: 30, b: 30 } } })
    .jpeg()
    .toBuffer();
  const r = await recognizePage(dark, layouts);
  assert.ok(r.status === 'unreadable' && r.error_code === 1004, JSON.stringify(r));
});
