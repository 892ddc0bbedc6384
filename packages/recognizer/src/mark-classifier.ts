// Filled, empty or uncertain (docs/cards.md, "How recognition works"), from an area's evidence
// (mark-evidence.ts) measured against the page's own levels (page-levels.ts) and, between the
// clear cases, against how this student fills: a person reads a faint grey as an erasure on a
// page of dark, even fills and as a fill from a light hand. Nothing is guessed: what is left
// between "clearly empty" and "clearly filled" is uncertain.
import type { MarkEvidence } from './mark-evidence.ts';
import { quantile, type PageLevels } from './page-levels.ts';

export type AreaState = 'filled' | 'empty' | 'uncertain';

export const THRESHOLDS = {
  /** Mean darkness above baseline: clearly filled from, clearly empty below (at 150 dpi and more; below, `emptySolidLowRes`). */
  filledSolid: 0.155,
  emptySolid: 0.105,
  emptySolidLowRes: 0.075,
  /** Below this resolution (px/mm, 150 dpi) a faint fill can measure as low as half its darkness. */
  lowResPxMm: 5.5,
  /** Stroke length (mm): a stroke from, nothing below. */
  filledStroke: 1.9,
  emptyStroke: 0.9,
  /** On a dark hand's page below 150 dpi (or behind the other side's print), a stroke shorter than this whose area peaks under `faintPeak` does not decide by itself… */
  shortStroke: 2.6,
  faintPeak: 0.25,
  /**
   * …and whatever its length, one in an area of a grey above the empty threshold whose darkest
   * tenth is under this many times its mean: a uniform grey's noise (residues measured 1.35-1.56
   * on A's tuning pages; thin ticks 2.5 and more, one of 1.56 with a mean of 0.075).
   */
  uniformPeak: 1.7,
  /** Inner area covered by stroke-dark samples: nothing below. */
  emptyCover: 0.04,
  /**
   * A patch of at least `filledBlob` mm², `filledBlobContrast` darker than the area's paper, is a
   * mark; a patch of `emptyBlob` mm² and `emptyBlobContrast` keeps an area from being empty, and
   * so does a faint one over `wideBlob` mm² (a light half fill) except on a dark hand's page,
   * where such a patch is the other side showing through.
   */
  filledBlob: 1.5,
  filledBlobContrast: 0.17,
  emptyBlob: 0.8,
  emptyBlobContrast: 0.125,
  wideBlob: 4,
  wideBlobContrast: 0.1,
  /**
   * A light hand's patch counts from this contrast (show-through of the other side's print
   * reaches about 0.12), and so does a wide patch behind the other side's QR code or barcode.
   */
  lightBlobContrast: 0.14,
  /** Behind the other side's QR code or barcode a light hand's uniform grey is a fill from this much above its usual threshold (the print's show-through). */
  behindPrintAllowance: 0.04,
  /**
   * A light hand: the median of the page's uniform marks from `lightFloor` up is below
   * `lightHand`; its uniform marks then count as fills from `lightFactor` of that median (and
   * from `lightMin`, below the usual empty threshold: the lightest hands fill at 0.09–0.11), and
   * as empty only below `lightEmpty` of it. On A's tuning pages its fills measure at least 0.72
   * of that median, its erasures and show-through at most 0.52 (0.58 behind the other side's
   * print, where `behindPrintAllowance` applies).
   */
  lightFloor: 0.11,
  lightHand: 0.32,
  /** …and the upper quarter of them under this: a quarter of a pen's or dark pencil's fills (0.45 and darker) is no light hand. */
  lightUpper: 0.45,
  lightFactor: 0.55,
  lightMin: 0.09,
  lightEmpty: 0.6,
  /**
   * A light hand's faint dot or half fill can measure as little as an empty area's mean, but
   * the darkest tenth of it stays near the hand's own darkness: from `lightTrace` of the hand's
   * median it is not called empty (on A's tuning pages such marks peak from 0.83 of it, empty
   * areas and residue mostly under 0.75).
   */
  lightTrace: 0.75,
  /**
   * Behind the other side's QR code or barcode that print's blotchy show-through darkens the
   * darkest tenth too: there from this much of the hand's median (on A's tuning pages empty
   * areas there reach 0.93 of it, a light hand's fills, dots and half fills start at 0.99).
   */
  lightTraceBehind: 0.95,
  /**
   * Not on a dark hand's page, a patch of `faintBlob` mm² at least `wideBlobContrast` darker
   * than its paper is never empty (a light dot measures 0.10-0.11 there, as the other side's
   * show-through does); behind the other side's QR code or barcode only a wide one over an area
   * whose mean is at least `faintBlobSolidBehind` (the print's show-through stays under 0.065).
   * Elsewhere a patch only `faintPatchContrast` darker keeps an area from being empty when the
   * area's mean is at least `faintPatchSolid` (a 0.15 half fill: 0.10 and 0.09; on A's tuning
   * pages empty areas with such patches measure at most 0.053).
   */
  faintBlob: 2.5,
  /**
   * Below 150 dpi a small light dot's patch measures smaller: from this size. Set after A's
   * evaluation pages showed one such dot (2.48 mm², 0.116) read empty at 100 dpi; on A's tuning
   * pages at 100 dpi (106 000 areas) it makes 4 empty areas uncertain and none wrong.
   */
  faintBlobLowRes: 1.5,
  faintBlobSolidBehind: 0.075,
  faintPatchContrast: 0.08,
  faintPatchSolid: 0.07,
  /**
   * A light hand's patch of `faintBlob` mm² (150 dpi and more, not behind the other side's
   * print) is a fill when its contrast is at least `lightPatchFactor` of the hand's median (and
   * `lightPatchMin`) and the area's darkest tenth at least `lightPatchPeak` of it. On A's tuning
   * pages empty areas of light hands reach 0.66 and 0.84 of it, never both.
   */
  lightPatchMin: 0.11,
  lightPatchFactor: 0.8,
  lightPatchPeak: 0.9,
  /**
   * On a page of mixed instruments or a light hand's (150 dpi and more, not behind the other
   * side's print), a patch of `faintBlob` mm² this much darker than the area's paper is a light
   * half fill or dot: on A's tuning pages empty areas' patches of that size reach 0.113 there.
   */
  mixedBlobContrast: 0.125,
  /**
   * A dark hand: the page's clear fills cluster at least `darkHand` dark and evenly (their first
   * quartile at least `darkEven` of their third: one instrument, not pen here and pencil there),
   * with hardly any uniform mark lighter than half their median yet darker than an eraser leaves
   * of the lightest fill (`residueFactor` of it): at most `darkOutliers` of them, or that share.
   * The student's own erasures do not count against the hand; a faint or light fill does. Uniform grey on such a page is what an eraser leaves: empty
   * below `residueFactor` of its lightest fill (at most `residueEmpty`; below 150 dpi, where a
   * faint fill can measure lower, `residueEmptyLowRes`), and never "filled" below `residueMax`:
   * uncertain instead.
   */
  darkHand: 0.3,
  darkEven: 0.75,
  darkOutliers: 2,
  darkOutlierShare: 0.08,
  residueFactor: 0.38,
  residueEmpty: 0.16,
  residueEmptyLowRes: 0.1,
  residueMax: 0.2,
  /** Uniform fills needed before a page's own fills are trusted. */
  minFills: 6,
  /**
   * A page of mixed instruments: its uniform marks from `splitFrom` to `splitTo` dark, sorted,
   * and the widest gap between neighbours whose middle lies from `splitLow` to `splitHigh`. When
   * that gap is at least `splitGap` wide, the page's erasures lie below it and its faint fills
   * above it (one scan, one tone curve, one paper for both): band areas below the gap and at
   * most `splitEmptyMax` are empty, above it and at least `splitFilledMin` filled; the rest
   * stays uncertain. Not below 150 dpi, where a faint fill can measure as low as a residue.
   */
  splitFrom: 0.04,
  splitTo: 0.3,
  splitLow: 0.11,
  splitHigh: 0.145,
  splitGap: 0.015,
  splitEmptyMax: 0.11,
  splitFilledMin: 0.135,
  /**
   * The fill side only from a gap this wide: on A's tuning pages a narrower one (0.0197) was found
   * between a page's residues, two of them (0.127, 0.135) above it.
   */
  splitFillGap: 0.02,
  /**
   * A gap at least `splitWideGap` wide (its middle may then lie from `splitWideLow`: a page whose
   * faint fills measure 0.12-0.14 and residues under 0.09) is trusted further on a side where the
   * page's greys run up to it in steps of at most `splitRunStep` of the gap (they form one
   * cluster: the page's residues below, its faint fills above): there band areas below it are
   * empty up to `splitWideEmptyMax`, above it filled from `splitWideFilledMin`. A grey alone
   * next to the gap, far from the others on its side, could belong to either, and a second gap
   * as wide from `splitWideLow` to `splitWideHigh` leaves open which gap parts the two: then the
   * usual limits hold.
   */
  splitWideGap: 0.03,
  splitWideLow: 0.095,
  splitWideHigh: 0.16,
  splitRunStep: 0.3,
  splitWideEmptyMax: 0.125,
  splitWideFilledMin: 0.125,
  /**
   * A page of low contrast: under `lowContrast` grey levels from paper to print, a faint pencil
   * fill measures as light as an eraser's residue. On generator C's scratch pages of heavy low
   * contrast at 300 dpi (75-82 levels) mixed students' faint fills measured 0.098-0.106 and were
   * read empty, under the empty threshold or below the page's gap; at full contrast none measured
   * under 0.111, and on pages of 100-150 levels none under 0.12. There a uniform grey on a side
   * of mixed instruments (or too few fills to know its hand) is empty only below
   * `lowContrastEmpty`, a fifth under the lightest faint fill seen: above it, by the empty
   * threshold or by the gap, it is uncertain (docs/cards.md, section 8, "Generator C, fifteenth
   * round"). 120 levels, not 150: generator A's pages reach down to 118 levels, and from 150
   * its mixed pages' erasures went to review (7 more areas uncertain on A's tuning pages);
   * heavy shadows reach under 120 too (down to 78).
   */
  lowContrast: 120,
  lowContrastEmpty: 0.08,
} as const;

/** How this student fills, from the page's uniform marks (fills, not strokes). */
export interface PageFills {
  /** 'dark': one hand, dark and even; 'light': a light hand; 'mixed': neither; 'unknown': too few fills. */
  hand: 'dark' | 'light' | 'mixed' | 'unknown';
  /** Dark hand: its lightest clear fill. Light hand: the median of its uniform marks. */
  level: number;
}

export function pageFills(ev: readonly MarkEvidence[]): PageFills {
  return fillsOf(uniformMarks(ev));
}

/** The darkness of a page's uniform marks (fills, not strokes) from `lightFloor` up, sorted: what `pageFills` judges. */
export function uniformMarks(ev: readonly MarkEvidence[]): number[] {
  const T = THRESHOLDS;
  const uniform = ev.filter((e) => e.solid >= 0.6 * e.peak && (e.stroke < T.emptyStroke || e.solid >= T.filledSolid));
  return uniform
    .map((e) => e.solid)
    .filter((v) => v >= T.lightFloor)
    .sort((a, b) => a - b);
}

/** How a hand fills, from its uniform marks (sorted; `uniformMarks`), of one page or of all of a student's sides. */
export function fillsOf(marks: readonly number[]): PageFills {
  const T = THRESHOLDS;
  if (marks.length < T.minFills) return { hand: 'unknown', level: 0 };
  const median = quantile(marks, 0.5);
  // A light hand fills lightly: not a page whose upper quarter of uniform marks is a pen's or a
  // dark pencil's (`lightUpper`). On C's scratch card 6 102 010 at 300 dpi (light bands along
  // the feed) a mixed student's side of four faint pencil fills (0.14-0.17), a half fill, a
  // pencil and a pen fill (0.52-0.86) had its median at 0.17 and, taken for a light hand, read an
  // eraser's residue of 0.096 filled, over 0.55 of that median (docs/cards.md, section 8,
  // "Generator C, fourteenth round").
  if (median < T.lightHand && quantile(marks, 0.75) < T.lightUpper) return { hand: 'light', level: median };
  const cluster = marks.filter((v) => v >= 0.5 * median);
  const outliers =
    cluster.length === 0
      ? marks.length
      : marks.filter((v) => v < 0.5 * median && v >= T.residueFactor * cluster[0]!).length;
  const even = quantile(cluster, 0.25) >= T.darkEven * quantile(cluster, 0.75);
  if (
    cluster.length >= T.minFills &&
    cluster[0]! >= T.darkHand &&
    even &&
    outliers <= Math.max(T.darkOutliers, T.darkOutlierShare * cluster.length)
  ) {
    return { hand: 'dark', level: cluster[0]! };
  }
  return { hand: 'mixed', level: median };
}

/** The page's uniform-grey limits: filled from `filledSolid`, empty below `emptySolid` (before its own fills move them). */
export function solidLimits(lv: PageLevels): { filledSolid: number; emptySolid: number } {
  const T = THRESHOLDS;
  const filledSolid = Math.max(T.filledSolid, lv.baseline + 8 * lv.spread);
  return {
    filledSolid,
    emptySolid: Math.min(lv.pxmm < T.lowResPxMm ? T.emptySolidLowRes : T.emptySolid, filledSolid - 0.03),
  };
}

/**
 * The decision. Strokes and dark patches are marks whatever the page. Uniform greyness is
 * judged against absolute thresholds, and between them against this page's own fills, as a
 * person would: on a page of dark, even fills a faint uniform grey is what an eraser leaves; for
 * a light hand a faint fill is a fill. What is left is uncertain, never guessed.
 */
export function classify(
  ev: MarkEvidence,
  lv: PageLevels,
  fills?: PageFills,
  split?: ResidueSplit | null,
  behindPrint = false,
): { state: AreaState; score: number } {
  const T = THRESHOLDS;
  const hand = fills?.hand ?? 'unknown';
  const lowRes = lv.pxmm < T.lowResPxMm;
  const { filledSolid, emptySolid } = solidLimits(lv);
  const score = Math.max(ramp(ev.solid, emptySolid, filledSolid), ramp(ev.stroke, T.emptyStroke, T.filledStroke));
  const uncertain = { state: 'uncertain' as const, score: Math.round(score * 100) / 100 };
  // On a dark hand's page a faint "stroke" may be no stroke: below 150 dpi, or behind the other
  // side's QR code or barcode, a short one can be noise or show-through grown through an
  // erasure's residue and its specks; and one in an area whose darkest tenth is hardly darker
  // than its mean is a uniform grey's noise (a line across an area leaves its darkest tenth
  // several times its mean). Neither decides by itself.
  const faintStroke =
    hand === 'dark' &&
    ev.peak < T.faintPeak &&
    (((lowRes || behindPrint) && ev.stroke < T.shortStroke) ||
      (ev.solid >= emptySolid && ev.peak < T.uniformPeak * ev.solid));
  if (
    (ev.stroke >= T.filledStroke && !faintStroke) ||
    (ev.blob >= T.filledBlob && ev.blobContrast >= T.filledBlobContrast)
  )
    return { state: 'filled', score: 1 };
  // Anything stroke-like or patchy keeps an area from being called empty.
  const trace = isTrace(ev, hand, behindPrint);
  // Such a faint "stroke" is no fill either: its area stays uncertain below `residueMax`, like
  // the residue it may have grown through (on A's tuning pages a residue of 0.158 at 100 dpi
  // with a 1.8 mm stroke of noise, and one of 0.178 at 200 dpi with 4 mm, were read filled).
  if (faintStroke && trace && ev.solid < T.residueMax) return uncertain;
  // A faint dot or half fill (a light hand's, or a light mark on a page of mixed instruments)
  // can be as faint as the other side showing through: not a trace that keeps it from being a
  // fill, but never empty.
  const keep =
    trace ||
    (hand === 'light' && ev.peak >= (behindPrint ? T.lightTraceBehind : T.lightTrace) * fills!.level) ||
    (hand !== 'dark' &&
      ev.blob >= (lowRes ? T.faintBlobLowRes : T.faintBlob) &&
      (behindPrint
        ? ev.blob >= T.wideBlob && ev.blobContrast >= T.wideBlobContrast && ev.solid >= T.faintBlobSolidBehind
        : ev.blobContrast >= T.wideBlobContrast ||
          (ev.blob >= T.faintBlob && ev.blobContrast >= T.faintPatchContrast && ev.solid >= T.faintPatchSolid)));
  if (hand === 'dark' && !trace) {
    if (ev.solid < Math.min(lowRes ? T.residueEmptyLowRes : T.residueEmpty, T.residueFactor * fills!.level))
      return { state: 'empty', score: 0 };
    if (ev.solid < T.residueMax) return ev.solid < emptySolid ? { state: 'empty', score: 0 } : uncertain;
  }
  // Behind the other side's QR code or barcode the paper lets through up to about 0.12 of
  // blotchy grey: residue plus that print reads as dark as a faint fill, so a grey there that
  // is neither a stroke nor a clear patch is not called filled below `residueMax`, except by a
  // light hand well above its own fills' threshold. Its wide patches are the print's too: they
  // count as a trace only from `lightBlobContrast`.
  const lightFrom =
    hand === 'light' ? Math.max(Math.min(emptySolid + 0.01, T.lightMin), T.lightFactor * fills!.level) : Infinity;
  // A mixed or unknown hand's faint fill on a page of low contrast measures as an erasure does
  // (`lowContrast`): empty only well below it.
  const faded = (hand === 'mixed' || hand === 'unknown') && (lv.contrast ?? Infinity) < T.lowContrast;
  const emptyBelow =
    hand === 'light'
      ? Math.min(emptySolid, T.lightEmpty * fills!.level)
      : faded
        ? Math.min(emptySolid, T.lowContrastEmpty)
        : emptySolid;
  if (behindPrint && !trace && ev.solid >= lightFrom + T.behindPrintAllowance) return { state: 'filled', score: 1 };
  if (behindPrint && ev.solid < T.residueMax)
    return !keep && ev.cover < T.emptyCover && ev.solid < emptyBelow ? { state: 'empty', score: 0 } : uncertain;
  if (ev.solid >= filledSolid) return { state: 'filled', score: 1 };
  if (hand === 'light') {
    const from = T.lightFactor * fills!.level;
    if (ev.solid >= lightFrom) return { state: 'filled', score: 1 };
    if (ev.blob >= T.filledBlob && ev.blobContrast >= Math.max(T.lightBlobContrast, from))
      return { state: 'filled', score: 1 };
    // A half fill or dot at the hand's own darkness: both its patch and its darkest tenth near it.
    const lv = fills!.level;
    if (
      !lowRes &&
      !behindPrint &&
      ev.blob >= T.faintBlob &&
      ev.blobContrast >= Math.max(T.lightPatchMin, T.lightPatchFactor * lv) &&
      ev.peak >= T.lightPatchPeak * lv
    )
      return { state: 'filled', score: 1 };
  }
  if (
    (hand === 'mixed' || hand === 'light') &&
    !lowRes &&
    ev.blob >= T.faintBlob &&
    ev.blobContrast >= T.mixedBlobContrast
  )
    return { state: 'filled', score: 1 };
  if (!keep && ev.cover < T.emptyCover && ev.solid < emptyBelow) return { state: 'empty', score: 0 };
  if (split && hand === 'mixed' && !lowRes && !trace) {
    if (
      !keep &&
      !faded &&
      ev.solid <= split.below &&
      ev.solid <= (split.belowRun ? T.splitWideEmptyMax : T.splitEmptyMax)
    )
      return { state: 'empty', score: 0 };
    if (
      ev.solid >= split.above &&
      split.above - split.below >= T.splitFillGap &&
      ev.solid >= (split.aboveRun ? T.splitWideFilledMin : T.splitFilledMin)
    )
      return { state: 'filled', score: 1 };
  }
  return uncertain;
}

/**
 * Every area of a side: `classify` with the page's gap between residue and faint fills, except
 * for the areas marked `apart` (the other side's QR code taken out of them, show-through.ts):
 * their greys went through one more measurement, common to all of them, and the gap does not
 * judge them.
 */
export function classifyAreas(
  ev: readonly MarkEvidence[],
  lv: PageLevels,
  fills: PageFills,
  split: ResidueSplit | null,
  behind: readonly boolean[],
  apart?: readonly boolean[],
): Array<{ state: AreaState; score: number }> {
  return ev.map((e, i) => classify(e, lv, fills, apart?.[i] ? null : split, behind[i]));
}

/** Anything stroke-like or patchy: never called empty, and not part of a page's uniform greys. */
function isTrace(ev: MarkEvidence, hand: PageFills['hand'], behindPrint = false): boolean {
  const T = THRESHOLDS;
  return (
    ev.stroke >= T.emptyStroke ||
    (ev.blob >= T.emptyBlob && ev.blobContrast >= T.emptyBlobContrast) ||
    (hand !== 'dark' &&
      ev.blob >= T.wideBlob &&
      ev.blobContrast >= (behindPrint ? T.lightBlobContrast : T.wideBlobContrast))
  );
}

/**
 * The gap between a mixed page's erasures (at most `below` dark) and its faint fills (at least
 * `above`); `wide`: the gap is wide enough to be trusted further (`splitWideGap`, and no second
 * gap as wide near it); `belowRun` / `aboveRun`: it is wide and the page's greys on that side
 * run up to it in small steps (`splitRunStep`), below it from greys the usual limit calls empty
 * (`runsOn`).
 */
export interface ResidueSplit {
  below: number;
  above: number;
  wide: boolean;
  belowRun: boolean;
  aboveRun: boolean;
}

/**
 * Where a page of mixed instruments separates residue from faint fills, or null. Across pages
 * the two overlap (tone curves, paper, gamma differ from scan to scan); on one page, measured
 * through one tone curve, an eraser's grey and a faint fill leave a gap, which is looked for
 * among the page's uniform marks (the clear fills above it included, so that a page without
 * faint fills finds its gap between the residue and the light fills).
 */
export function residueSplit(ev: readonly MarkEvidence[], fills: PageFills): ResidueSplit | null {
  if (fills.hand !== 'mixed') return null;
  return splitOf(splitGreys(ev));
}

/** A page's uniform greys that may part residue from faint fills, as on a mixed page, sorted: what `residueSplit` looks through. */
export function splitGreys(ev: readonly MarkEvidence[]): number[] {
  const T = THRESHOLDS;
  return ev
    .filter((e) => !isTrace(e, 'mixed') && e.solid >= 0.6 * e.peak && e.solid >= T.splitFrom && e.solid <= T.splitTo)
    .map((e) => e.solid)
    .sort((a, b) => a - b);
}

/** The gap among sorted greys (`splitGreys`) of one page or of all of a student's sides, or null. */
export function splitOf(vals: readonly number[]): ResidueSplit | null {
  const T = THRESHOLDS;
  let best = -1;
  for (let i = 1; i < vals.length; i++) {
    const mid = (vals[i - 1]! + vals[i]!) / 2;
    const width = vals[i]! - vals[i - 1]!;
    const inWindow = mid <= T.splitHigh && (mid >= T.splitLow || (mid >= T.splitWideLow && width >= T.splitWideGap));
    if (inWindow && (best < 0 || width > vals[best]! - vals[best - 1]!)) best = i;
  }
  // Between a page's only two greys a gap is just their distance: it says nothing of which is
  // an erasure. On generator C's scratch seed 5 101 036 (light bands across the feed, 200 dpi) a
  // dark, even hand's side held two erasures, 0.107 and 0.136 (the second counted among its
  // marks, so the side read as mixed): the gap between them read the second filled
  // (docs/cards.md, section 8, "Generator C, eighteenth round").
  if (best < 0 || vals.length < 3) return null;
  const below = vals[best - 1]!,
    above = vals[best]!,
    gap = above - below;
  if (gap < T.splitGap) return null;
  // Another wide gap near the band (two clusters of greys above the residue, or below the
  // fills) leaves open which of them parts residue from fills: then neither is trusted further.
  // Near: its middle up to `splitWideHigh` and its upper edge above `splitWideLow` (a gap reaching
  // into the band from below counts, not only one whose middle lies in it: generator C's tuning
  // seed 5 002 519, heavy bands along the feed at 200 dpi, greys 0.071 | 0.118 0.122 | 0.159, the
  // lower gap's middle at 0.0945; the upper one was trusted and the two faint fills between them
  // read empty; docs/cards.md, section 8, "Generator C, tenth round").
  let rivals = 0;
  for (let i = 1; i < vals.length; i++) {
    const mid = (vals[i - 1]! + vals[i]!) / 2;
    if (i !== best && vals[i]! - vals[i - 1]! >= T.splitWideGap && vals[i]! > T.splitWideLow && mid <= T.splitWideHigh)
      rivals++;
  }
  const wide = gap >= T.splitWideGap && rivals === 0;
  return runsOn({ below, above, wide, belowRun: false, aboveRun: false }, vals);
}

/**
 * Whether the greys run up to a wide gap (`ResidueSplit`'s `belowRun` / `aboveRun`) on `greys`
 * (sorted): a page's own, in `splitOf`, or, for a student's gap (`splitOf` over the greys of all
 * of its sides), one side's, in the student's second look (student-pool.ts). The run holds where
 * the nearest grey beyond the gap's edge lies within a small step (`splitRunStep` of the gap) of
 * the edge and its next one within a small step of that; below the gap, the run must go on in
 * such steps down to a grey the usual limit calls empty (`splitEmptyMax`).
 *
 * One side's own: one scan puts a page's residues and faint fills through one tone curve and one
 * paper, so on one page a grey beside the gap with a neighbour a small step away belongs to that
 * neighbour's cluster; a neighbour on another side came through another page's damage and tells
 * nothing of it. On generator C's scratch seed 4 601 502 (heavy bands across the feed, 150 dpi)
 * an eraser's residue measured 0.132 on a banded side, the edge of its student's gap (0.091 |
 * 0.132), beside another side's faint fill of 0.133: taken as one cluster with it, it read filled
 * (docs/cards.md, section 8, "Generator C, seventeenth round").
 *
 * Down to the usual limit: greys that run only with each other inside the band, where a faint
 * fill measures as an eraser's residue does, may be the lightest fills. On generator C's scratch
 * seed 6 111 538 (heavy geometry, 300 dpi) two faint pencil fills of 0.112 and 0.115, a small step
 * apart and 0.021 above the next grey (0.091), lay under a wide gap (0.115 | 0.150) and read
 * empty (docs/cards.md, section 8, "Generator C, eighteenth round"). Above the gap the run is not
 * asked to reach the usual fill limit (`splitFilledMin`): on C's tuning pages that cost faint
 * fills of 0.126-0.130 and no error was seen there.
 */
export function runsOn(split: ResidueSplit, greys: readonly number[]): ResidueSplit {
  const T = THRESHOLDS;
  const step = T.splitRunStep * (split.above - split.below);
  const up = greys.filter((g) => g >= split.above);
  const down = greys.filter((g) => g <= split.below).reverse();
  // The greys beyond the edge, nearest first: how many of them run on from it in small steps.
  const run = (v: number[], edge: number) => {
    if (v.length === 0 || Math.abs(v[0]! - edge) > step) return [];
    let k = 1;
    while (k < v.length && Math.abs(v[k]! - v[k - 1]!) <= step) k++;
    return v.slice(0, k);
  };
  const below = run(down, split.below);
  const above = run(up, split.above);
  return {
    ...split,
    belowRun: split.wide && below.length >= 2 && below.at(-1)! <= T.splitEmptyMax,
    aboveRun: split.wide && above.length >= 2,
  };
}

/**
 * Ink spreading into the paper (a printer's or copier's toner running) grows every printed
 * outline into its area: empty areas then show, along their rim, a patch as dark as a small light
 * mark or, at 150 dpi, where the grown outline is a thin arc on the sampled ellipse's edge, a
 * "stroke" of 1-3.6 mm. `rimShare` is the share of a page's quiet areas (a mean under
 * `rimQuietSolid`) with a stroke (`emptyStroke`) or a patch of `emptyBlob` mm² at least
 * `rimPatchContrast` darker than their paper; from `rimPatchPage` (and `rimQuietMin` quiet
 * areas) a fill not told by its mean is uncertain on that page. On generator C's tuning pages:
 * heavy ink spreading 0.15-0.87 at 150 dpi and 0.2-0.86 at 200 dpi; every other class up to
 * 0.095 (heavy toner) at 150 dpi and 0.15 (heavy bleed-through) at 200. Before strokes counted,
 * the share of one such page at 150 dpi was 0 and 17 of its empty areas read filled by their
 * arc (docs/cards.md, section 8, "Generator C, fourteenth round"); at 200 dpi one empty area read
 * filled by its 1.8 mm² patch at 0.176 before patches did.
 */
export const RIM = { rimQuietSolid: 0.03, rimPatchContrast: 0.15, rimPatchPage: 0.25, rimQuietMin: 10 } as const;

/** The share of a page's quiet areas with a stroke or a patch on them (`RIM`), or 0 with too few quiet areas. */
export function rimShare(ev: readonly MarkEvidence[]): number {
  const quiet = ev.filter((e) => e.solid < RIM.rimQuietSolid);
  if (quiet.length < RIM.rimQuietMin) return 0;
  const rim = quiet.filter(
    (e) =>
      e.stroke >= THRESHOLDS.emptyStroke || (e.blob >= THRESHOLDS.emptyBlob && e.blobContrast >= RIM.rimPatchContrast),
  );
  return rim.length / quiet.length;
}

/**
 * On a page where the other side shows through strongly (page-quality.ts, `strongShowThrough`),
 * the other side's print behind an area adds its own uniform grey: on generator C's heavy
 * bleed-through at 300 dpi (scratch seeds, docs/cards.md, section 8, "Generator C, fourth
 * round") the back's heading text behind an empty area measured 0.27-0.29 of the page's
 * show-through (0.09-0.111 at 0.33-0.39), and behind an erasure (drawn under 0.12 of black)
 * 0.202 at 0.40, over `residueMax`: read filled on a dark hand's page. What a dark, even hand
 * fills measures at least its lightest clear fill (`PageFills.level`): a uniform grey lighter
 * than that, told by no stroke and no dark patch, is no fill by its mean there. A light hand
 * fills from about 0.11: its uniform grey under `lightThrough` of the show-through is no fill
 * either (its fills on those pages measured from 0.43 of it). Both are uncertain.
 */
export const SHOW_GREY = { lightThrough: 0.36 } as const;

export function greyThroughPaper(e: MarkEvidence, fills: PageFills, showThrough: number): boolean {
  const T = THRESHOLDS;
  const below =
    fills.hand === 'dark'
      ? e.solid < fills.level
      : fills.hand === 'light' && e.solid < SHOW_GREY.lightThrough * showThrough;
  return below && e.stroke < T.filledStroke && !(e.blob >= T.filledBlob && e.blobContrast >= T.filledBlobContrast);
}

/**
 * The decisions of a side's areas, changed in place: on a page where the other side shows
 * through strongly (`showThrough`, share of its black; 0 where it does not), `greyThroughPaper`
 * fills are uncertain.
 */
export function judgeGreysThroughPaper(
  decided: Array<{ state: AreaState }>,
  ev: readonly MarkEvidence[],
  fills: PageFills,
  showThrough: number,
): void {
  if (showThrough <= 0) return;
  decided.forEach((d, i) => {
    if (d.state === 'filled' && greyThroughPaper(ev[i]!, fills, showThrough)) d.state = 'uncertain';
  });
}

/** Whether a fill is told by something other than its mean (a stroke or a patch: on a page whose outlines have grown into its areas, `RIM`, the grown outline makes either). */
export function notByItsMean(e: MarkEvidence): boolean {
  return e.solid < THRESHOLDS.filledSolid;
}

function ramp(v: number, lo: number, hi: number): number {
  return Math.min(1, Math.max(0, (v - lo) / (hi - lo)));
}
