import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PDFDocument } from 'pdf-lib';
import { generateTemplate } from './template-pdf.ts';
import { LayoutError } from './layout.ts';

const example = JSON.parse(readFileSync(new URL('../../../docs/examples/card.json', import.meta.url), 'utf8'));

test('template: A4 PDF and a layout that numbers every area and keeps marks off the edges', async () => {
  const { pdf, layout } = await generateTemplate(example);
  const doc = await PDFDocument.load(pdf);
  assert.equal(doc.getPageCount(), 2);
  const { width, height } = doc.getPage(0).getSize();
  assert.ok(Math.abs(width - 595.28) < 0.1 && Math.abs(height - 841.89) < 0.1);
  assert.match(layout.layout_id, /^[0-9a-f]{8}$/);
  assert.deepEqual(
    layout.sides.map((s) => [s.sheet, s.side]),
    [
      [1, 'front'],
      [1, 'back'],
    ],
  );
  for (const [i, ch] of example.chapters.entries()) {
    const idx = layout.sides
      .flatMap((s) => s.areas)
      .filter((a) => a.chapter === i + 1)
      .map((a) => a.index);
    assert.deepEqual(
      idx,
      Array.from({ length: ch.areas }, (_, k) => k + 1),
    );
  }
  for (const s of layout.sides) {
    for (const f of s.fiducials)
      assert.ok(Math.min(f.x, f.y, 210 - f.x, 297 - f.y) - f.size / 2 >= 8, 'fiducials at least 8 mm from the edge');
    assert.equal(s.fiducials.filter((f) => f.size > 6).length, 1, 'one distinct fiducial');
    for (const a of s.areas) assert.ok(a.x > 10 && a.x < 200 && a.y > 30 && a.y < 265);
  }
  assert.equal(layout.sides[0]!.student_cells.length, 80);
  assert.ok(layout.sides[0]!.qrcode && !layout.sides[1]!.qrcode);
});

test('template: one card per student, and bad student numbers are refused', async () => {
  const { pdf } = await generateTemplate(example, {
    students: [{ student_id: '20240001' }, { student_id: '20240002', name: 'Ada' }],
  });
  assert.equal((await PDFDocument.load(pdf)).getPageCount(), 4);
  await assert.rejects(generateTemplate(example, { students: [{ student_id: '123' }] }), LayoutError);
});

test('equal definitions share a layout id; a changed chapter changes it', async () => {
  const a = (await generateTemplate(example)).layout.layout_id;
  const b = (await generateTemplate(structuredClone(example))).layout.layout_id;
  const changed = structuredClone(example);
  changed.chapters[0].areas += 1;
  assert.equal(a, b);
  assert.notEqual(a, (await generateTemplate(changed)).layout.layout_id);
});
