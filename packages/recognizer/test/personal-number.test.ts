// A personalised card with student-number bubbles: the student strip printed on the side says
// whose card it is, so bubbles marked (or read) as another number are not reported as that
// number (docs/cards.md, error 1001).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createLayoutSet, planTemplate, recognizePage } from '../src/index.ts';
import { fillCard, type MarkMix } from '../src/synthetic/filled-card.ts';
import { renderScan } from '../src/synthetic/render-scan.ts';
import { mulberry32 } from '../src/synthetic/random.ts';
import { studentKey, studentKeyHex } from '../src/id-strip.ts';

const example = JSON.parse(readFileSync(new URL('../../../docs/examples/card.json', import.meta.url), 'utf8'));
const PEN: MarkMix = {
  fillRate: 0.3,
  filled: ['pen'],
  emptyMarks: [],
  emptyMarkRate: 0,
  doubleDigitRate: 0,
  studentNumberKinds: ['pen'],
};

test("a personalised card's bubbles read as its own number; marked as another student's, the number is refused (null, with why)", async () => {
  const { layout, cards } = await planTemplate(example, { students: [{ student_id: '20240017', name: 'Ada' }] });
  const set = createLayoutSet([layout]);
  const i = layout.sides.findIndex((s) => s.student_cells.length > 0);
  assert.ok(i >= 0, 'the example card has student-number bubbles');
  const read = async (marked: string) => {
    const card = fillCard(layout, cards[0]!, mulberry32(7), PEN, { studentId: marked });
    const jpeg = await renderScan(cards[0]!.sides[i]!.ops, card.sides[i]!.marks, {
      dpi: 200,
      noise: 2,
      jpegQuality: 85,
      seed: 3,
    });
    const r = await recognizePage(jpeg, set);
    assert.equal(r.status, 'ok');
    return r as Extract<typeof r, { status: 'ok' }>;
  };
  const own = await read('20240017');
  assert.equal(own.student_key, studentKeyHex(studentKey('20240017')));
  assert.equal(own.student_id, '20240017');
  const other = await read('20240018');
  assert.equal(other.student_id, null);
  assert.match(
    other.student_detail ?? '',
    /marked or read as 20240018, which is not the number this card was printed for/,
  );
});
