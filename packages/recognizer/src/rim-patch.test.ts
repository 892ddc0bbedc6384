// A grown outline's arc along the sampled ellipse's edge (rim-patch.ts), on made-up darkness
// grids (no images): a quiet area filled only by such a patch, or by a stroke that is such an arc,
// is uncertain; a dot, a half fill, a mark told by its mean or by a stroke through the area keep
// their fill.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RIM, THRESHOLDS } from './mark-classifier.ts';
import { evidence } from './mark-evidence.ts';
import { judgeRimPatches, LONG_ARC, patchOnRim, RIM_REACH } from './rim-patch.ts';
import { spotsOf } from './speck-spots.ts';
import { area, H, lv, rx, ry, W } from './testing/made-up-area.ts';

/** The outline grown into the area along its upper edge: 0.6 mm deep, 4.8 mm long, at `dark`. */
const arc =
  (dark: number, ground = 0) =>
  (u: number, v: number) =>
    v <= -ry + 0.6 && Math.abs(u) <= 2.4 ? dark : ground;
/** A disc of darkness `dark`, radius `r` mm, centred at (cx, cy). */
const dot = (cx: number, cy: number, r: number, dark: number) => (u: number, v: number) =>
  (u - cx) ** 2 + (v - cy) ** 2 <= r * r ? dark : 0;

test("a patch along the sampled ellipse's edge lies on its rim; a dot, even off-centre, and a half fill reach further in", () => {
  assert.ok(patchOnRim(area(arc(0.25)), lv));
  // Generator B's smallest dot (1.6 mm across) as far off-centre as it places one.
  assert.ok(!patchOnRim(area(dot(0.85 * (W / 2 - 0.8), 0, 0.8, 0.8)), lv));
  assert.ok(!patchOnRim(area(dot(0, 0.85 * (H / 2 - 0.64), 0.8, 0.8)), lv));
  assert.ok(
    !patchOnRim(
      area((u) => (u >= -0.3 ? 0.25 : 0)),
      lv,
    ),
  );
  assert.ok(
    !patchOnRim(
      area(() => 0),
      lv,
    ),
    'no patch',
  );
  assert.ok(RIM_REACH > 0.54, "beyond the reach of B's dots on C's tuning pages");
});

test('a quiet area filled only by a patch on its rim is uncertain; a dot, a mean or a stroke keeps its fill', () => {
  const rim = area(arc(0.25));
  const dotted = area(dot(1.5, 0.2, 0.8, 0.8));
  // The same arc over a light hand's faint fill: its mean is no bare paper.
  const greyed = area(arc(0.35, 0.08));
  // A line across the area: a stroke tells its fill.
  const line = area((u, v) => Math.max(arc(0.25)(u, v), Math.abs(v - 0.3 * u) <= 0.25 && Math.abs(u) <= 2 ? 0.8 : 0));
  const samples = [rim, dotted, greyed, line];
  const ev = samples.map((s) => evidence(s, lv));
  assert.ok(ev[0]!.solid < RIM.rimQuietSolid && ev[0]!.stroke < THRESHOLDS.filledStroke, JSON.stringify(ev[0]));
  assert.ok(
    ev[0]!.blob >= THRESHOLDS.filledBlob,
    `the arc is a patch a light hand's page calls a fill: ${ev[0]!.blob}`,
  );
  assert.ok(ev[2]!.solid >= RIM.rimQuietSolid, JSON.stringify(ev[2]));
  assert.ok(ev[3]!.stroke >= THRESHOLDS.filledStroke, JSON.stringify(ev[3]));
  const decided = samples.map(() => ({ state: 'filled' as const, score: 1 }));
  judgeRimPatches(decided, ev, samples, lv);
  assert.deepEqual(
    decided.map((d) => d.state),
    ['uncertain', 'filled', 'filled', 'filled'],
  );
  // Only fills change.
  const empty = [{ state: 'empty' as const, score: 0 }];
  judgeRimPatches(empty, [ev[0]!], [rim], lv);
  assert.equal(empty[0]!.state, 'empty');
});

test("a quiet area filled by a stroke that runs along the sampled ellipse's edge is uncertain; a stroke through the area keeps its fill", () => {
  // The sampled ellipse sits off the printed outline (generator C's scratch seed 5 104 545, heavy
  // low ink, 200 dpi): the outline's arc, 0.3 mm deep and 6 mm long along the upper edge,
  // measures as a stroke.
  const crescent = (u: number, v: number) =>
    v < 0 && Math.abs(u) <= 3 && Math.sqrt((u * u) / (rx * rx) + (v * v) / (ry * ry)) >= 1 - 0.3 / ry ? 0.5 : 0;
  const offOutline = area(crescent);
  // A faint, thin tick through the middle (its mean bare paper too).
  const tick = (u: number, v: number) => (Math.abs(v - 0.5 * u) <= 0.1 && Math.abs(u) <= 1.4 ? 0.5 : 0);
  const ticked = area(tick);
  const samples = [offOutline, ticked];
  const ev = samples.map((s) => evidence(s, lv));
  for (const e of ev) assert.ok(e.solid < RIM.rimQuietSolid && e.stroke >= THRESHOLDS.filledStroke, JSON.stringify(e));
  const decided = samples.map(() => ({ state: 'filled' as const, score: 1 }));
  judgeRimPatches(decided, ev, samples, lv);
  assert.deepEqual(
    decided.map((d) => d.state),
    ['uncertain', 'filled'],
  );
});

test('a long arc that ink spreading grew further in lies on the rim too; a dot as far in, or one as long, does not', () => {
  // Generator C's scratch seed 4 607 542 (heavy ink spreading, 150 dpi): the outline grown
  // inwards along the upper edge, 5.9 mm long, out from 0.55 of the radius, faint (0.15). Every
  // empty area of such a page shows it, so the page's empty level (its baseline) holds it and
  // the area's mean is bare paper.
  const grown = (u: number, v: number) =>
    v < 0 && Math.abs(u) <= 2.95 && Math.sqrt((u * u) / (rx * rx) + (v * v) / (ry * ry)) >= 0.55 ? 0.15 : 0;
  const arcArea = area(grown);
  const page = { ...lv, baseline: arcArea.mean };
  const [p] = spotsOf(arcArea, page).spots;
  assert.ok(p && p.reach < RIM_REACH && p.reach >= LONG_ARC.reach && p.side >= LONG_ARC.side, JSON.stringify(p));
  const ev = evidence(arcArea, page);
  assert.ok(ev.solid < RIM.rimQuietSolid && ev.stroke < THRESHOLDS.filledStroke, JSON.stringify(ev));
  assert.ok(patchOnRim(arcArea, page));
  const decided = [{ state: 'filled' as const, score: 1 }];
  judgeRimPatches(decided, [ev], [arcArea], page);
  assert.equal(decided[0]!.state, 'uncertain');
  // Generator B's largest small dot (2.6 mm across) out from where the arc reaches in (cut by the
  // edge, as only such a dot can be), and a dot as long as the arc reaching near the centre.
  const far = area(dot(0, -(0.55 * ry + 1.3), 1.3, 0.3));
  const [q] = spotsOf(far, lv).spots;
  assert.ok(q && q.reach >= LONG_ARC.reach && q.reach < RIM_REACH && q.side < LONG_ARC.side, JSON.stringify(q));
  assert.ok(!patchOnRim(far, lv));
  assert.ok(!patchOnRim(area(dot(0, -0.4, 2.1, 0.3)), lv));
});
