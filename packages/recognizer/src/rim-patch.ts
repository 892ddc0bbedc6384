// A patch lying along the sampled ellipse's edge in an area whose mean is bare paper
// (docs/cards.md, section 5, step 4): what ink spreading leaves of a grown outline, not a fill.
// The rim rule (mark-classifier.ts, `RIM`) makes every fill told by a patch or a short arc
// uncertain on a page where a quarter of the quiet areas show one; on a page where the print
// spread less, a few areas still show the outline's arc, and a light hand's page calls a patch
// of 1.5 mm² a fill from 0.14 of contrast. On generator C's scratch seed 4 607 520 (heavy ink
// spreading, 150 dpi, a rim share of 0.14) an empty area's arc of 1.53 mm² at 0.150, 3 mm
// along the edge and reaching in to 0.65 of the radius, so read filled (docs/cards.md,
// section 8, "Generator C, seventeenth round"). A person's dot or half fill reaches further in:
// of the areas C's tuning pages read filled by a patch alone (no stroke, a mean under 0.155),
// generator B's dots reached in to 0.54 of the radius or nearer, its half fills to within 0.18
// of the centre (one of each further out was uncertain already).
import type { AreaSample } from './area-sampler.ts';
import { type AreaState, RIM, THRESHOLDS } from './mark-classifier.ts';
import type { MarkEvidence } from './mark-evidence.ts';
import type { PageLevels } from './page-levels.ts';
import { spotsOf } from './speck-spots.ts';

/** A patch whose cell nearest the centre lies at least this share of the sampled ellipse's radius out lies along its edge. */
export const RIM_REACH = 0.6;

/**
 * A patch at least `side` mm long (bounding box) whose cell nearest the centre lies at least
 * `reach` of the radius out lies along the edge too: the arc of an outline that the ink's
 * spreading grew inwards. No dot is that long (generator B's are 1.6-2.6 mm across), and a half
 * fill reaches within 0.18 of the centre. On generator C's scratch seed 4 607 542 (heavy ink
 * spreading, 150 dpi, a rim share under the page rule's 0.25) two empty areas' arcs of 3.3 and
 * 4.1 mm², 5.9 mm along the upper edge and reaching in to 0.58 and 0.53 of the radius, read
 * filled (docs/cards.md, section 8, "Generator C, nineteenth round").
 */
export const LONG_ARC = { side: 4, reach: 0.45 } as const;

/** Whether a patch lies along the sampled ellipse's edge: from `RIM_REACH` out, or a long arc (`LONG_ARC`). */
function onRim(p: { reach: number; side: number }): boolean {
  return p.reach >= RIM_REACH || (p.side >= LONG_ARC.side && p.reach >= LONG_ARC.reach);
}

/**
 * Whether the area's largest patch (as `spotsOf` grows it) lies along the sampled ellipse's edge
 * (`onRim`); with `every`, whether all of its patches do (nothing of the area's ink reaches
 * further in).
 */
export function patchOnRim(s: AreaSample, lv: PageLevels, every = false): boolean {
  const { spots } = spotsOf(s, lv);
  if (spots.length === 0) return false;
  if (every) return spots.every(onRim);
  return onRim(spots.reduce((a, b) => (b.area > a.area ? b : a)));
}

/**
 * The decisions of a side's areas, changed in place: a quiet area (its mean under
 * `RIM.rimQuietSolid`) filled with no stroke, whose largest patch lies along the sampled
 * ellipse's edge (`patchOnRim`), is uncertain; so is one filled by a stroke whose every patch
 * lies along the edge. A person's tick or cross runs through the area; the printed outline, where
 * the sampled ellipse sits off it, runs along the edge: on generator C's scratch seed 5 104 545
 * (heavy low ink, 200 dpi) one part of a page's areas was sampled about 0.55 mm off their
 * outlines, whose arcs measured as strokes of 2.4-3.6 mm, and six empty areas of a dark hand's
 * page read filled (the page's rim share was 0.12, that part's 0.24; docs/cards.md, section 8,
 * "Generator C, eighteenth round").
 */
export function judgeRimPatches(
  decided: Array<{ state: AreaState; score: number }>,
  ev: readonly MarkEvidence[],
  samples: readonly AreaSample[],
  lv: PageLevels,
): void {
  decided.forEach((d, i) => {
    const e = ev[i]!;
    if (
      d.state === 'filled' &&
      e.solid < RIM.rimQuietSolid &&
      patchOnRim(samples[i]!, lv, e.stroke >= THRESHOLDS.filledStroke)
    )
      d.state = 'uncertain';
  });
}
