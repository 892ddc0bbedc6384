// The other side's QR code seen through the paper, on made-up samples (no images): the pattern
// behind an area, how strongly it shows through, when it is not trusted, and the samples with it
// taken out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AreaSample } from './area-sampler.ts';
import type { ModuleMatrix } from './codes.ts';
import { PAGE } from './page-frame.ts';
import { solveHomography } from './homography.ts';
import {
  coverage,
  measureQrBehind,
  patternBehind,
  takeOutQrBehind,
  withoutShowThrough,
  type QrBehind,
} from './show-through.ts';

/** A 29 × 29 module matrix, dark modules at random (a QR code's look), seeded. */
function matrix(seed: number): ModuleMatrix {
  const data = new Uint8Array(29 * 29);
  let s = seed;
  for (let i = 0; i < data.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = s >>> 31;
  }
  return { cols: 29, rows: 29, data };
}

/** The code on the other side at (150, 40) mm, modules of 1.25 mm: behind x from 23.75 to 60 mm on this side. */
const q: QrBehind = { matrix: matrix(1), x: 150, y: 40, module: 1.25 };

/** A 7 × 4.4 mm area's sample grid at 200 dpi: darkness `level` plus `strength` × the pattern behind it (blurred 0.3 mm) plus noise. */
function area(cx: number, cy: number, level: number, strength: number, behind: QrBehind = q, seed = 3): AreaSample {
  const step = 0.15,
    cols = 40,
    rows = 25;
  const grid = new Float32Array(cols * rows),
    inner = new Uint8Array(cols * rows);
  const s0: AreaSample = { grid, inner, cols, rows, step, mean: 0, sd: 0, outline: 0.6, paper: 220, range: 190 };
  const t = patternBehind(behind, s0, cx, cy, 0.3);
  let s = seed,
    n = 0,
    sum = 0;
  for (let k = 0; k < grid.length; k++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const noise = ((s >>> 8) / 2 ** 24 - 0.5) * 0.06;
    grid[k] = level + strength * t[k]! + noise;
    const u = (k % cols) - cols / 2 + 0.5,
      v = Math.floor(k / cols) - rows / 2 + 0.5;
    if ((u / (cols / 2)) ** 2 + (v / (rows / 2)) ** 2 <= 0.49) {
      inner[k] = 1;
      n++;
      sum += grid[k]!;
    }
  }
  return { ...s0, mean: sum / n };
}

/** 16 areas over the code behind (a 4 × 4 block, as on the benchmark card's back). */
const AREAS = Array.from({ length: 16 }, (_, i) => ({
  x: 27 + (i % 4) * 9,
  y: 45 + Math.floor(i / 4) * 8,
  w: 7,
  h: 4.4,
}));

test("the pattern behind: the mirror image of the other side's modules, blurred", () => {
  const m = q.matrix;
  // A point in the middle of module (r, c) of the code lies, seen from this side, at x = W - (q.x + (c + 0.5) · module).
  for (const [r, c] of [
    [3, 4],
    [10, 20],
    [25, 1],
  ] as const) {
    const x = PAGE.width - (q.x + (c + 0.5) * q.module),
      y = q.y + (r + 0.5) * q.module;
    const t = coverage(q, x, y, 0.05);
    assert.ok(Math.abs(t - m.data[r * m.cols + c]!) < 0.01, `module ${r},${c}: ${t}`);
  }
  assert.equal(coverage(q, 100, 100, 0.3), 0, 'nothing behind a point away from the code');
});

test('the show-through is measured from the areas over the code: its strength, whatever most areas hold', () => {
  const samples = AREAS.map((a, i) => area(a.x, a.y, i % 5 === 0 ? 0.5 : i % 7 === 0 ? 0.1 : 0, 0.09, q, i + 1));
  const st = measureQrBehind(q, AREAS, samples);
  assert.ok(st, 'measured');
  assert.ok(Math.abs(st.strength - 0.09) < 0.01, `strength ${st.strength}`);
  assert.ok(st.correlation > 0.5 && st.blur === 0.3, JSON.stringify({ c: st.correlation, b: st.blur }));
});

test('no show-through, another code behind, or the sides out of register: nothing is measured', () => {
  assert.equal(
    measureQrBehind(
      q,
      AREAS,
      AREAS.map((a, i) => area(a.x, a.y, 0, 0, q, i + 1)),
    ),
    null,
    'no show-through',
  );
  // The page shows another code than the layout's: the layout's pattern does not explain it.
  const other: QrBehind = { ...q, matrix: matrix(2) };
  assert.equal(
    measureQrBehind(
      q,
      AREAS,
      AREAS.map((a, i) => area(a.x, a.y, 0, 0.09, other, i + 1)),
    ),
    null,
    'another code',
  );
  // The layout's code, printed 0.8 mm off where the layout puts it.
  const shifted: QrBehind = { ...q, x: q.x + 0.8 };
  assert.equal(
    measureQrBehind(
      q,
      AREAS,
      AREAS.map((a, i) => area(a.x, a.y, 0, 0.09, shifted, i + 1)),
    ),
    null,
    'out of register',
  );
  assert.equal(measureQrBehind(null, AREAS, []), null, 'no code behind');
});

test('taken out: an empty area reads as paper and a residue keeps its own darkness', () => {
  // Grey levels: paper 220, black 30; the code takes 10 % of the light where it is fully dark.
  const paper = 220,
    black = 30,
    taken = 0.1;
  const make = (level: number): { s: AreaSample; t: Float32Array } => {
    const s0 = area(40, 50, 0, 0);
    const t = patternBehind(q, s0, 40, 50, 0.3);
    // The paper around the area was measured on the show-through too: 4 % darker than it is.
    const seenPaper = paper * 0.96,
      range = seenPaper - black;
    const grid = new Float32Array(s0.grid.length);
    for (let k = 0; k < grid.length; k++) {
      const grey = (paper - level * (paper - black)) * (1 - taken * t[k]!);
      grid[k] = (seenPaper - grey) / range;
    }
    return { s: { ...s0, grid, paper: seenPaper, range }, t };
  };
  for (const level of [0, 0.1, 0.18]) {
    const { s, t } = make(level);
    const raw = [...s.grid].filter((_, k) => s.inner[k]);
    const out = withoutShowThrough(s, t, taken, paper);
    assert.ok(
      Math.abs(out.mean - level) < 0.002,
      `level ${level}: ${out.mean} (raw mean ${raw.reduce((a, b) => a + b, 0) / raw.length})`,
    );
    assert.ok(out.sd < 0.002, `flat: ${out.sd}`);
  }
});

test('on a page judged against rings of paper (a band, a shadow) nothing is taken out: the paper map cannot follow it', () => {
  const samples = AREAS.map((a, i) => area(a.x, a.y, i % 5 === 0 ? 0.5 : 0, 0.09, q, i + 1));
  // A thumbnail of plain paper at 1 px/mm, and the page's millimetres as its pixels.
  const thumb = { data: new Uint8Array(210 * 297).fill(220), width: 210, height: 297 };
  const h = solveHomography(
    [
      { x: 0, y: 0 },
      { x: 210, y: 0 },
      { x: 0, y: 297 },
      { x: 210, y: 297 },
    ],
    [
      { x: 0, y: 0 },
      { x: 210, y: 0 },
      { x: 0, y: 297 },
      { x: 210, y: 297 },
    ],
  );
  assert.ok(h);
  const view = { thumb, factor: 1, h, pxmm: 1 };
  const taken = takeOutQrBehind(q, AREAS, samples, view);
  assert.ok(taken.measured && taken.cleared.some(Boolean), 'taken out on an even page');
  const kept = takeOutQrBehind(q, AREAS, samples, { ...view, ringJudged: true });
  assert.equal(kept.measured, null);
  assert.ok(kept.cleared.every((c) => !c));
  assert.ok(kept.samples.every((s, i) => s === samples[i]));
});
