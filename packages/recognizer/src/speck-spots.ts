// A toner speck inside an empty area (docs/cards.md, section 5, step 4: caution on a speckled
// page; the figures in section 8, "Generator C, third round"). On a page with specks, an area
// whose only dark thing is a spot a speck's size keeps that spot from being called empty (it
// is a trace, mark-classifier.ts) and, where it grows into a short "stroke" or a patch, from
// being called filled: the area goes to review. A speck is
// small, round and alone: it ends where it starts, and the paper around it is bare. A person's
// mark is larger (the smallest dot is over 1.6 mm across) or continues (a tick, a stroke
// leaving the area): so an area whose every patch is a spot within `SPECK.maxArea` and
// `SPECK.maxSide`, and whose samples apart from those spots measure as bare paper, is empty. A
// spot touching the ellipse's edge or an ADF streak's gap may be the end of a mark that lies
// beyond: it is followed in the image, and decides nothing unless it ends there as a speck. And
// a patch many times a speck's size (`SPECK.patchBeyond`: a half fill), or a dot `SPECK.dotFactor`
// times the largest speck in the page's margins (margin-specks.ts), is no speck: it keeps its fill.
import { type AreaSample, cellInImage } from './area-sampler.ts';
import type { GreyImage } from './grey-image.ts';
import { speckArea } from './margin-specks.ts';
import {
  innerQuantile,
  type MarkEvidence,
  smooth,
  solidApartFromSpecks,
  T_BLOB_GROW,
  T_BLOB_SEED,
} from './mark-evidence.ts';
import type { PageLevels } from './page-levels.ts';
import { type AreaState, THRESHOLDS } from './mark-classifier.ts';
import { cautious, type PageQuality, speckled, strongShowThrough } from './page-quality.ts';

/**
 * Set on generator C's tuning pages (the bad photocopy at 150 and 200 dpi, 20 cards each;
 * docs/cards.md, section 8, "Generator C, third round"). A spot wholly inside the ellipse is a
 * speck up to `maxArea` mm² and `maxSide` mm across (bounding box, at the patches' growing
 * level): specks there measured up to 1.9 mm² and 1.85 mm, so the larger ones still go to
 * review; no dot wholly inside measured under 1.6 mm². A spot on the ellipse's edge decides
 * nothing: a dot cut by it measured 0.74 mm² and 1.35 mm at 150 dpi, as a speck does. `bare`:
 * the mean of the samples outside the spots above the page's baseline, as an empty area's
 * (the speckled empty areas there: under 0.04). A dot beyond the margins' specks (`dotFactor`
 * of the largest) is looked at more closely since the fifth round (docs/cards.md, section 8): on
 * C's tuning pages of heavy toner at 200 dpi (cards 4-11, which no earlier round read) two empty
 * areas' specks touching the ellipse's edge measured 1.77 and 3.0 times the margins' largest
 * (the edge's halo grows into such a spot; specks wholly inside measured at most 1.25 times it)
 * and were read filled: a spot on the edge counts as a dot only from `dotFactorEdge` times it,
 * and no spot whose bounding box is wider than the area's stroke by `dotSideOverStroke` mm (a
 * spot grown along the outline's halo: the 3.0 one measured 3.4 mm across with a stroke of
 * 2.1 mm; the dots 0.6 mm narrower than their stroke to as wide). `dotFactor` was 1.5 until the
 * eleventh round: on C's tuning pages of heavy toner at 200 dpi (cards 12-39, which no earlier
 * round read) a speck wholly inside an empty area measured 1.66 times the margins' largest
 * (2.21 mm² against 1.33; few specks had fallen in that page's margins) and was read filled.
 */
export const SPECK = {
  maxArea: 1.3,
  maxSide: 1.4,
  bare: 0.04,
  patchBeyond: 6,
  dotMin: 2,
  dotFactor: 1.8,
  dotFactorEdge: 2,
  dotSideOverStroke: 0.4,
} as const;

/** A dark spot in an area: its size (mm², and mm across its bounding box) and whether it touches the sampled ellipse's edge. */
interface Spot {
  area: number;
  side: number;
  edge: boolean;
  /** Its darkest grid cell (index into the sample's grid). */
  cell: number;
  /** Its cell nearest the centre, as a share of the sampled ellipse's radius along its direction (0 centre, 1 edge). */
  reach: number;
}

/**
 * An area's dark spots, grown as its patches are (mark-evidence.ts: from samples clearly darker
 * than the area's floor through samples a little darker), and the mean of the samples outside
 * them above the page's baseline.
 */
export function spotsOf(s: AreaSample, lv: PageLevels): { spots: Spot[]; rest: number } {
  const { cols, rows, grid, inner, step } = s;
  const sm = smooth(grid, cols, rows);
  const floor = innerQuantile(sm, inner, 0.2);
  const sigma = 0.56 * lv.noise;
  const seedAt = floor + Math.max(T_BLOB_SEED, 5 * sigma),
    growAt = floor + Math.max(T_BLOB_GROW, 3 * sigma);
  const inSpot = new Uint8Array(sm.length);
  const stack: number[] = [];
  const spots: Spot[] = [];
  for (let k = 0; k < sm.length; k++) {
    if (inSpot[k] || !(sm[k]! >= seedAt)) continue;
    let i0 = cols,
      i1 = -1,
      j0 = rows,
      j1 = -1,
      n = 0,
      edge = false,
      reach = Infinity,
      cell = k;
    inSpot[k] = 1;
    stack.push(k);
    while (stack.length > 0) {
      const q = stack.pop()!;
      const i = q % cols,
        j = (q - i) / cols;
      n++;
      if (sm[q]! > sm[cell]!) cell = q;
      const u = (i + 0.5) / cols - 0.5,
        v = (j + 0.5) / rows - 0.5;
      const rho = 2 * Math.hypot(u, v);
      if (rho < reach) reach = rho;
      i0 = Math.min(i0, i);
      i1 = Math.max(i1, i);
      j0 = Math.min(j0, j);
      j1 = Math.max(j1, j);
      for (let jj = j - 1; jj <= j + 1; jj++)
        for (let ii = i - 1; ii <= i + 1; ii++) {
          if (ii < 0 || jj < 0 || ii >= cols || jj >= rows) {
            edge = true;
            continue;
          }
          const kk = jj * cols + ii;
          if (Number.isNaN(sm[kk]!)) edge = true;
          else if (!inSpot[kk] && sm[kk]! >= growAt) {
            inSpot[kk] = 1;
            stack.push(kk);
          }
        }
    }
    spots.push({ area: n * step * step, side: Math.max(i1 - i0 + 1, j1 - j0 + 1) * step, edge, cell, reach });
  }
  let sum = 0,
    n = 0;
  for (let k = 0; k < grid.length; k++) {
    if (!inner[k] || inSpot[k] || Number.isNaN(grid[k]!)) continue;
    sum += grid[k]!;
    n++;
  }
  return { spots, rest: n > 0 ? sum / n - lv.baseline : 0 };
}

/** The scanned page, for following a spot beyond the sampled ellipse (`onlySpecks`). */
export interface SpeckImage {
  img: GreyImage;
  black: number;
  pxmm: number;
  streaks: Uint8Array;
}

/**
 * Whether an area's only dark things are specks (`SPECK`) on bare paper. A spot on the sampled
 * ellipse's edge is followed in the image (`page`), beyond the edge, as the margins' specks are
 * measured (margin-specks.ts): a speck there ends before the printed outline and measures no
 * more than one wholly inside; the end of a mark lying beyond, or a dot cut by the edge, runs
 * on into the outline or past `SPECK.maxArea` and decides nothing, as before. On generator C's
 * tuning pages of heavy toner at 200 dpi most of the areas left to review were a single speck of
 * 0.3-1.3 mm² on the edge (docs/cards.md, section 8, "Generator C, eleventh round").
 */
export function onlySpecks(s: AreaSample, lv: PageLevels, page?: SpeckImage): boolean {
  const { spots, rest } = spotsOf(s, lv);
  const speck = (p: Spot) =>
    p.area <= SPECK.maxArea &&
    p.side <= SPECK.maxSide &&
    (!p.edge || (page !== undefined && grownInImage(s, p, page) <= SPECK.maxArea));
  return spots.length > 0 && rest < SPECK.bare && spots.every(speck);
}

/**
 * The area (mm²) of a spot followed in the image from its darkest pixel (`speckArea`), or
 * Infinity where it cannot be: no place in the image, a start that is not dark, a spot reaching
 * an ADF streak's columns (its part there is not seen) or running 1.5 mm from its start.
 */
export function grownInImage(s: AreaSample, p: Spot, page: SpeckImage): number {
  const at = cellInImage(s, p.cell);
  if (!at || s.paper === undefined) return Infinity;
  const { img, black, pxmm, streaks } = page;
  // The darkest pixel next to the cell's centre: a cell averages up to 3 × 3 pixels.
  let best = -1,
    bx = 0,
    by = 0;
  for (let y = Math.floor(at.y) - 1; y <= Math.floor(at.y) + 1; y++)
    for (let x = Math.floor(at.x) - 1; x <= Math.floor(at.x) + 1; x++) {
      if (x < 0 || y < 0 || x >= img.width || y >= img.height) continue;
      const dark = 255 - img.data[y * img.width + x]!;
      if (dark > best) {
        best = dark;
        bx = x;
        by = y;
      }
    }
  if (best < 0) return Infinity;
  const area = speckArea(img, bx, by, s.paper, black, pxmm, streaks, true);
  return area > 0 ? area : Infinity;
}

/**
 * Whether an area holds a dot clearly larger than any speck of its page: its largest spot is at
 * least `SPECK.dotFactor` times the largest speck its margins show (page-quality.ts), and at
 * least `SPECK.dotMin` mm² (larger than every speck in an area of C's tuning pages, wholly
 * inside or not).
 */
export function dotBeyondSpecks(s: AreaSample, lv: PageLevels, speckSize: number, stroke: number): boolean {
  const spots = spotsOf(s, lv).spots;
  if (spots.length === 0) return false;
  const p = spots.reduce((a, b) => (b.area > a.area ? b : a));
  return (
    p.area >= SPECK.dotMin &&
    p.area >= (p.edge ? SPECK.dotFactorEdge : SPECK.dotFactor) * speckSize &&
    p.side <= stroke + SPECK.dotSideOverStroke
  );
}

/**
 * How long a "stroke" a page's specks can make: two of its largest margin specks side by side
 * (twice the width of a disc of `speckSize`), and at least `shortStroke`. On C's tuning pages of
 * heavy toner at 200 dpi (cards 12-39, eleventh round) two specks touching in an empty area
 * measured a 3.2 mm stroke on a page whose largest margin speck was 2.29 mm² (1.7 mm across):
 * read filled. Where a margin speck runs on (1.5 mm from where it was found: `speckSize` is
 * Infinity) the largest speck that could be measured (`speckMeasured`) holds: the page's specks
 * reach at least that. Until the nineteenth round `shortStroke` held there, lower than on a page
 * whose every speck was measured, and on C's scratch seed 5 105 539 (heavy toner, 200 dpi) two
 * specks touching in an empty area, a stroke of 2.7 mm on a page whose measured specks reached
 * 2.47 mm² (3.5 mm for two), read filled (docs/cards.md, section 8, "Generator C, nineteenth
 * round").
 */
export function shortOnSpecks(q: Pick<PageQuality, 'speckSize' | 'speckMeasured'>): number {
  const T = THRESHOLDS;
  const size = Number.isFinite(q.speckSize) ? q.speckSize : q.speckMeasured;
  return Math.max(T.shortStroke, 4 * Math.sqrt(size / Math.PI));
}

/**
 * Whether a fill's patch is far larger than any speck (`SPECK.patchBeyond`): on a page cautious
 * for its specks alone (not for the other side showing through, whose fills make patches that
 * large), such a fill is not made uncertain. A half fill measured 8-10 mm² on C's tuning pages.
 * The patch is measured on the area's samples against its paper, and a ring of paper that a
 * speck on it darkened makes part of the area read lighter than the rest: the rest, bare paper,
 * then joins the speck's patch. So the patch's darkest spot is also followed in the image
 * (`grownInImage`): where it ends there, within a speck's reach (1.5 mm from its start,
 * margin-specks.ts), the patch is no proof: a compact spot is judged as a dot is
 * (`dotBeyondSpecks`). On C's scratch card 6 105 513 at 300 dpi (heavy toner) a speck of
 * 1.28 mm² wholly inside an empty area, with another speck on its ring, measured a patch of
 * 10.6 mm² at 0.184 and read filled (docs/cards.md, section 8, "Generator C, fifteenth round");
 * until the sixteenth round the patch was proof from a spot of `SPECK.maxArea`, and on scratch
 * card 5 105 507 at 200 dpi a speck that grew to 1.50 mm² made a patch of 10.2 mm² at 0.172
 * in an empty area: read filled. Every half fill on C's speckled scratch pages at 200 and
 * 300 dpi (54) ran on in the image; empty areas' spots ended at up to 1.50 mm².
 */
export function beyondSpecks(e: MarkEvidence, s: AreaSample, lv: PageLevels, page?: SpeckImage): boolean {
  if (e.blob < SPECK.patchBeyond) return false;
  if (!page) return true;
  const spots = spotsOf(s, lv).spots;
  if (spots.length === 0) return true;
  const p = spots.reduce((a, b) => (b.area > a.area ? b : a));
  return !Number.isFinite(grownInImage(s, p, page));
}

/**
 * The decisions of a side's areas on a page with toner specks or strong show-through of the
 * other side (docs/cards.md, section 5, step 4), changed in place. A speck or the other side's
 * mark looks like a dot or a short tick: a fill told by nothing more (a stroke under
 * `shortStroke`, a patch) is uncertain, unless its patch or dot is plainly larger than any speck
 * (`beyondSpecks`, `dotBeyondSpecks`) on a page cautious for its specks alone; so is one told by its mean only because a speck darkens it (a
 * speck on an erasure's residue: the mean is taken again without what is far darker than the
 * area's median). On a speckled page, an area left uncertain whose only dark things are specks
 * on bare paper (`onlySpecks`) is empty.
 */
export function judgeSpecks(
  decided: Array<{ state: AreaState; score: number }>,
  ev: readonly MarkEvidence[],
  samples: readonly AreaSample[],
  q: PageQuality,
  lv: PageLevels,
  page?: SpeckImage,
): void {
  if (!cautious(q)) return;
  const T = THRESHOLDS;
  decided.forEach((d, i) => {
    const e = ev[i]!;
    if (
      d.state === 'filled' &&
      // What is plainly larger than a speck is no speck, where only specks make the page cautious.
      (strongShowThrough(q) ||
        !(beyondSpecks(e, samples[i]!, lv, page) || dotBeyondSpecks(samples[i]!, lv, q.speckSize, e.stroke))) &&
      e.stroke < shortOnSpecks(q) &&
      (e.solid < T.filledSolid || solidApartFromSpecks(samples[i]!, lv.baseline) < T.filledSolid)
    )
      d.state = 'uncertain';
  });
  if (speckled(q))
    decided.forEach((d, i) => {
      if (d.state === 'uncertain' && onlySpecks(samples[i]!, lv, page)) {
        d.state = 'empty';
        d.score = 0;
      }
    });
}
