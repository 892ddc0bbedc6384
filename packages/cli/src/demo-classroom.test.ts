import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trayOrder } from './demo-classroom.ts';

const pages = (n: number) => Array.from({ length: n }, (_, i) => Uint8Array.of(i + 1));
const names = (p: Uint8Array[]) => p.map((x) => x[0]);

test("trayOrder undoes the box's reversal: pages last to first one-sided, sheets last to first two-sided", () => {
  assert.deepEqual(names(trayOrder(pages(4), { reverse: false, duplex: true })), [1, 2, 3, 4]);
  assert.deepEqual(names(trayOrder(pages(3), { reverse: true, duplex: false })), [3, 2, 1]);
  // Two-sided, the box sent sheet 2 (pages 1, 2 of what it sent) before sheet 1: each sheet keeps its front first.
  assert.deepEqual(names(trayOrder(pages(4), { reverse: true, duplex: true })), [3, 4, 1, 2]);
  assert.deepEqual(names(trayOrder(pages(5), { reverse: true, duplex: true })), [5, 3, 4, 1, 2]);
});
