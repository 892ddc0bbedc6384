// A student's sides judged together (student-pool.ts) on made-up evidence (no images): each side
// is first judged alone exactly as page-recognizer.ts does, then the student's uncertain areas
// are judged again with the gap between residue and faint fills over all of its sides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classify,
  fillsOf,
  pageFills,
  residueSplit,
  runsOn,
  splitGreys,
  splitOf,
  uniformMarks,
} from './mark-classifier.ts';
import type { MarkEvidence } from './mark-evidence.ts';
import type { PageLevels } from './page-levels.ts';
import type { PageReading } from './page-recognizer.ts';
import type { PageQuality } from './page-quality.ts';
import { poolStudent, sideEvidence } from './student-pool.ts';
import { StudentAssembler } from './student-assembler.ts';
import { createLayoutSet } from './layout-store.ts';
import { duplexLayout } from './testing/duplex-layout.ts';

const LEVELS_200: PageLevels = { baseline: 0.01, noise: 0.03, spread: 0.004, line: 0.5, pxmm: 7.87 };
const LEVELS_100: PageLevels = { ...LEVELS_200, pxmm: 3.94 };

/** A uniform grey or fill (no stroke, no patch). */
const grey = (solid: number): MarkEvidence => ({
  solid,
  peak: solid * 1.2,
  stroke: 0,
  cover: 0,
  blob: 0,
  blobContrast: 0,
});
const empty = (): MarkEvidence => ({ solid: 0.005, peak: 0.04, stroke: 0, cover: 0, blob: 0, blobContrast: 0 });
/** A mixed hand's clear fills: pen and pencil, uneven (not one instrument). */
const MIXED_FILLS = [0.8, 0.8, 0.8, 0.45, 0.45, 0.45].map(grey);
/**
 * A front whose one uniform grey, an eraser's residue of 0.108, its side alone cannot call (no
 * gap among its greys: the other one, a light fill of 0.23, lies above the band), and a back
 * whose residues (0.090, 0.094) and faint fills (0.132, 0.136) show a gap: over both sides the
 * gap lies from 0.108 to 0.132, and the residue, at most 0.11, is empty by its usual limits.
 */
const RESIDUE_FRONT = [...MIXED_FILLS, grey(0.108), grey(0.23), empty()];
const GAP_BACK = [...MIXED_FILLS, grey(0.09), grey(0.094), grey(0.132), grey(0.136), empty()];

type Ok = Extract<PageReading, { status: 'ok' }>;

/** A page's condition with nothing to note (its `local` set per test). */
const EVEN: PageQuality = {
  bandsAcross: 0.01,
  bandsAlong: 0.01,
  uneven: 0.02,
  steep: 0.01,
  contrast: 200,
  blurMm: 0.2,
  blockiness: 1.2,
  specks: 0,
  speckSize: 0,
  speckMeasured: 0,
  showThrough: 0,
  local: 0,
};

/** One side read as page-recognizer.ts reads it, from its areas' evidence (`noFill`: the page's condition would not let those areas be filled). */
function readSide(ev: MarkEvidence[], side: 'front' | 'back', levels = LEVELS_200, noFill?: boolean[]): Ok {
  const marks = uniformMarks(ev);
  const fills = fillsOf(marks);
  const greys = splitGreys(ev);
  const split = fills.hand === 'mixed' ? splitOf(greys) : null;
  const behind = ev.map(() => false);
  const areas = ev.map((e, i) => ({
    chapter: side === 'front' ? 1 : 2,
    index: i + 1,
    ...classify(e, levels, fills, split, behind[i]),
  }));
  return {
    status: 'ok',
    layout_id: '0000abcd',
    sheet: 1,
    side,
    upside_down: false,
    areas,
    ms: 1,
    evidence: sideEvidence(
      marks,
      greys,
      fills,
      levels,
      areas.map((a) => a.state),
      ev,
      behind,
      undefined,
      undefined,
      noFill,
    ),
  };
}

const states = (r: PageReading) => (r.status === 'ok' ? r.areas.map((a) => a.state) : []);

test("an area with the other side's QR code taken out (show-through.ts) is not judged again by the student's gap", () => {
  // RESIDUE_FRONT and GAP_BACK, the front's residue marked as one whose QR code behind was taken
  // out: the student's second look leaves it as its side left it.
  const ev = RESIDUE_FRONT;
  const front = readSide(ev, 'front');
  const apart = ev.map((_, i) => i === 6);
  const e = front.evidence!;
  const kept: Ok = {
    ...front,
    evidence: sideEvidence(
      e.marks,
      e.greys,
      e.open!.fills,
      e.open!.levels,
      front.areas.map((a) => a.state),
      ev,
      ev.map(() => false),
      apart,
    ),
  };
  assert.deepEqual(kept.evidence!.open, undefined, 'nothing left to judge again');
  const back = readSide(GAP_BACK, 'back');
  assert.equal(states(poolStudent([front, back])[0]!)[6], 'empty', 'judged again when not marked');
  assert.equal(states(poolStudent([kept, back])[0]!)[6], 'uncertain', 'not judged again when marked');
});

test('the split functions give what residueSplit and pageFills give', () => {
  const ev = [...MIXED_FILLS, grey(0.118), grey(0.148), grey(0.09), empty(), { ...grey(0.13), stroke: 1 }];
  assert.deepEqual(fillsOf(uniformMarks(ev)), pageFills(ev));
  assert.deepEqual(splitOf(splitGreys(ev)), residueSplit(ev, pageFills(ev)));
});

test("a residue left uncertain on one side is empty against the gap over all of the student's sides", () => {
  const front = readSide(RESIDUE_FRONT, 'front');
  const back = readSide(GAP_BACK, 'back');
  assert.equal(front.evidence?.open?.fills.hand, 'mixed');
  assert.deepEqual(states(front).slice(6), ['uncertain', 'filled', 'empty']);
  const [f, b] = poolStudent([front, back]);
  assert.deepEqual(states(f!).slice(6), ['empty', 'filled', 'empty']);
  assert.deepEqual(states(b!), states(back), 'nothing left to decide on the back: the same');
  assert.equal(b, back, 'an unchanged side is the same object');
  assert.deepEqual(states(front).slice(6), ['uncertain', 'filled', 'empty'], 'the input is not modified');
  const a = (f as Ok).areas[6]!;
  assert.deepEqual(a, { chapter: 1, index: 7, state: 'empty', score: 0 });
});

test("the student's wide gap reaches further only where greys run up to it on the side itself, or on the student's sides of even paper", () => {
  // Front alone: residues 0.104, 0.110 and 0.116 and a faint fill 0.148, and a grey of 0.070
  // that makes a second gap as wide (0.070 | 0.104): which gap parts the two is open, 0.116 is
  // uncertain. The back's greys (0.085, 0.095, 0.150, 0.158) fill the lower gap: over both sides
  // one wide gap (0.116 | 0.148), and the front's own residues run up to it from 0.110, empty by
  // the usual limit: empty up to 0.125.
  const front = readSide([...MIXED_FILLS, grey(0.07), grey(0.104), grey(0.11), grey(0.116), grey(0.148)], 'front');
  const back = readSide([...MIXED_FILLS, grey(0.085), grey(0.095), grey(0.15), grey(0.158)], 'back');
  assert.deepEqual(states(front).slice(6), ['empty', 'empty', 'empty', 'uncertain', 'filled']);
  assert.deepEqual(states(poolStudent([front, back])[0]!).slice(6), ['empty', 'empty', 'empty', 'empty', 'filled']);
  // A residue of 0.118 alone on its side (the next, 0.090, far below), beside a gap whose greys
  // run up to it on the other side only, stays uncertain: that run came through another page (generator C's scratch seed
  // 4 601 502, where an eraser's residue of 0.132 on a banded side so read filled beside another
  // side's faint fill of 0.133; docs/cards.md, section 8, "Generator C, seventeenth round").
  const lone = readSide([...MIXED_FILLS, grey(0.118), grey(0.148), empty(), grey(0.09)], 'front');
  const runs = readSide([...MIXED_FILLS, grey(0.11), grey(0.114), grey(0.152), empty()], 'back');
  const split = splitOf([...lone.evidence!.greys, ...runs.evidence!.greys].sort((x, y) => x - y));
  assert.ok(split?.belowRun, 'over both sides the greys run up to the gap');
  assert.deepEqual(states(lone).slice(6), ['uncertain', 'filled', 'empty', 'empty']);
  assert.deepEqual(states(poolStudent([lone, runs])[0]!).slice(6), ['uncertain', 'filled', 'empty', 'empty']);
  // Sides of even paper (no band or step measured, `PageQuality.local` 0) went through one
  // paper's measure: their greys run up to the gap together, as one page's do. Where either is
  // banded, the residue's side has only its own greys to run with.
  const paper = (r: Ok, local: number): Ok => ({ ...r, quality: { ...EVEN, local } });
  assert.deepEqual(states(poolStudent([paper(lone, 0), paper(runs, 0)])[0]!).slice(6), [
    'empty',
    'filled',
    'empty',
    'empty',
  ]);
  assert.deepEqual(states(poolStudent([paper(lone, 0.3), paper(runs, 0)])[0]!).slice(6), [
    'uncertain',
    'filled',
    'empty',
    'empty',
  ]);
  assert.deepEqual(states(poolStudent([paper(lone, 0), paper(runs, 0.3)])[0]!).slice(6), [
    'uncertain',
    'filled',
    'empty',
    'empty',
  ]);
  // On one side the run is the side's own: runsOn gives what splitOf gives.
  for (const g of [lone, runs, front, back].map((r) => r.evidence!.greys)) {
    const own = splitOf(g);
    if (own) assert.deepEqual(runsOn(own, g), own);
  }
});

test("greys that run up to the student's gap from inside the band, not from greys the usual limits call empty, are not its residue", () => {
  // Generator C's scratch seed 6 111 538 (heavy geometry, 300 dpi; docs/cards.md, section 8,
  // "Generator C, eighteenth round"): the front's two faint pencil fills, 0.112 and 0.115, lie
  // under a wide gap (0.115 | 0.150) over the student's three sides of even paper, a small step
  // apart, and 0.021 above the next grey (0.091, another side's residue). Taken as the top of the
  // residues they read empty; they run only with each other, inside the band, where a faint fill
  // measures as an eraser's residue does, and stay uncertain.
  const even = (r: Ok): Ok => ({ ...r, quality: EVEN });
  const front = even(readSide([...MIXED_FILLS, ...[0.052, 0.068, 0.112, 0.115, 0.15, 0.228].map(grey)], 'front'));
  const back = even(readSide([...MIXED_FILLS, ...[0.04, 0.041, 0.205, 0.225].map(grey)], 'back'));
  const third = even(
    readSide(
      [...MIXED_FILLS, ...[0.04, 0.044, 0.048, 0.057, 0.058, 0.061, 0.084, 0.091, 0.16, 0.175].map(grey)],
      'back',
    ),
  );
  const greys = [front, back, third].flatMap((r) => r.evidence!.greys).sort((x, y) => x - y);
  const split = splitOf(greys)!;
  assert.deepEqual([split.below, split.above, split.wide], [0.115, 0.15, true]);
  assert.deepEqual(states(front).slice(8, 10), ['uncertain', 'uncertain'], 'alone: a second gap (0.068 | 0.112)');
  assert.equal(runsOn(split, greys).belowRun, false, 'the run 0.115, 0.112 ends at 0.091, above the usual limit');
  assert.deepEqual(states(poolStudent([front, back, third])[0]!).slice(8, 10), ['uncertain', 'uncertain']);
  // Where the run goes on to a grey the usual limits call empty (0.104), it is the residues' top.
  const runs = even(readSide([...MIXED_FILLS, ...[0.052, 0.068, 0.104, 0.112, 0.115, 0.15, 0.228].map(grey)], 'front'));
  assert.deepEqual(states(poolStudent([runs, back, third])[0]!).slice(9, 11), ['empty', 'empty']);
});

test("a faint fill left uncertain on one side is filled once the student's other side shows the gap below it", () => {
  // Front alone has one grey (0.140): no gap, uncertain. Back: residues 0.090, 0.094 and faint
  // fills 0.132, 0.136: over both sides a gap of 0.038 below it, and 0.140 is a fill by the
  // usual limit (0.135).
  const front = readSide([...MIXED_FILLS, grey(0.14)], 'front');
  const back = readSide(GAP_BACK, 'back');
  assert.deepEqual(states(front).slice(6), ['uncertain']);
  const [f] = poolStudent([front, back]);
  assert.deepEqual(states(f!).slice(6), ['filled']);
  // The other order (scan order may put any side first) gives the same.
  assert.deepEqual(states(poolStudent([back, front])[1]!).slice(6), ['filled']);
  // One of 0.128 is a fill only from the wide limit (0.125), where the front's own greys run up
  // to the gap (or, on even paper, the greys of the student's sides of even paper): alone beside
  // it, uncertain; with a neighbour of its own a small step away, filled.
  assert.deepEqual(states(poolStudent([readSide([...MIXED_FILLS, grey(0.128)], 'front'), back])[0]!).slice(6), [
    'uncertain',
  ]);
  const single = readSide([...MIXED_FILLS, grey(0.128)], 'front');
  assert.deepEqual(
    states(
      poolStudent([
        { ...single, quality: EVEN },
        { ...back, quality: EVEN },
      ])[0]!,
    ).slice(6),
    ['filled'],
  );
  const pair = readSide([...MIXED_FILLS, grey(0.128), grey(0.131)], 'front');
  assert.deepEqual(states(pair).slice(6), ['uncertain', 'uncertain']);
  assert.deepEqual(states(poolStudent([pair, back])[0]!).slice(6), ['filled', 'filled']);
});

test('only uncertain areas change: the JSON of a stored reading is enough, and decided areas stay as they are', () => {
  const front = readSide(RESIDUE_FRONT, 'front');
  const back = readSide(GAP_BACK, 'back');
  // A decided area whose evidence would now read otherwise is never touched: mark it "filled"
  // while the residue's evidence stays in `open` (as if a later rule had decided it).
  const forced: Ok = {
    ...front,
    areas: front.areas.map((a, i) => (i === 6 ? { ...a, state: 'filled', score: 1 } : a)),
  };
  assert.deepEqual(states(poolStudent([forced, back])[0]!), states(forced));
  const stored = JSON.parse(JSON.stringify([front, back])) as PageReading[];
  assert.deepEqual(states(poolStudent(stored)[0]!).slice(6), ['empty', 'filled', 'empty']);
});

test('nothing changes with one side, below 150 dpi, without evidence, or when the student is not a mixed hand', () => {
  const frontEv = RESIDUE_FRONT;
  const backEv = GAP_BACK;
  const front = readSide(frontEv, 'front');
  assert.notDeepEqual(
    states(poolStudent([front, readSide(backEv, 'back')])[0]!),
    states(front),
    'with both: judged again',
  );
  assert.deepEqual(states(poolStudent([front])[0]!), states(front), 'one side alone: as judged');
  // At 100 dpi a faint fill can measure as low as a residue: no split there, nothing kept open.
  const low = readSide(frontEv, 'front', LEVELS_100);
  assert.equal(low.evidence?.open, undefined);
  assert.deepEqual(states(poolStudent([low, readSide(backEv, 'back', LEVELS_100)])[0]!), states(low));
  // Readings without evidence (an older recognizer's, stored before) take no part.
  const { evidence: _drop, ...bare } = readSide(backEv, 'back');
  assert.deepEqual(states(poolStudent([front, bare])[0]!), states(front));
  // A student whose sides together are one dark, even hand (the back's many even pencil fills
  // outweigh the front's few pen fills) is no mixed hand: nothing changes.
  const even = readSide(
    [
      ...[0.45, 0.46, 0.47, 0.48, 0.46, 0.45, 0.47, 0.46, 0.45, 0.47, 0.48, 0.46, 0.45, 0.47].map(grey),
      grey(0.11),
      grey(0.114),
      grey(0.152),
    ],
    'back',
  );
  // (A front of pen and pencil fills and the residue, without the light fill.)
  const few = readSide([...MIXED_FILLS, grey(0.108), empty()], 'front');
  assert.equal(states(few)[6], 'uncertain');
  assert.equal(fillsOf([...few.evidence!.marks, ...even.evidence!.marks].sort((a, b) => a - b)).hand, 'dark');
  assert.deepEqual(states(poolStudent([few, even])[0]!), states(few));
  // Blank and unreadable pages are passed through.
  const blank: PageReading = { status: 'blank', ms: 1 };
  assert.deepEqual(poolStudent([blank, front]), [blank, front]);
});

test('the assembler reports a finished student with its sides judged together', () => {
  const layout = duplexLayout([9, 11]);
  const front: Ok = { ...readSide(RESIDUE_FRONT, 'front'), qrcode: 'q', student_id: 'S1' };
  const back = readSide(GAP_BACK, 'back');
  const a = new StudentAssembler(createLayoutSet([layout]));
  a.push({ paper_number: 1, page_number: 1, front: true, item_id: 1 }, front);
  a.push({ paper_number: 1, page_number: 2, front: false, item_id: 1 }, back);
  const [r] = a.end();
  assert.equal(r!.error_code, 0);
  // Front: fills 1-6 and the light fill 8; its residue 7 (uncertain alone) is empty. Back: fills
  // 1-6 and the faint fills 9 and 10; its residues 7 and 8 empty.
  assert.deepEqual(r!.result!.fills, [
    [1, 2, 3, 4, 5, 6, 8],
    [1, 2, 3, 4, 5, 6, 9, 10],
  ]);
  assert.deepEqual(r!.result!.uncertain, [[], []]);
});

test("a faint fill that a side of dark, even fills called residue is judged again as the mixed student's", () => {
  // Generator C's tuning card that showed it (docs/cards.md, section 8, "Generator C, fourth
  // round"): a front of pen and pencil fills whose lightest was 0.474, read as one dark hand, with
  // a faint pencil fill of 0.151 called an eraser's residue (empty); the student's other side
  // holds light fills and residues of its own.
  const front = readSide(
    [...[0.47, 0.54, 0.55, 0.59, 0.88, 0.93].map(grey), grey(0.151), grey(0.09), empty()],
    'front',
  );
  assert.equal(front.evidence!.open?.fills.hand, 'dark');
  assert.deepEqual(states(front).slice(6), ['empty', 'empty', 'empty']);
  const back = readSide(
    [...[0.2, 0.22, 0.25, 0.28, 0.44, 0.53, 0.53, 0.84, 0.9, 0.92].map(grey), grey(0.088), grey(0.08), empty()],
    'back',
  );
  assert.equal(fillsOf([...front.evidence!.marks, ...back.evidence!.marks].sort((a, b) => a - b)).hand, 'mixed');
  // Against the student's gap (0.088 to 0.151) the faint fill is a fill; the residue and the paper stay empty.
  const [f] = poolStudent([front, back]);
  assert.deepEqual(states(f!).slice(6), ['filled', 'empty', 'empty']);
  // Where the student's greys run through the band in small steps (no gap) it is not called either way: uncertain.
  const noGap = readSide(
    [
      ...[0.2, 0.22, 0.25, 0.28, 0.44, 0.53, 0.53, 0.84, 0.9, 0.92].map(grey),
      ...[0.1, 0.112, 0.124, 0.136, 0.148].map(grey),
    ],
    'back',
  );
  assert.equal(states(poolStudent([front, noGap])[0]!)[6], 'uncertain');
  // A student whose every side is one dark, even hand keeps its residue as its side read it.
  const dark = readSide([...[0.47, 0.54, 0.55, 0.59, 0.6, 0.62, 0.58].map(grey), grey(0.13), empty()], 'back');
  assert.deepEqual(states(poolStudent([front, dark])[0]!).slice(6), ['empty', 'empty', 'empty']);
});

test("an area the page's condition made uncertain is not judged again for the student by its evidence alone", () => {
  // Generator C's heavy bleed-through at 300 dpi (docs/cards.md, section 8, "Generator C, fourth
  // round"): the other side's fill showing through as a 2.3 mm² patch 0.19 darker than the paper,
  // on an empty area of a mixed side. Its evidence alone calls it a light half fill (filled); the
  // page's strong show-through made it uncertain (speck-spots.ts). The student's second look,
  // which has a gap to judge with, must leave it so.
  const patch: MarkEvidence = { solid: 0.016, peak: 0.061, stroke: 0, cover: 0, blob: 2.3, blobContrast: 0.188 };
  const ev = [...MIXED_FILLS, grey(0.108), patch, empty()];
  const alone = readSide(ev, 'front');
  assert.deepEqual(states(alone).slice(6), ['uncertain', 'filled', 'empty']);
  const final = alone.areas.map((a, i) => (i === 7 ? { ...a, state: 'uncertain' as const } : a));
  const e = alone.evidence!;
  const side = (withAlone: boolean): Ok => ({
    ...alone,
    areas: final,
    evidence: sideEvidence(
      e.marks,
      e.greys,
      e.open!.fills,
      e.open!.levels,
      final.map((a) => a.state),
      ev,
      ev.map(() => false),
      undefined,
      withAlone ? alone.areas.map((a) => a.state) : undefined,
    ),
  });
  const back = readSide(GAP_BACK, 'back');
  // The residue (uncertain by its own evidence) is still judged again; the patch stays uncertain.
  assert.deepEqual(states(poolStudent([side(true), back])[0]!).slice(6), ['empty', 'uncertain', 'empty']);
  // Judged by its evidence alone, as before this rule, it would be read filled: a silent error.
  assert.deepEqual(states(poolStudent([side(false), back])[0]!).slice(6), ['empty', 'filled', 'empty']);
});

test('a uniform grey that a side of dark, even fills left uncertain (above its residue, under 0.2) stays uncertain for a mixed student', () => {
  // The fifth round judged such greys again as the mixed student's (faint pencil fills of 0.160
  // and 0.164 on C's office-grade tuning pages at 150 dpi, read filled from 0.155); on C's
  // office-grade evaluation pages at 200 dpi that read an eraser's residue filled (docs/cards.md,
  // section 8, "Generator C, sixth round"): on a dark side a residue measures as dark as a faint
  // fill there, and the student's other sides do not tell which it is.
  const front = readSide(
    [...[0.47, 0.54, 0.55, 0.59, 0.88, 0.93].map(grey), grey(0.162), grey(0.13), empty()],
    'front',
  );
  assert.equal(front.evidence!.open?.fills.hand, 'dark');
  assert.deepEqual(states(front).slice(6), ['uncertain', 'empty', 'empty']);
  assert.deepEqual(
    front.evidence!.open!.areas.map((a) => a.i),
    [7],
    'only the residue it called empty is open to the second look',
  );
  const back = readSide(
    [...[0.2, 0.22, 0.25, 0.28, 0.44, 0.53, 0.53, 0.84, 0.9, 0.92].map(grey), grey(0.088), grey(0.08), empty()],
    'back',
  );
  assert.equal(fillsOf([...front.evidence!.marks, ...back.evidence!.marks].sort((a, b) => a - b)).hand, 'mixed');
  // The student mixes instruments; the grey of 0.162 is not filled (it would be from 0.155 as a mixed hand's).
  assert.equal(states(poolStudent([front, back])[0]!)[6], 'uncertain');
  // With a student of one dark, even hand, likewise.
  const dark = readSide([...[0.47, 0.54, 0.55, 0.59, 0.6, 0.62, 0.58].map(grey), grey(0.13), empty()], 'back');
  assert.equal(states(poolStudent([front, dark])[0]!)[6], 'uncertain');
});

test("the student's second look fills no area the page's condition would not let be filled", () => {
  // Generator C's tuning pages with heavy bands at 150 dpi (docs/cards.md, section 8, "Generator
  // C, fifth round"): a stray mark's area on a banded page read as a uniform grey of 0.165,
  // which a dark side leaves uncertain, its page would not let be filled (its ring), and a mixed
  // student's second look would fill.
  const evs = [...[0.47, 0.54, 0.55, 0.59, 0.88, 0.93].map(grey), grey(0.165), grey(0.151), empty()];
  const back = readSide(
    [...[0.2, 0.22, 0.25, 0.28, 0.44, 0.53, 0.53, 0.84, 0.9, 0.92].map(grey), grey(0.088), grey(0.08), empty()],
    'back',
  );
  // (Since the sixth round a dark side's uncertain grey is not judged again at all; the residue
  // it called empty still is.)
  const free = readSide(evs, 'front');
  assert.deepEqual(states(poolStudent([free, back])[0]!).slice(6), ['uncertain', 'filled', 'empty']);
  const held = readSide(evs, 'front', LEVELS_200, [...evs.map(() => false).slice(0, 6), true, true, false]);
  assert.deepEqual(states(held).slice(6), ['uncertain', 'empty', 'empty']);
  // Neither the uncertain grey nor the residue (empty on its side) is filled: both uncertain.
  assert.deepEqual(states(poolStudent([held, back])[0]!).slice(6), ['uncertain', 'uncertain', 'empty']);
});

test("a side of too few fills to know its hand is judged again as the mixed student's, against the student's gap", () => {
  // Generator C's scratch tuning pages at 300 dpi (docs/cards.md, section 8, "Generator C, ninth
  // round"): the quiz's second sheet carries a few areas; with under six uniform fills its hand is
  // unknown and a faint fill of 0.148 there is uncertain, while the student's other sheets show a
  // wide gap between their residues and their faint fills, below it.
  const short = readSide([grey(0.8), grey(0.45), grey(0.148), empty()], 'front');
  assert.equal(fillsOf(short.evidence!.marks).hand, 'unknown');
  assert.deepEqual(states(short).slice(2), ['uncertain', 'empty']);
  const back = readSide([...MIXED_FILLS, grey(0.09), grey(0.094), grey(0.132), grey(0.136), empty()], 'back');
  assert.deepEqual(states(poolStudent([short, back])[0]!).slice(2), ['filled', 'empty']);
  assert.deepEqual(states(poolStudent([back, short])[1]!).slice(2), ['filled', 'empty'], 'in either order');
  // And a residue of 0.108 there is empty against the student's gap above it.
  const shortResidue = readSide([grey(0.8), grey(0.45), grey(0.108), empty()], 'front');
  assert.deepEqual(states(shortResidue).slice(2), ['uncertain', 'empty']);
  const back2 = readSide([...MIXED_FILLS, grey(0.105), grey(0.11), grey(0.15), grey(0.155), empty()], 'back');
  assert.deepEqual(states(poolStudent([shortResidue, back2])[0]!).slice(2), ['empty', 'empty']);
  // Without a gap among the student's greys, or with a student who is not a mixed hand, it stays.
  const noGap = readSide([...MIXED_FILLS, empty()], 'back');
  assert.deepEqual(states(poolStudent([short, noGap])[0]!).slice(2), ['uncertain', 'empty']);
  const even = readSide(
    [...[0.45, 0.46, 0.47, 0.48, 0.46, 0.45, 0.47, 0.46, 0.45, 0.47].map(grey), grey(0.09), grey(0.13), empty()],
    'back',
  );
  assert.notEqual(fillsOf([...short.evidence!.marks, ...even.evidence!.marks].sort((a, b) => a - b)).hand, 'mixed');
  assert.deepEqual(states(poolStudent([short, even])[0]!).slice(2), ['uncertain', 'empty']);
});
