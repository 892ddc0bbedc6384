// Scan-order grouping with made-up page readings (no images): when a student is emitted and
// which error code a broken stack gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StudentAssembler } from './student-assembler.ts';
import { createLayoutSet } from './layout-store.ts';
import type { Layout } from './layout.ts';
import type { PageReading } from './page-recognizer.ts';
import { studentKey, studentKeyHex } from './id-strip.ts';
import { duplexLayout, layoutSide } from './testing/duplex-layout.ts';

const layout = duplexLayout([3, 2]);
const side = layoutSide;
const layouts = createLayoutSet([layout]);

let n = 0;
const src = () => {
  n++;
  return { paper_number: Math.ceil(n / 2), page_number: n, front: n % 2 === 1, item_id: 1 };
};
const front = (id: string | null, qr: string | null = 'q'): PageReading => ({
  status: 'ok',
  layout_id: '0000abcd',
  sheet: 1,
  side: 'front',
  upside_down: false,
  qrcode: qr,
  student_id: id,
  areas: [
    { chapter: 1, index: 2, state: 'filled', score: 1 },
    { chapter: 1, index: 3, state: 'uncertain', score: 0.5 },
  ],
  ms: 1,
});
const back: PageReading = {
  status: 'ok',
  layout_id: '0000abcd',
  sheet: 1,
  side: 'back',
  upside_down: true,
  areas: [{ chapter: 2, index: 1, state: 'empty', score: 0 }],
  ms: 1,
};

test('a student is emitted when the next one starts, and the last one at the end', () => {
  n = 0;
  const a = new StudentAssembler(layouts);
  assert.deepEqual(a.push(src(), front('A')), []);
  assert.deepEqual(a.push(src(), back), []);
  const first = a.push(src(), front('B'));
  assert.equal(first.length, 1);
  assert.deepEqual(first[0], {
    error_code: 0,
    pages: [
      { paper_number: 1, page_number: 1, front: true, item_id: 1 },
      { paper_number: 1, page_number: 2, front: false, item_id: 1 },
    ],
    result: { student_id: 'A', qrcode: 'q', fills: [[2], []], uncertain: [[3], []] },
  });
  assert.deepEqual(a.push(src(), { status: 'blank', ms: 1 }), [], 'blank sides are skipped');
  const last = a.end();
  assert.equal(last.length, 1);
  assert.equal(last[0]!.error_code, 1003, 'B has no back: chapters cannot be located');
  assert.equal(last[0]!.pages.length, 1);
});

test('error codes: student number, QR, unreadable page, no page data', () => {
  n = 0;
  const a = new StudentAssembler(layouts);
  const out = [
    ...a.push(src(), front(null)),
    ...a.push(src(), back),
    ...a.push(src(), front('C', null)),
    ...a.push(src(), back),
    ...a.push(src(), front('D')),
    ...a.push(src(), { status: 'unreadable', error_code: 1004, detail: 'x', ms: 1 }),
    ...a.push(src(), front('E')),
    ...a.push(src(), back),
    ...a.end(),
  ];
  assert.deepEqual(
    out.map((r) => r.error_code),
    [1001, 1002, 1004, 0],
  );
  assert.ok(out.slice(0, 3).every((r) => r.result === null && r.pages.length === 2));
  const empty = new StudentAssembler(layouts).end();
  assert.deepEqual(
    empty.map((r) => [r.error_code, r.result, r.pages]),
    [[50003, null, []]],
  );
});

test('an unreadable first side takes the sides that follow it', () => {
  n = 0;
  const a = new StudentAssembler(layouts);
  const out = [
    ...a.push(src(), { status: 'unreadable', error_code: 1004, detail: 'x', ms: 1 }),
    ...a.push(src(), back),
    ...a.push(src(), front('F')),
    ...a.push(src(), back),
    ...a.end(),
  ];
  assert.deepEqual(
    out.map((r) => [r.error_code, r.pages.length]),
    [
      [1004, 2],
      [0, 2],
    ],
  );
});

// A personalised two-sheet card (single-sided): every side carries the student's key.
const twoSheets = {
  ...layout,
  layout_id: '0000beef',
  duplex: false,
  sheets: 2,
  sides: [
    side(1, 'front', {
      qrcode: { x: 0, y: 0, w: 1, h: 1, modules: 21, module: 1 },
      barcode: { x: 0, y: 0, w: 1, h: 1 },
    }),
    side(2, 'front', {}),
  ],
} as unknown as Layout;
const personal = createLayoutSet([twoSheets]);
/** The keys the strips of X's and Y's cards carry (id-strip.ts). */
const X_KEY = studentKeyHex(studentKey('X'));
const Y_KEY = studentKeyHex(studentKey('Y'));
const sheet = (n: 1 | 2, key: string | null | undefined, id = 'S1'): PageReading => ({
  status: 'ok',
  layout_id: '0000beef',
  sheet: n,
  side: 'front',
  upside_down: false,
  ...(n === 1 ? { qrcode: 'q', student_id: id } : {}),
  ...(key !== undefined ? { student_key: key } : {}),
  areas: [{ chapter: n, index: 1, state: 'filled', score: 1 }],
  ms: 1,
});

test('sheets of two students swapped: each student fails, nothing is merged', () => {
  n = 0;
  const a = new StudentAssembler(personal);
  // X's sheet 1, Y's sheet 2, Y's sheet 1, X's sheet 2.
  const out = [
    ...a.push(src(), sheet(1, X_KEY, 'X')),
    ...a.push(src(), sheet(2, Y_KEY)),
    ...a.push(src(), sheet(1, Y_KEY, 'Y')),
    ...a.push(src(), sheet(2, X_KEY)),
    ...a.end(),
  ];
  assert.deepEqual(
    out.map((r) => [r.error_code, r.pages.map((p) => p.page_number)]),
    [
      [1003, [1]],
      [1001, [2]],
      [1003, [3]],
      [1001, [4]],
    ],
  );
  assert.ok(out.every((r) => r.result === null));
});

test('the same student key on both sheets is one student; a blank or unreadable strip is not', () => {
  n = 0;
  const a = new StudentAssembler(personal);
  const ok = [...a.push(src(), sheet(1, X_KEY, 'X')), ...a.push(src(), sheet(2, X_KEY)), ...a.end()];
  assert.deepEqual(
    ok.map((r) => [r.error_code, r.result?.student_id, r.pages.length]),
    [[0, 'X', 2]],
  );
  n = 0;
  const b = new StudentAssembler(personal);
  // A sheet without a student strip (printed without a student list) after a personalised one.
  const blank = [...b.push(src(), sheet(1, X_KEY, 'X')), ...b.push(src(), sheet(2, undefined)), ...b.end()];
  assert.deepEqual(
    blank.map((r) => r.error_code),
    [1003, 1001],
  );
  n = 0;
  const c = new StudentAssembler(personal);
  const unreadable = [...c.push(src(), sheet(1, X_KEY, 'X')), ...c.push(src(), sheet(2, null)), ...c.end()];
  assert.equal(unreadable.length, 1);
  assert.equal(unreadable[0]!.error_code, 1001);
  assert.match(unreadable[0]!.detail ?? '', /sheet 2 front: the student strip is not readable/);
});

test('cards printed without a student list are grouped as before', () => {
  n = 0;
  const a = new StudentAssembler(personal);
  const out = [...a.push(src(), sheet(1, undefined, 'X')), ...a.push(src(), sheet(2, undefined)), ...a.end()];
  assert.deepEqual(
    out.map((r) => [r.error_code, r.pages.length]),
    [[0, 2]],
  );
});
