// Toner specks on made-up darkness grids (no images): a spot a speck's size on bare paper is
// empty on a speckled page; a dot, a spot cut by the ellipse's edge or a spot on a faint fill
// is not; a half fill's patch keeps its fill where only specks make the page cautious.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleArea, type AreaSample } from './area-sampler.ts';
import type { GreyImage } from './grey-image.ts';
import { solveHomography } from './homography.ts';
import { classify, pageFills, THRESHOLDS } from './mark-classifier.ts';
import { evidence } from './mark-evidence.ts';
import type { PageQuality } from './page-quality.ts';
import {
  dotBeyondSpecks,
  shortOnSpecks,
  grownInImage,
  judgeSpecks,
  onlySpecks,
  SPECK,
  spotsOf,
  type SpeckImage,
} from './speck-spots.ts';

import { area, H, lv, PXMM, rx, ry, W } from './testing/made-up-area.ts';

/** A disc (or ellipse) of darkness `dark` centred at (cx, cy), radii `a` × `b` mm, on `ground`. */
const spot =
  (cx: number, cy: number, a: number, b: number, dark: number, ground = 0) =>
  (u: number, v: number) =>
    ((u - cx) / a) ** 2 + ((v - cy) / b) ** 2 <= 1 ? dark : ground;

const speckled: PageQuality = {
  bandsAcross: 0.02,
  bandsAlong: 0.01,
  uneven: 0.05,
  steep: 0.04,
  contrast: 150,
  blurMm: 0.2,
  blockiness: 1.5,
  specks: 0.3,
  speckSize: 1.2,
  speckMeasured: 1.2,
  showThrough: 0,
  local: 0,
};

test('a speck 0.9 mm across on bare paper is only a speck; a dot 1.8 × 1.3 mm, a speck on a faint fill or bare paper are not', () => {
  assert.ok(onlySpecks(area(spot(0.8, 0.3, 0.45, 0.45, 0.6)), lv));
  // Two specks apart, each a speck's size.
  assert.ok(
    onlySpecks(
      area((u, v) => Math.max(spot(-1.5, 0, 0.4, 0.4, 0.7)(u, v), spot(1.2, 0.4, 0.35, 0.35, 0.5)(u, v))),
      lv,
    ),
  );
  // B's smallest dots are 1.6 mm across and more.
  assert.ok(!onlySpecks(area(spot(0.5, 0, 0.9, 0.65, 0.6)), lv));
  // A speck on a faint fill: the paper around it is not bare.
  assert.ok(!onlySpecks(area(spot(0.8, 0.3, 0.45, 0.45, 0.6, 0.12)), lv));
  assert.ok(
    !onlySpecks(
      area(() => 0),
      lv,
    ),
  );
});

test("a spot on the sampled ellipse's edge decides nothing: it may be a dot that lies beyond", () => {
  // Half a dot: its centre just outside the sampled ellipse's right end.
  assert.ok(!onlySpecks(area(spot(rx + 0.1, 0, 0.8, 0.6, 0.6)), lv));
  // The same speck as the first test's, wholly inside, and moved onto the edge.
  assert.ok(!onlySpecks(area(spot(rx - 0.25, 0, 0.45, 0.45, 0.6)), lv));
});

test(`on a speckled page a speck's area left uncertain is empty; a half fill's patch (from ${SPECK.patchBeyond} mm²) keeps its fill unless the other side shows through strongly`, () => {
  const speck = area(spot(0.8, 0.3, 0.5, 0.5, 0.7));
  const half = area(spot(-1.3, 0, 1.8, 1.6, 0.2));
  const samples = [speck, half];
  const ev = samples.map((s) => evidence(s, lv));
  const fills = pageFills(ev);
  const decide = (q: PageQuality) => {
    const d = ev.map((e) => classify(e, lv, fills));
    judgeSpecks(d, ev, samples, q, lv);
    return d.map((x) => x.state);
  };
  // Without the page's caution: the speck is a trace (never empty), the half fill a patch's fill.
  assert.deepEqual(
    ev.map((e) => classify(e, lv, fills).state),
    ['uncertain', 'filled'],
  );
  assert.deepEqual(decide(speckled), ['empty', 'filled']);
  assert.deepEqual(decide({ ...speckled, specks: 0, showThrough: 0.3 }), ['uncertain', 'uncertain']);
  // A page without specks or show-through: nothing changes.
  assert.deepEqual(decide({ ...speckled, specks: 0 }), ['uncertain', 'filled']);
});

test("a dot larger than the page's largest speck by half, and than any speck in an area, is a dot: it keeps its fill on a speckled page", () => {
  // A pen dot 1.8 × 1.3 mm (its bounding box's diagonal a short stroke) on a page whose largest
  // margin speck is 1.2 mm², and a speck 1.2 mm across.
  const dot = area(spot(0.9, 0.2, 0.9, 0.65, 0.9));
  const speck = area(spot(0.8, 0.3, 0.6, 0.6, 0.9));
  assert.ok(dotBeyondSpecks(dot, lv, 1.2, 2.2));
  assert.ok(!dotBeyondSpecks(dot, lv, 3, 2.2), 'where the margins show specks as large, it may be one');
  assert.ok(!dotBeyondSpecks(speck, lv, 0.5, 1.9), `a speck 1.2 mm across is under ${SPECK.dotMin} mm²`);
  const samples = [dot, speck];
  const ev = samples.map((s) => evidence(s, lv, 1.9));
  const fills = pageFills(ev);
  const d = ev.map((e) => classify(e, lv, fills));
  assert.deepEqual(
    d.map((x) => x.state),
    ['filled', 'filled'],
    'a short stroke and a patch',
  );
  judgeSpecks(d, ev, samples, speckled, lv);
  assert.deepEqual(
    d.map((x) => x.state),
    ['filled', 'uncertain'],
  );
  const again = ev.map((e) => classify(e, lv, fills));
  judgeSpecks(again, ev, samples, { ...speckled, speckSize: 3 }, lv);
  assert.deepEqual(
    again.map((x) => x.state),
    ['uncertain', 'uncertain'],
  );
});

test("a spot on the ellipse's edge is a dot only from twice the margins' largest speck, and never one wider than its stroke", () => {
  // A dot 2 × 1.5 mm whose right end the sampled ellipse cuts: 2.4 mm² inside. Against
  // margins whose largest speck is 1.3 mm² it is 1.85 times that: a speck as large, its size
  // grown by the edge's halo, measured so on C's tuning pages (heavy toner, 200 dpi).
  const cut = area(spot(rx - 0.7, 0, 1, 0.75, 0.9));
  const inside = area(spot(0.3, 0, 1, 0.75, 0.9));
  assert.ok(dotBeyondSpecks(inside, lv, 1.3, 2.3), 'wholly inside: 1.5 times the largest speck is enough');
  assert.ok(!dotBeyondSpecks(cut, lv, 1.3, 2.3), 'on the edge: 1.85 times is not');
  assert.ok(dotBeyondSpecks(cut, lv, 1.0, 2.3), 'on the edge: from twice');
  // A spot much wider than the area's stroke (grown along the outline's halo) is no dot.
  assert.ok(!dotBeyondSpecks(inside, lv, 1.0, 1.4));
});

/**
 * A scanned 30 × 30 mm piece of page at 200 dpi: paper 235, the area's printed outline (7 × 4.4 mm
 * at (15, 15) mm, 0.3 mm wide, grey 30) and `ink(u, v)` (mm from the area's centre: the grey
 * there, or null), sampled as the recognizer samples it (sampleArea).
 */
function scanned(
  ink: (u: number, v: number) => number | null,
  local?: (u: number, v: number) => number,
): { sample: AreaSample; page: SpeckImage } {
  const n = Math.round(30 * PXMM);
  const data = new Uint8Array(n * n).fill(235);
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      const u = (x + 0.5) / PXMM - 15,
        v = (y + 0.5) / PXMM - 15;
      const at = Math.hypot(u / (W / 2), v / (H / 2));
      // The outline: within 0.15 mm of the ellipse, measured along the radius.
      if (Math.abs(at - 1) * Math.hypot(u, v) <= 0.15 * at) data[y * n + x] = 30;
      const g = ink(u, v);
      if (g !== null) data[y * n + x] = Math.min(data[y * n + x]!, g);
    }
  const img: GreyImage = { data, width: n, height: n };
  const corners = [
    { x: 0, y: 0 },
    { x: 30, y: 0 },
    { x: 0, y: 30 },
    { x: 30, y: 30 },
  ];
  const h = solveHomography(
    corners,
    corners.map((c) => ({ x: (c.x * n) / 30, y: (c.y * n) / 30 })),
  )!;
  const streaks = new Uint8Array(n);
  const sample = sampleArea(img, h, { level: () => 235 }, 20, streaks, 15, 15, W, H, PXMM, local);
  return { sample, page: { img, black: 20, pxmm: PXMM, streaks } };
}

const disc = (cx: number, cy: number, r: number, grey: number) => (u: number, v: number) =>
  (u - cx) ** 2 + (v - cy) ** 2 <= r * r ? grey : null;

test("a speck on the sampled ellipse's edge is followed in the image: one that ends before the outline is a speck; a mark running on into the outline, or one on an ADF streak, decides nothing", () => {
  // A speck 0.8 mm across over the sampled ellipse's lower end, 0.1 mm short of the outline.
  const speck = scanned(disc(0, 1.55, 0.4, 60));
  const spots = spotsOf(speck.sample, lv).spots;
  assert.equal(spots.length, 1);
  assert.ok(spots[0]!.edge, 'the sample sees it cut by its edge');
  assert.ok(!onlySpecks(speck.sample, lv), 'without the image: it decides nothing');
  assert.ok(grownInImage(speck.sample, spots[0]!, speck.page) <= SPECK.maxArea);
  assert.ok(onlySpecks(speck.sample, lv, speck.page), 'followed in the image: a speck');
  // The same spot the start of a line that runs on through the outline: no speck.
  const line = scanned(
    (u, v) => disc(0, 1.55, 0.4, 60)(u, v) ?? (Math.abs(u) <= 0.2 && v >= 1.55 && v <= 3.5 ? 60 : null),
  );
  assert.ok(!onlySpecks(line.sample, lv, line.page));
  // A dot 1.6 mm across whose inner part the edge cuts: it runs on into the outline.
  const dot = scanned(disc(0, ry + 0.3, 0.8, 60));
  assert.ok(!onlySpecks(dot.sample, lv, dot.page));
  // A speck next to an ADF streak's columns: its part there is not seen, so it decides nothing.
  const cut = scanned(disc(0, 1.55, 0.4, 60));
  const x = Math.floor((15 + 0.2) * PXMM);
  cut.page.streaks[x] = 1;
  assert.equal(grownInImage(cut.sample, spotsOf(cut.sample, lv).spots[0]!, cut.page), Infinity);
  // On a speckled page the area it left uncertain is empty; with no image, as before, it stays.
  const ev = [evidence(speck.sample, lv)];
  const d = ev.map((e) => classify(e, lv, pageFills(ev)));
  assert.equal(d[0]!.state, 'uncertain');
  judgeSpecks(d, ev, [speck.sample], speckled, lv);
  assert.equal(d[0]!.state, 'uncertain');
  judgeSpecks(d, ev, [speck.sample], speckled, lv, speck.page);
  assert.equal(d[0]!.state, 'empty');
});

test("a dot counts beyond the page's specks only from 1.8 times its margins' largest: a speck in an area measured 1.66 times it on C's heavy toner", () => {
  const dot = area(spot(0.5, 0.2, 0.85, 0.8, 0.85));
  const size = spotsOf(dot, lv).spots[0]!.area;
  assert.ok(size >= SPECK.dotMin);
  assert.ok(!dotBeyondSpecks(dot, lv, size / 1.66, 2.1), 'a speck 1.66 times the margins’ largest');
  assert.ok(dotBeyondSpecks(dot, lv, size / 1.85, 2.1));
});

test('on a speckled page two specks side by side make no stroke: a fill told by a stroke shorter than two of its largest specks is uncertain', () => {
  // Two specks touching in a row, as C's heavy toner drew them (3.7 mm², 3.0 mm across, a
  // 3.2 mm "stroke"): here one spot 2.8 × 1.4 mm, a "stroke" over 2.6 mm told by nothing else.
  const pair = area(spot(0.2, 0.1, 1.4, 0.7, 0.8));
  const ev = [evidence(pair, lv, 1.9)];
  assert.ok(ev[0]!.stroke >= 2.6 && ev[0]!.stroke < 3.4, `stroke ${ev[0]!.stroke}`);
  const decide = (q: PageQuality) => {
    const d = ev.map((e) => classify(e, lv, pageFills(ev)));
    assert.equal(d[0]!.state, 'filled');
    judgeSpecks(d, ev, [pair], q, lv);
    return d[0]!.state;
  };
  // Margin specks of 2.29 mm² (1.7 mm across): two of them make 3.4 mm.
  const large = { ...speckled, speckSize: 2.29, speckMeasured: 2.29 };
  assert.ok(Math.abs(shortOnSpecks(large) - 3.415) < 0.01);
  assert.equal(decide(large), 'uncertain');
  // Small margin specks (0.5 mm²): such a stroke is a mark, as before.
  const small = { ...speckled, speckSize: 0.5, speckMeasured: 0.5 };
  assert.equal(shortOnSpecks(small), THRESHOLDS.shortStroke);
  assert.equal(decide(small), 'filled');
  // A margin speck that runs on tells no size; those measured beside it (2.47 mm², as on C's
  // scratch seed 5 105 539) still do: the pair is no stroke there either.
  const unbounded = { ...speckled, speckSize: Number.POSITIVE_INFINITY, speckMeasured: 2.47 };
  assert.ok(Math.abs(shortOnSpecks(unbounded) - 3.546) < 0.01, `${shortOnSpecks(unbounded)}`);
  assert.equal(decide(unbounded), 'uncertain');
  // Nothing measured beside it: the usual limit.
  assert.equal(shortOnSpecks({ speckSize: Number.POSITIVE_INFINITY, speckMeasured: 0 }), THRESHOLDS.shortStroke);
});

test('a patch whose darkest spot ends in the image as a speck does is no half fill: a ring darkened by a speck lightens part of the area, and the bare rest joins the patch', () => {
  // C's scratch card 6 105 513 at 300 dpi (heavy toner): another speck on the ring made the
  // paper carried inside 25 levels too dark over the area's upper part, which read lighter than
  // the rest; the bare rest and a speck 1.2 mm across in it measured one patch over 6 mm².
  const spoilt = (_u: number, v: number) => (v < -0.2 ? 210 : 235);
  const speck = scanned(disc(0.8, 0.7, 0.6, 40), spoilt);
  const ev = [evidence(speck.sample, lv)];
  assert.ok(ev[0]!.blob >= SPECK.patchBeyond, JSON.stringify(ev[0]));
  const d = () => ev.map((e) => classify(e, lv, pageFills(ev)));
  const without = d();
  assert.equal(without[0]!.state, 'filled', 'by the patch');
  judgeSpecks(without, ev, [speck.sample], speckled, lv);
  assert.equal(without[0]!.state, 'filled', 'without the image, a patch that large keeps its fill');
  const followed = d();
  judgeSpecks(followed, ev, [speck.sample], speckled, lv, speck.page);
  assert.equal(followed[0]!.state, 'uncertain', 'followed in the image, it is a speck');
  // C's scratch card 5 105 507 at 200 dpi (heavy toner): a speck larger than `SPECK.maxArea`
  // (1.50 mm² in the image) made such a patch too. It ends within a speck's reach: no proof.
  const larger = scanned(disc(0.8, 0.7, 0.7, 40), spoilt);
  const lev = [evidence(larger.sample, lv)];
  assert.ok(lev[0]!.blob >= SPECK.patchBeyond, JSON.stringify(lev[0]));
  const grown = grownInImage(
    larger.sample,
    spotsOf(larger.sample, lv).spots.reduce((a, b) => (b.area > a.area ? b : a)),
    larger.page,
  );
  assert.ok(grown > SPECK.maxArea && Number.isFinite(grown), `grown ${grown}`);
  const ld = lev.map((e) => classify(e, lv, pageFills(lev)));
  assert.equal(ld[0]!.state, 'filled', 'by the patch');
  judgeSpecks(ld, lev, [larger.sample], speckled, lv, larger.page);
  assert.equal(ld[0]!.state, 'uncertain', 'followed in the image, it ends as a compact spot');
  // A half fill of pencil on the same ring runs on in the image: it keeps its fill.
  const half = scanned((u, v) => (((u + 1.3) / 1.8) ** 2 + (v / 1.6) ** 2 <= 1 ? 175 : null), spoilt);
  const hev = [evidence(half.sample, lv)];
  const hd = hev.map((e) => classify(e, lv, pageFills(hev)));
  assert.equal(hd[0]!.state, 'filled');
  judgeSpecks(hd, hev, [half.sample], speckled, lv, half.page);
  assert.equal(hd[0]!.state, 'filled');
});
