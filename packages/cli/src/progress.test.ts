// The page bar of `boxhub scan` (docs/cli.md, "boxhub scan"): a cell a page while the stack is
// shorter than the bar, several pages a cell past it; recorded pages first, then those whose
// item is still being made; always the same width, so a redrawn line does not jump.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pageBar } from './progress.ts';

test("pageBar grows a cell a page, filled once the page's item is recorded", () => {
  assert.equal(pageBar(0, 0, 10), `▕${' '.repeat(10)}▏`);
  assert.equal(pageBar(3, 0, 10), `▕▒▒▒${' '.repeat(7)}▏`);
  assert.equal(pageBar(4, 2, 10), `▕██▒▒${' '.repeat(6)}▏`);
  assert.equal(pageBar(10, 10, 10), '▕██████████▏');
  // 25 pages on 10 cells: 3 pages a cell, 9 cells; 12 recorded pages fill 4.
  assert.equal(pageBar(25, 12, 10), '▕████▒▒▒▒▒ ▏');
  // Recorded never shows more than scanned (a late progress report).
  assert.equal(pageBar(2, 5, 10), `▕██${' '.repeat(8)}▏`);
  for (const [s, r] of [
    [0, 0],
    [7, 3],
    [31, 30],
    [200, 120],
    [1000, 999],
  ] as const)
    assert.equal(pageBar(s, r).length, 32);
});
