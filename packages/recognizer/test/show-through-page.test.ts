// The front's QR code showing through the back of a duplex sheet, on a rendered scan: measured
// and taken out, so that erasures and light fills over it read as they would in the clear
// (show-through.ts; docs/cards.md, "How recognition works").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLayoutSet, planTemplate, recognizeGrey, type PageDiagnostics } from '../src/index.ts';
import { decodeGrey } from '../src/grey-image.ts';
import { renderScan } from '../src/synthetic/render-scan.ts';
import { overQr, qrBehind } from '../src/show-through.ts';
import { encodeQr } from '../src/codes.ts';
import type { Mark } from '../src/synthetic/marks.ts';

// The back's first rows lie behind the front's QR code (top right of the front, top left of the back).
const CARD = {
  id: 'show-through',
  title: 'Show-through',
  qrcode: 'https://example.org/card/show-through?v=1',
  student_number: { type: 'barcode' as const },
  duplex: true,
  chapters: [{ areas: 15 }, { areas: 60, new_side: true }],
};

test("the back of a sheet behind the front's QR code: the show-through is measured and taken out, residue reads empty and light fills filled", async () => {
  const { layout, cards } = await planTemplate(CARD);
  const set = createLayoutSet([layout]);
  const back = layout.sides[1]!,
    q = qrBehind(layout, back, await encodeQr(layout.qrcode))!;
  const over = back.areas.map((a, i) => (overQr(q, a) ? i : -1)).filter((i) => i >= 0);
  assert.ok(over.length >= 12, `areas over the code: ${over.length}`);
  // Over the code: erasure residue (0.07 of black) on every third area, light pencil (0.25) on every fourth, the rest empty.
  const kind = (k: number) => (k % 3 === 0 ? 'erasure' : k % 4 === 1 ? 'light' : 'none');
  const marks: Mark[] = over.flatMap((i, k) => {
    const a = back.areas[i]!;
    return kind(k) === 'none'
      ? []
      : [
          {
            kind: kind(k) === 'erasure' ? 'erasure' : 'light-pencil',
            x: a.x,
            y: a.y,
            w: a.w,
            h: a.h,
            seed: 100 + k,
            level: kind(k) === 'erasure' ? 0.07 : 0.25,
          } as Mark,
        ];
  });
  const jpeg = await renderScan(cards[0]!.sides[1]!.ops, marks, {
    dpi: 200,
    seed: 5,
    noise: 4,
    jpegQuality: 80,
    paper: 0.86,
    rotationDeg: 0.8,
    showThrough: { ops: cards[0]!.sides[0]!.ops, marks: [], strength: 0.12 },
  });
  const d: PageDiagnostics = {};
  const r = await recognizeGrey(await decodeGrey(jpeg), set, d);
  assert.equal(r.status, 'ok');
  if (r.status !== 'ok') return;
  assert.ok(d.showThrough, 'show-through measured');
  assert.ok(d.showThrough.taken > 0.08 && d.showThrough.taken < 0.16, `light taken ${d.showThrough.taken}`);
  over.forEach((i, k) => {
    const want = kind(k) === 'light' ? 'filled' : 'empty';
    assert.equal(r.areas[i]!.state, want, `area ${i} (${kind(k)}): ${JSON.stringify(d.areas![i])}`);
  });
  // Their greys are measured less precisely than in the clear: the gap between residue and faint fills is not looked for among them.
  const greys = new Set(r.evidence!.greys);
  for (const i of over) assert.ok(!greys.has(d.areas![i]!.solid), `area ${i} not among the page's greys`);
});
