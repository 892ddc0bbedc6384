// Which pages the box sends and what it leaves to the printer (media/document-plan.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PageRangeError,
  planPages,
  selectedPages,
  type PageRequest,
  type PrinterPageFeatures,
} from '../src/media/document-plan.ts';

/** A printer that does nothing itself but print pages. */
const bare: PrinterPageFeatures = {
  pageRanges: false,
  maxCopies: 1,
  collation: { collated: false, uncollated: false },
};
/** A printer that does ranges, reverse delivery and copies both ways. */
const able: PrinterPageFeatures = {
  pageRanges: true,
  reverseDelivery: 'reverse-order-face-up',
  maxCopies: 999,
  collation: { collated: true, uncollated: true },
};
const req = (r: Partial<PageRequest>): PageRequest => ({
  pages: 3,
  reverse: false,
  duplex: false,
  copies: 1,
  collate: true,
  ...r,
});

test('nothing to do: the document goes as it is', () => {
  assert.deepEqual(planPages(req({}), bare), { sequence: null, printer: { copies: 1 }, sides: 3 });
  // a 3-page document two-sided takes 4 sides: the printer leaves the last back blank
  assert.deepEqual(planPages(req({ duplex: true }), bare), { sequence: null, printer: { copies: 1 }, sides: 4 });
});

test('a printer that does ranges, reverse and copies gets them as attributes', () => {
  const p = planPages(
    req({
      pages: 5,
      ranges: [
        { from: 2, to: 3 },
        { from: 5, to: 5 },
      ],
      reverse: true,
      copies: 2,
      collate: false,
      duplex: true,
    }),
    able,
  );
  assert.deepEqual(p, {
    sequence: null,
    printer: {
      copies: 2,
      pageRanges: [
        { lower: 2, upper: 3 },
        { lower: 5, upper: 5 },
      ],
      pageDelivery: 'reverse-order-face-up',
      collate: false,
    },
    sides: 8,
  });
});

test('ranges the printer cannot take are selected by the box, in the order given', () => {
  assert.deepEqual(planPages(req({ pages: 6, ranges: [{ from: 2, to: 3 }] }), bare).sequence, [2, 3]);
  // Out of order or repeated ranges are not sorted rangeOfInteger values: the box selects.
  const p = planPages(
    req({
      pages: 6,
      ranges: [
        { from: 5, to: 6 },
        { from: 1, to: 2 },
      ],
    }),
    able,
  );
  assert.deepEqual(p.sequence, [5, 6, 1, 2]);
  assert.equal(p.printer.pageRanges, undefined);
});

test('reverse, one-sided: last page first', () => {
  const p = planPages(req({ pages: 4, reverse: true }), bare);
  assert.deepEqual(p.sequence, [4, 3, 2, 1]);
  assert.equal(p.sides, 4);
});

test('reverse, two-sided: sheets last to first, an odd count padded with a blank back', () => {
  const p = planPages(req({ pages: 5, reverse: true, duplex: true }), bare);
  assert.deepEqual(p.sequence, [5, 'blank', 3, 4, 1, 2]);
  assert.equal(p.sides, 6);
  assert.deepEqual(planPages(req({ pages: 4, reverse: true, duplex: true }), bare).sequence, [3, 4, 1, 2]);
});

test('reversing the box selects too (page-ranges would count the reordered pages)', () => {
  const p = planPages(req({ pages: 6, ranges: [{ from: 1, to: 3 }], reverse: true, duplex: true }), {
    ...able,
    reverseDelivery: undefined,
  });
  assert.deepEqual(p.sequence, [3, 'blank', 1, 2]);
  assert.equal(p.printer.pageRanges, undefined);
  assert.deepEqual(p.printer, { copies: 1 }, 'copies 1: no collation asked for');
});

test('reversed by the box, copied by the printer', () => {
  const p = planPages(req({ pages: 3, reverse: true, duplex: true, copies: 2 }), {
    ...able,
    reverseDelivery: undefined,
  });
  assert.deepEqual(p.sequence, [3, 'blank', 1, 2]);
  assert.deepEqual(p.printer, { copies: 2, collate: true });
  assert.equal(p.sides, 8);
});

test('copies beyond copies-supported are made by the box: collated, each copy on a new sheet', () => {
  const p = planPages(req({ pages: 3, duplex: true, copies: 3 }), bare);
  assert.deepEqual(p.sequence, [1, 2, 3, 'blank', 1, 2, 3, 'blank', 1, 2, 3, 'blank']);
  assert.deepEqual(p.printer, { copies: 1 });
  assert.equal(p.sides, 12);
});

test('uncollated copies by the box: each sheet N times', () => {
  assert.deepEqual(planPages(req({ pages: 3, duplex: true, copies: 2, collate: false }), bare).sequence, [
    1,
    2,
    1,
    2,
    3,
    'blank',
    3,
    'blank',
  ]);
  assert.deepEqual(planPages(req({ pages: 3, copies: 2, collate: false }), bare).sequence, [1, 1, 2, 2, 3, 3]);
  // The printer has copies but not the collation asked for: the box does it.
  const p = planPages(req({ pages: 2, copies: 2, collate: false }), {
    ...able,
    collation: { collated: true, uncollated: false },
  });
  assert.deepEqual(p.sequence, [1, 1, 2, 2]);
  assert.equal(p.printer.copies, 1);
});

test('reverse and copies by the box: the whole stack reversed', () => {
  assert.deepEqual(planPages(req({ pages: 3, reverse: true, copies: 2 }), bare).sequence, [3, 2, 1, 3, 2, 1]);
  assert.deepEqual(planPages(req({ pages: 2, reverse: true, copies: 2, collate: false }), bare).sequence, [2, 2, 1, 1]);
});

test('page ranges beyond the document or backwards are refused', () => {
  assert.throws(
    () => planPages(req({ pages: 3, ranges: [{ from: 2, to: 4 }] }), bare),
    (e: unknown) => e instanceof PageRangeError && /beyond the last page \(3\)/.test(e.message),
  );
  assert.throws(() => selectedPages(3, [{ from: 3, to: 2 }]), PageRangeError);
  assert.deepEqual(
    selectedPages(3, [
      { from: 2, to: 2 },
      { from: 2, to: 3 },
    ]),
    [2, 2, 3],
  );
});
