// A student's sides are one hand: thresholds adapt per page and per student (docs/cards.md).
// Each side is judged alone first (mark-classifier.ts); a side of mixed instruments leaves an
// area uncertain when its own greys show no trusted gap between the student's erasures and
// faint fills. All of the student's sides together hold more of those greys, so the gap is found
// (and found wide) more often; whether the greys run up to it, which lets the gap reach further,
// is asked of each side's own greys, or of the greys of every side of even paper where the side
// is one (mark-classifier.ts, `runsOn`). When the student is finished
// (StudentAssembler), the areas each side left uncertain are judged again against the gap of
// all its sides; on such a side only uncertain areas can change, and only to filled or empty. A side that looked
// like one dark, even hand called its faint uniform greys an eraser's residue: when the student's
// sides together are of mixed instruments, those greys are judged again as a mixed hand's (the
// fourth round on generator C, docs/cards.md, section 8): filled, empty or uncertain. A side with
// too few uniform fills to know its hand (a short sheet) judges its uncertain areas again as the
// mixed student's, against the student's gap (the ninth round).
import {
  classify,
  fillsOf,
  runsOn,
  solidLimits,
  splitOf,
  THRESHOLDS,
  type AreaState,
  type PageFills,
} from './mark-classifier.ts';
import type { MarkEvidence } from './mark-evidence.ts';
import type { PageLevels } from './page-levels.ts';
import type { PageReading } from './page-recognizer.ts';

/** What a side keeps for its student's second look. Plain data: it crosses worker boundaries and is stored as JSON. */
export interface SideEvidence {
  /** The side's uniform marks from `lightFloor` up, sorted (mark-classifier `uniformMarks`). */
  marks: number[];
  /** The side's uniform greys that may part residue from faint fills, sorted (`splitGreys`). */
  greys: number[];
  /**
   * Present on a side of mixed instruments, or of too few uniform fills to know its hand
   * ('unknown'), at 150 dpi or more that left areas uncertain, and on a dark hand's side at
   * 150 dpi or more that called uniform greys above the empty threshold an eraser's residue
   * (empty): what they need to be judged again.
   */
  open?: {
    fills: PageFills;
    levels: PageLevels;
    /**
     * Per such area: its index in the side's areas, its evidence, whether the other side's print
     * is behind it, and (`noFill`) whether the page's condition would not let it be filled.
     */
    areas: Array<{ i: number; ev: MarkEvidence; behind: boolean; noFill?: boolean }>;
  };
}

/**
 * The side's evidence for its student (see SideEvidence). Areas marked in `apart` (those with the
 * other side's QR code taken out, show-through.ts) are not judged again: the gap between residue
 * and faint fills does not judge them on their own side either. Nor are those whose state differs
 * from `alone`, what their evidence alone decided (`classify`): the page's condition overruled it
 * (a speck, the other side showing through, a ring on a guess, ink spreading; page-recognizer.ts),
 * and the student's second look, which judges an area by its evidence alone, would undo that. On
 * generator C's heavy bleed-through at 300 dpi (scratch seeds) the other side's fills showing
 * through as patches, uncertain on their page, were read filled by it: 24 empty areas on 68
 * cards (docs/cards.md, section 8, "Generator C, fourth round"). Likewise an area the page's
 * condition would not let be filled (`noFill`) is not filled by it: it stays or becomes
 * uncertain (the fifth round: on C's tuning pages with heavy bands at 150 dpi a stray mark's area
 * read as a dark side's uniform grey of 0.165, uncertain, which a mixed student's second look
 * would fill and its ring of paper would not; the evaluation's heavy bands across at 150 dpi
 * showed a stray mark read filled once such greys were judged again, docs/cards.md, section 8).
 */
export function sideEvidence(
  marks: number[],
  greys: number[],
  fills: PageFills,
  levels: PageLevels,
  states: readonly AreaState[],
  evidence: readonly MarkEvidence[],
  behind: readonly boolean[],
  apart?: readonly boolean[],
  alone?: readonly AreaState[],
  noFill?: readonly boolean[],
): SideEvidence {
  const out: SideEvidence = { marks, greys };
  if (fills.hand !== 'light' && levels.pxmm >= THRESHOLDS.lowResPxMm) {
    const { emptySolid } = solidLimits(levels);
    // A dark side's uniform greys that it left uncertain (above the residue it calls empty, under
    // 0.2) are not judged again: an eraser's residue measures as dark as a faint fill there. The
    // fifth round judged them again as the mixed student's (two faint fills of 0.160 and 0.164 on
    // C's office-grade tuning pages at 150 dpi read filled); on C's office-grade evaluation pages
    // at 200 dpi (13 cards) that read one erasure filled, a silent error (docs/cards.md, section
    // 8, "Generator C, sixth round"). They stay uncertain.
    // A side with too few uniform fills to know its hand (a short sheet: 'unknown') keeps its
    // uncertain areas as a mixed side does (docs/cards.md, section 8, "Generator C, ninth round").
    const open = (s: AreaState, e: MarkEvidence) =>
      fills.hand === 'dark' ? s === 'empty' && e.solid >= emptySolid : s === 'uncertain';
    const areas = states.flatMap((s, i) =>
      open(s, evidence[i]!) && !apart?.[i] && (!alone || alone[i] === s)
        ? [{ i, ev: evidence[i]!, behind: behind[i]!, ...(noFill?.[i] ? { noFill: true } : {}) }]
        : [],
    );
    if (areas.length > 0) out.open = { fills, levels, areas };
  }
  return out;
}

type Ok = Extract<PageReading, { status: 'ok' }>;

/**
 * A student's sides (any order), with the areas that each side of mixed instruments left
 * uncertain judged again against the gap between residue and faint fills found among the greys
 * of all its sides, when all of them together are a mixed hand. Returns new readings where
 * something changed, the same objects elsewhere; sides without evidence (other layouts' pages,
 * readings of older versions) only take no part.
 */
export function poolStudent<R extends PageReading>(readings: readonly R[]): R[] {
  const sides = readings.filter((r): r is R & Ok => r.status === 'ok' && r.evidence !== undefined);
  if (sides.length < 2 || !sides.some((r) => r.evidence!.open)) return [...readings];
  const merged = (pick: (e: SideEvidence) => number[]) => sides.flatMap((r) => pick(r.evidence!)).sort((a, b) => a - b);
  const student = fillsOf(merged((e) => e.marks));
  if (student.hand !== 'mixed') return [...readings];
  const split = splitOf(merged((e) => e.greys));
  // Sides whose areas were judged against the paper map alone (no band or step measured:
  // `PageQuality.local` 0): their greys went through one paper's measure, as one page's do, and
  // may run up to the student's gap together. Where the page's paper changes (bands, a shadow's
  // edge), an area's grey carries the error of its ring's paper: on generator C's scratch seed
  // 4 601 502 (heavy bands across, 150 dpi) a band's edges ran just outside an area's outline,
  // its ring's upper and lower sides read the lighter paper beyond, and an eraser's residue of
  // about 0.09 measured 0.132; beside another side's faint fill of 0.133 it read filled
  // (docs/cards.md, section 8, "Generator C, seventeenth round"). Such a side's greys run only
  // with its own.
  const even = (r: Ok) => r.quality?.local === 0;
  const evenGreys = sides
    .filter(even)
    .flatMap((r) => r.evidence!.greys)
    .sort((a, b) => a - b);
  return readings.map((r) => {
    if (r.status !== 'ok' || !r.evidence?.open) return r;
    const { fills, levels, areas: open } = r.evidence.open;
    // A dark side's residue greys are judged as the mixed student's, with or without a gap (its
    // faint fills measure as an eraser's residue there: on generator C's tuning pages a faint
    // pencil fill of 0.151 on a side of pen and pencil fills whose lightest was 0.474);
    // a mixed side's uncertain areas only against a gap.
    const dark = fills.hand === 'dark';
    // A side of too few uniform fills to know its hand is judged as the student's, a mixed hand,
    // against the student's gap (its uniform fills, few as they are, count among the student's).
    const asStudent = dark || fills.hand === 'unknown';
    if (!dark && !split) return r;
    // The student's gap, with the greys running up to it looked for on this side (`runsOn`), or
    // on every side of even paper where this one is too.
    const own = split && runsOn(split, even(r) ? evenGreys : r.evidence.greys);
    let areas: Ok['areas'] | undefined;
    for (const o of open) {
      const a = r.areas[o.i];
      if (a?.state !== 'uncertain' && !(dark && a?.state === 'empty')) continue;
      const d = classify(o.ev, levels, asStudent ? { hand: 'mixed', level: student.level } : fills, own, o.behind);
      // A fill the page's condition would not let its evidence make is uncertain (fifth round).
      if (d.state === 'filled' && o.noFill) d.state = 'uncertain';
      if (d.state === a.state) continue;
      areas ??= [...r.areas];
      areas[o.i] = { ...a, state: d.state, score: d.score };
    }
    return areas ? { ...r, areas } : r;
  });
}
