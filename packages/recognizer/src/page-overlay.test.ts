// The overlay of what was read (page-overlay.ts): drawn through the corners the recognizer
// located, each area lands on the area as scanned, also on a page turned upside down, and the
// annotated image is the page with the outlines in their colours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { planTemplate } from './template-pdf.ts';
import { createLayoutSet } from './layout-store.ts';
import { recognizePage } from './page-recognizer.ts';
import { annotatePage, cornerHomography, OVERLAY_COLOURS, pageOverlay } from './page-overlay.ts';
import { apply } from './homography.ts';
import { fillCard } from './synthetic/filled-card.ts';
import { renderScan } from './synthetic/render-scan.ts';
import { mulberry32 } from './synthetic/random.ts';
import type { CardDefinition } from './card-definition.ts';

const card: CardDefinition = {
  id: 'overlay',
  qrcode: 'https://example.org/overlay',
  student_number: { type: 'bubbles', digits: 4 },
  chapters: [{ areas: 12 }, { areas: 8 }],
};

async function page(rotationDeg: number) {
  const { layout, cards } = await planTemplate(card);
  const filled = fillCard(layout, cards[0]!, mulberry32(5), {
    fillRate: 0.4,
    filled: ['pen'],
    emptyMarks: [],
    emptyMarkRate: 0,
    doubleDigitRate: 0,
    studentNumberKinds: ['pen'],
  });
  const side = filled.sides[0]!;
  const jpeg = await renderScan(side.ops, side.marks, { dpi: 150, rotationDeg, noise: 2, jpegQuality: 85, seed: 3 });
  const reading = await recognizePage(jpeg, createLayoutSet([layout]));
  assert.equal(reading.status, 'ok', JSON.stringify(reading));
  return {
    layout,
    side: layout.sides[0]!,
    jpeg,
    reading: reading as Extract<typeof reading, { status: 'ok' }>,
    truth: side.truth,
  };
}

for (const rotationDeg of [0.8, 180.4]) {
  test(`areas are outlined where they were scanned, with the reading's states (turned ${rotationDeg}°)`, async () => {
    const { side, jpeg, reading } = await page(rotationDeg);
    assert.equal(reading.corners?.length, 8, 'the reading keeps where the corner marks were found');
    assert.equal(reading.upside_down, rotationDeg > 90);
    const h = cornerHomography(reading.corners)!;
    const states = new Map(reading.areas.map((a) => [`${a.chapter}:${a.index}`, a]));
    const o = pageOverlay(side, h, states);
    assert.equal(o.areas.length, side.areas.length);
    const { data, info } = await sharp(jpeg).greyscale().raw().toBuffer({ resolveWithObject: true });
    for (const a of o.areas) {
      const read = states.get(`${a.chapter}:${a.index}`)!;
      assert.equal(a.state, read.state);
      // The printed outline of the area (mid-grey on paper) is on the drawn ellipse's edge:
      // the darkest pixel along its long axis, within a millimetre of where the overlay puts it.
      const t = (a.angle * Math.PI) / 180;
      let darkest = 255,
        at = 0;
      for (let d = -a.rx - 6; d <= -a.rx + 6; d++) {
        const x = Math.round(a.cx + d * Math.cos(t)),
          y = Math.round(a.cy + d * Math.sin(t));
        const v = data[y * info.width + x]!;
        if (v < darkest) {
          darkest = v;
          at = d;
        }
      }
      assert.ok(
        darkest < 200 && Math.abs(at + a.rx) <= 6,
        `area ${a.chapter}.${a.index}: outline ${darkest} at ${at} (rx ${a.rx})`,
      );
    }
    assert.equal(o.student?.kind, 'bubbles');
    assert.ok(o.qrcode);
  });
}

test("the annotated image: the page, same size, with each state's colour on its outlines", async () => {
  const { side, jpeg, reading } = await page(0.5);
  const h = cornerHomography(reading.corners)!;
  const states = new Map(reading.areas.map((a) => [`${a.chapter}:${a.index}`, { state: a.state, score: a.score }]));
  // One area declared uncertain (as a correction screen would show it).
  const first = side.areas[0]!;
  states.set(`${first.chapter}:${first.index}`, { state: 'uncertain', score: 0.42 });
  const o = pageOverlay(side, h, states);
  const out = await annotatePage(jpeg, o, 'note <&>');
  const meta = await sharp(out).metadata();
  const src = await sharp(jpeg).metadata();
  assert.equal(meta.format, 'jpeg');
  assert.deepEqual([meta.width, meta.height], [src.width, src.height]);
  const { data, info } = await sharp(out).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const rgb = (x: number, y: number) => {
    const i = (Math.round(y) * info.width + Math.round(x)) * info.channels;
    return [data[i]!, data[i + 1]!, data[i + 2]!];
  };
  const near = (c: number[], hex: string) => {
    const want = [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
    return c.every((v, k) => Math.abs(v - want[k]!) < 60);
  };
  const unsure = o.areas[0]!;
  // Just outside the area's ellipse, on the overlay's outline (drawn 3 px out, 4 px wide).
  const onRing = (a: typeof unsure) =>
    rgb(
      a.cx + (a.rx + 3) * Math.cos((a.angle * Math.PI) / 180),
      a.cy + (a.rx + 3) * Math.sin((a.angle * Math.PI) / 180),
    );
  assert.ok(near(onRing(unsure), OVERLAY_COLOURS.uncertain), `uncertain outline ${onRing(unsure)}`);
  const filled = o.areas.find((a) => a.state === 'filled')!;
  assert.ok(near(onRing(filled), OVERLAY_COLOURS.filled), `filled outline ${onRing(filled)}`);
  const p = apply(h, 105, 150); // the middle of the page, where nothing is drawn: unchanged paper
  assert.ok(rgb(p.x, p.y).every((v) => v > 200));
  // Without a location the page is shown with its note only.
  const plain = await annotatePage(jpeg, null, 'found 2 of 4 corner marks');
  assert.equal((await sharp(plain).metadata()).format, 'jpeg');
});
