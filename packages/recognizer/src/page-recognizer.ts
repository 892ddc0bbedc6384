// One scanned side -> what is on it. Decode once to greyscale, find the fiducials on a
// thumbnail, read the identification strip through the homography, then sample the areas
// and decode the codes in their predicted regions only (docs/cards.md, "How recognition works").
import { decodeGrey, shrink, type GreyImage } from './grey-image.ts';
import { candidateFrames, estimateScale, findFiducials, type PageFrame } from './fiducials.ts';
import { apply as applyH, solveHomography, type Homography } from './homography.ts';
import { buildPaperMap, type PaperMap } from './paper-map.ts';
import { findStreaks } from './streaks.ts';
import { inkHidden } from './streak-ink.ts';
import {
  blockiness,
  edgeWidth,
  localAllowance,
  measureBands,
  misregistration,
  refusal,
  showThroughOf,
  strongShowThrough,
  type PageQuality,
} from './page-quality.ts';
import { darkerOnAGuess, fillOnAGuess, lighterOnAGuess, localPaper } from './local-paper.ts';
import { sampleArea, sampleSquare, type AreaSample } from './area-sampler.ts';
import {
  classify,
  classifyAreas,
  fillsOf,
  judgeGreysThroughPaper,
  notByItsMean,
  RIM,
  rimShare,
  splitGreys,
  splitOf,
  THRESHOLDS,
  uniformMarks,
  type AreaState,
  type PageFills,
} from './mark-classifier.ts';
import { sideEvidence, type SideEvidence } from './student-pool.ts';
import { evidence, type MarkEvidence } from './mark-evidence.ts';
import { pageLevels, type PageLevels } from './page-levels.ts';
import {
  decodeSideIdentity,
  decodeStudentIdentity,
  layoutKeyHex,
  studentKey,
  studentKeyHex,
  type Side,
} from './id-strip.ts';
import { FIDUCIAL_LARGE, fiducialCentre, ID_STRIP, PAGE } from './page-frame.ts';
import { readRegion } from './code-region.ts';
import { isBlank } from './blank-page.ts';
import { encodeQr, type ModuleMatrix } from './codes.ts';
import { qrBehind, takeOutQrBehind, type ShowThrough } from './show-through.ts';
import { readBubbleNumber } from './student-number.ts';
import { judgeRimPatches } from './rim-patch.ts';
import { judgeSpecks, type SpeckImage } from './speck-spots.ts';
import type { Layout, LayoutSide } from './layout.ts';
import type { LayoutSet } from './layout-store.ts';
import { RECOGNITION_ERRORS } from './error-codes.ts';

export interface AreaReading {
  chapter: number;
  index: number;
  state: AreaState;
  score: number;
}

/** What one side says. Plain data: it crosses worker boundaries. */
export type PageReading =
  | { status: 'blank'; ms: number }
  | { status: 'unreadable'; error_code: number; detail: string; ms: number }
  | {
      status: 'ok';
      layout_id: string;
      sheet: number;
      side: Side;
      upside_down: boolean;
      /** Present on the side that carries the QR code; null when it could not be read. */
      qrcode?: string | null;
      /** Present on the side that carries the student number; null when not read. */
      student_id?: string | null;
      student_detail?: string;
      /**
       * The student key printed on this side of a personalised card (4 hex digits); null when its
       * strip is printed but unreadable; absent on other cards and on layouts without the strip.
       */
      student_key?: string | null;
      areas: AreaReading[];
      /** The page's measured condition (page-quality.ts). */
      quality?: PageQuality;
      /** What the student's other sides need to judge this side's uncertain areas again (student-pool.ts). */
      evidence?: SideEvidence;
      /** Extension: image pixels of the layout's tl, tr, bl, br corner-mark centres as located
       *  (x, y per corner), so the overlay of what was read can be drawn later (page-overlay.ts). */
      corners?: number[];
      ms: number;
    };

const THUMB_PX_PER_MM = 2;
/** An area whose mean is this much lighter than its ring's paper was measured against ink on the ring (empty areas measure 0 ± 0.01). */
const LOCAL_TOO_LIGHT = -0.04;

/** What recognizeGrey measured, for the benchmark's tuning tool (filled in when passed). */
export interface PageDiagnostics {
  levels?: PageLevels;
  cellLevels?: PageLevels;
  quality?: PageQuality;
  fills?: PageFills;
  areas?: MarkEvidence[];
  cells?: MarkEvidence[];
  /** The areas' samples as scanned (before the other side's QR code was taken out). */
  samples?: AreaSample[];
  /** How the other side's QR code showed through, where it was measured and taken out (show-through.ts): its strength, blur, fit, the light it took. */
  showThrough?: (Omit<ShowThrough, 'q' | 'patterns'> & { taken: number }) | null;
  /** Per area corrected for it (by index): the paper around the area with the show-through taken out. */
  clearPaper?: Map<number, number>;
  /** Per area judged against its ring of paper: how far the ring departs from a sum along the area's axes, share of its range (local-paper.ts); 0 elsewhere. */
  misfit?: Float32Array;
  pxmm?: number;
  /** Per area: what the evidence alone decided, and which of the page's conditions made it uncertain or empty after that ('ring', 'grey', 'specks', 'rim', 'streak'), if one did. */
  alone?: AreaState[];
  overruled?: Array<'ring' | 'grey' | 'specks' | 'rim' | 'streak' | null>;
  /** Per area: the other side's dense print behind it; the other side's QR code taken out of it (show-through.ts). */
  behind?: readonly boolean[];
  cleared?: readonly boolean[];
  /** The page as the speck rules follow a spot in it (speck-spots.ts). */
  speckImage?: SpeckImage;
}

/** The module matrix of a layout's QR code (its content is the layout's), encoded once per layout; null if it cannot be. */
const qrMatrices = new WeakMap<Layout, Promise<ModuleMatrix | null>>();
function qrMatrixOf(layout: Layout): Promise<ModuleMatrix | null> {
  let m = qrMatrices.get(layout);
  if (!m) {
    m = encodeQr(layout.qrcode).catch(() => null);
    qrMatrices.set(layout, m);
  }
  return m;
}

export async function recognizePage(input: Uint8Array, layouts: LayoutSet): Promise<PageReading> {
  const t0 = performance.now();
  let img: GreyImage;
  try {
    img = await decodeGrey(input);
  } catch (e) {
    return {
      status: 'unreadable',
      error_code: RECOGNITION_ERRORS.imageAcquisition,
      detail: `cannot decode image: ${(e as Error).message}`,
      ms: performance.now() - t0,
    };
  }
  const r = await recognizeGrey(img, layouts);
  r.ms = performance.now() - t0;
  return r;
}

export async function recognizeGrey(
  img: GreyImage,
  layouts: LayoutSet,
  diagnostics?: PageDiagnostics,
): Promise<PageReading> {
  const t0 = performance.now();
  const ms = () => performance.now() - t0;
  const pxmm = estimateScale(img);
  if (pxmm < 2.5)
    return {
      status: 'unreadable',
      error_code: RECOGNITION_ERRORS.imageAcquisition,
      detail: `image too small (${img.width}x${img.height}); at least 70 dpi`,
      ms: ms(),
    };
  const factor = Math.max(1, Math.round(pxmm / THUMB_PX_PER_MM));
  const thumb = shrink(img, factor);
  const streaks = findStreaks(img);
  const found = findFiducials(img, thumb, factor, streaks.mask);
  const frames = candidateFrames(found);
  let frame: PageFrame | undefined, h: Homography | undefined, layout: Layout | undefined, side: LayoutSide | undefined;
  let unknownKey: number | undefined;
  for (const f of frames) {
    const hh = solveHomography(
      [fiducialCentre('tl'), fiducialCentre('tr'), fiducialCentre('bl'), fiducialCentre('br')],
      f.points,
    );
    if (!hh) continue;
    let found = false;
    for (const id of identities(img, hh, f, pxmm)) {
      const l = layouts.get(id.layoutKey);
      const s = l?.sides.find((x) => x.sheet === id.sheet && x.side === id.side);
      if (!l || !s) {
        unknownKey = id.layoutKey;
        continue;
      }
      frame = f;
      h = hh;
      layout = l;
      side = s;
      found = true;
      break;
    }
    if (found) break;
  }
  if (!frame || !h || !layout || !side) {
    if (unknownKey !== undefined)
      return {
        status: 'unreadable',
        error_code: RECOGNITION_ERRORS.chapters,
        detail: `layout ${layoutKeyHex(unknownKey)} is not loaded (or has no such side)`,
        ms: ms(),
      };
    if (isBlank(thumb)) return { status: 'blank', ms: ms() };
    const detail = found.length < 3 ? `found ${found.length} of 4 corner marks` : 'identification strip not readable';
    return { status: 'unreadable', error_code: RECOGNITION_ERRORS.imageAcquisition, detail, ms: ms() };
  }

  const paper = buildPaperMap(thumb, factor, 16);
  // The page's condition: refused when no area on it can be judged safely; otherwise, on a page
  // with bands or uneven light, every area is judged against the paper right around it.
  const bands = measureBands(img, h, pxmm, streaks.mask, (x, y) => paper.level(x, y), frame.black);
  const tr = side.fiducials.find((f) => f.x > PAGE.width / 2 && f.y < PAGE.height / 2);
  const quality: PageQuality = {
    ...bands,
    contrast: frame.points.map((p) => paper.level(p.x, p.y)).sort((a, b) => a - b)[1]! - frame.black,
    blurMm: edgeWidth(img, frame.points[0].x, frame.points[0].y, FIDUCIAL_LARGE * pxmm, pxmm),
    blockiness: blockiness(img),
    showThrough: layout.duplex && tr ? showThroughOf(img, h, tr.x, tr.y, frame.black) : 0,
    local: localAllowance(bands),
  };
  if (diagnostics) diagnostics.quality = quality;
  const refused = refusal(quality);
  if (refused)
    return { status: 'unreadable', error_code: RECOGNITION_ERRORS.imageAcquisition, detail: refused, ms: ms() };
  const allow = quality.local;
  const localOf = (a: { x: number; y: number; w: number; h: number }) => {
    if (allow === 0) return null;
    const c = applyH(h!, a.x, a.y);
    return localPaper(
      img,
      h!,
      a.x,
      a.y,
      a.w,
      a.h,
      pxmm,
      streaks.mask,
      limiter(paper, h!, a, allow),
      paper.level(c.x, c.y),
    );
  };
  // Much lighter than the ring says the paper is: ink on the ring (a stray mark, a neighbour's
  // overflow) darkened it, not a band; that area is measured against the paper map, which on
  // this page cannot follow its bands or shadow either: a fill it shows there is uncertain.
  const ringSpoilt = new Array<boolean>(side.areas.length).fill(false);
  const misfit = new Float32Array(side.areas.length);
  const areaSamples = side.areas.map((a, i) => {
    const local = localOf(a);
    const s = sampleArea(img, h!, paper, frame!.black, streaks.mask, a.x, a.y, a.w, a.h, pxmm, local);
    if (local && s.range) misfit[i] = local.misfit / s.range;
    if (!local || s.mean >= LOCAL_TOO_LIGHT) return s;
    ringSpoilt[i] = true;
    return sampleArea(img, h!, paper, frame!.black, streaks.mask, a.x, a.y, a.w, a.h, pxmm);
  });
  const cellSamples = side.student_cells.map((c) => {
    const local = localOf(c);
    const s = sampleArea(img, h!, paper, frame!.black, streaks.mask, c.x, c.y, c.w, c.h, pxmm, local);
    return local && s.mean < LOCAL_TOO_LIGHT
      ? sampleArea(img, h!, paper, frame!.black, streaks.mask, c.x, c.y, c.w, c.h, pxmm)
      : s;
  });
  // The page's own levels, from its areas (most of them empty) and, apart, its student-number
  // cells (another size, and mostly empty too).
  // Each with the page's contrast, which moves what a faint fill measures (mark-classifier.ts,
  // `lowContrast`).
  const levelsOf = (samples: AreaSample[]) => ({ ...pageLevels(samples, pxmm), contrast: quality.contrast });
  const levels = levelsOf(areaSamples.length >= 8 ? areaSamples : [...areaSamples, ...cellSamples]);
  const cellLevels = cellSamples.length >= 8 ? levelsOf(cellSamples) : levels;
  const misplaced = areaSamples.length >= 8 ? misregistration(levels) : null;
  if (misplaced) {
    if (diagnostics) Object.assign(diagnostics, { levels });
    return { status: 'unreadable', error_code: RECOGNITION_ERRORS.imageAcquisition, detail: misplaced, ms: ms() };
  }
  // The other side's QR code showing through, measured and taken out of the areas over it
  // (show-through.ts); those areas are then judged as any other. Not on a page whose areas are
  // judged against their ring of paper.
  const qrOnOtherSide =
    side.areas.length > 0 && layout.sides.some((x) => x.sheet === side!.sheet && x.side !== side!.side && x.qrcode);
  const qr = qrOnOtherSide ? await qrMatrixOf(layout) : null;
  const seen = takeOutQrBehind(qr ? qrBehind(layout, side, qr) : null, side.areas, areaSamples, {
    thumb,
    factor,
    h,
    pxmm,
    ringJudged: allow > 0,
  });
  const areaEvidence = seen.samples.map((s) => evidence(s, levels, THRESHOLDS.filledStroke));
  const cellEvidence = cellSamples.map((s) => evidence(s, cellLevels, THRESHOLDS.filledStroke));
  // How this student fills, from the page's clearly filled areas (the cells are too few).
  const marks = uniformMarks(areaEvidence);
  const fills = fillsOf(marks);
  if (diagnostics)
    Object.assign(diagnostics, {
      levels,
      cellLevels,
      fills,
      areas: areaEvidence,
      cells: cellEvidence,
      samples: areaSamples,
      pxmm,
      showThrough: seen.measured
        ? {
            strength: seen.measured.strength,
            correlation: seen.measured.correlation,
            blur: seen.measured.blur,
            taken: seen.taken,
          }
        : null,
      clearPaper: seen.paper,
      misfit,
    });
  // On a page of mixed instruments, where its erasures end and its faint fills begin (areas only:
  // the student-number cells are measured against other levels), among the areas measured in the
  // clear (below).
  const greys = splitGreys(areaEvidence.filter((_, i) => !seen.cleared[i]));
  const split = fills.hand === 'mixed' ? splitOf(greys) : null;
  const isBehind = densePrintBehind(layout, side);
  const isBehindOther = densePrintBehind(layout, side, false);
  const behind = side.areas.map((a, i) => (seen.cleared[i] ? isBehindOther(a) : isBehind(a)));
  // An area with the QR code behind it taken out is judged by everything but that gap: its grey
  // went through one more measurement (the code's strength and the paper under it), shared by
  // every area over the code, so it neither helps find the gap nor is judged by it.
  if (diagnostics) Object.assign(diagnostics, { behind, cleared: seen.cleared });
  const decided = classifyAreas(areaEvidence, levels, fills, split, behind, seen.cleared);
  // What the areas' own evidence decided, before the page's condition (below) overrules it.
  const alone = decided.map((d) => d.state);
  type Why = 'ring' | 'grey' | 'specks' | 'rim' | 'streak';
  const streaked = streaks.mask.includes(1);
  // The page's condition overrules what the areas' own evidence decided (`note`: after each step).
  const overrule = (d: Array<{ state: AreaState; score: number }>, note?: (why: Why) => void) => {
    // A fill measured against the paper map because ink spoilt its ring, or on an area whose ring
    // does not change as a sum along the area's axes (a shadow's edge across it diagonally: the
    // paper carried inside is a guess) unless a stroke or a clearly dark mean tells it, is
    // uncertain (local-paper.ts).
    d.forEach((x, i) => {
      if (
        x.state === 'filled' &&
        (ringSpoilt[i] || fillOnAGuess(areaEvidence[i]!, misfit[i]!, THRESHOLDS.filledStroke))
      )
        x.state = 'uncertain';
      // The guess may be off either way: a fill told by its mean on a ring that is only a guess
      // stays filled only if it would half that misfit lighter, and an empty one whose grey the
      // ring may have lightened from a faint fill's stays empty only if it would as dark as that
      // (local-paper.ts).
      const judge = (e: MarkEvidence) => classify(e, levels, fills, seen.cleared[i] ? null : split, behind[i]).state;
      const lighter =
        x.state === 'filled' ? lighterOnAGuess(areaEvidence[i]!, misfit[i]!, THRESHOLDS.filledStroke) : null;
      if (lighter && judge(lighter) !== 'filled') x.state = 'uncertain';
      const darker = x.state === 'empty' && fills.hand !== 'dark' ? darkerOnAGuess(areaEvidence[i]!, misfit[i]!) : null;
      if (darker && judge(darker) !== 'empty') x.state = 'uncertain';
    });
    note?.('ring');
    // Where the other side shows through strongly, its print behind an area adds a uniform grey: on
    // a dark hand's page a grey lighter than the hand's own fills, on a light hand's one fainter
    // than that print can make, is not a fill by its mean (mark-classifier.ts, `greyThroughPaper`).
    judgeGreysThroughPaper(d, areaEvidence, fills, strongShowThrough(quality) ? quality.showThrough : 0);
    note?.('grey');
    // Toner specks and strong show-through look like dots and short ticks (speck-spots.ts).
    const speckImage = { img, black: frame!.black, pxmm, streaks: streaks.mask };
    if (diagnostics) diagnostics.speckImage = speckImage;
    judgeSpecks(d, areaEvidence, seen.samples, quality, levels, speckImage);
    note?.('specks');
    // Where the print's outlines have grown into most empty areas (ink spreading), a patch or a
    // short arc is what every area shows: a fill not told by its mean is uncertain
    // (mark-classifier.ts, RIM).
    if (rimShare(areaEvidence) >= RIM.rimPatchPage)
      d.forEach((x, i) => {
        if (x.state === 'filled' && notByItsMean(areaEvidence[i]!)) x.state = 'uncertain';
      });
    // Elsewhere, a quiet area (its mean bare paper) filled only by a patch that lies along the
    // sampled ellipse's edge: a grown outline's arc (rim-patch.ts).
    judgeRimPatches(d, areaEvidence, seen.samples, levels);
    note?.('rim');
    // What a streak hid is no proof of paper: an area with ink under one is not empty (looked
    // for only in the areas called empty, on a page with a streak; streak-ink.ts).
    if (streaked)
      d.forEach((x, i) => {
        if (x.state === 'empty' && inkHidden(img, areaSamples[i]!, streaks, pxmm)) {
          x.state = 'uncertain';
          x.score = 0;
        }
      });
    note?.('streak');
  };
  const overruled = diagnostics ? alone.map(() => null as Why | null) : null;
  overrule(decided, (why) =>
    overruled?.forEach((o, i) => {
      if (o === null && decided[i]!.state !== alone[i]) overruled[i] = why;
    }),
  );
  // Where the page's condition would not let an area be filled by its evidence (its ring spoilt
  // or a guess, a speck, print behind, ink spreading), the student's second look may not fill
  // it either (student-pool.ts; the fifth round: a stray mark's area on a banded page measured a
  // uniform grey of 0.165 that its ring of paper would not let be a fill).
  const noFill = (() => {
    const all = decided.map(() => ({ state: 'filled' as AreaState, score: 1 }));
    overrule(all);
    return all.map((x) => x.state !== 'filled');
  })();
  if (diagnostics) Object.assign(diagnostics, { alone, overruled });
  const areas: AreaReading[] = side.areas.map((a, i) => ({ chapter: a.chapter, index: a.index, ...decided[i]! }));

  const out: Extract<PageReading, { status: 'ok' }> = {
    status: 'ok',
    layout_id: layout.layout_id,
    sheet: side.sheet,
    side: side.side,
    upside_down: frame.upsideDown,
    areas,
    quality,
    ms: 0,
    evidence: sideEvidence(
      marks,
      greys,
      fills,
      levels,
      areas.map((a) => a.state),
      areaEvidence,
      behind,
      seen.cleared,
      alone,
      noFill,
    ),
  };
  out.corners = frame.points.flatMap((p) => [Math.round(p.x * 10) / 10, Math.round(p.y * 10) / 10]);
  // The student strip of a personalised card: which student this sheet was printed for.
  let printedKey: number | null | undefined;
  if (side.student_code) {
    printedKey = decodeStudentIdentity(
      readStrip(img, h, side.student_code, frame.black, pxmm),
      parseInt(layout.layout_id, 16),
    );
    if (printedKey !== undefined) out.student_key = printedKey === null ? null : studentKeyHex(printedKey);
  }
  if (side.student_cells.length > 0) {
    Object.assign(out, readBubbleNumber(side, cellEvidence, cellLevels, fills));
    if (out.student_id && typeof printedKey === 'number' && studentKey(out.student_id) !== printedKey) {
      // The strip is the printed identity: bubbles marked or read as another student's number
      // would put this card's marks in that student's record.
      out.student_detail = `student number marked or read as ${out.student_id}, which is not the number this card was printed for`;
      out.student_id = null;
    }
  }
  if (side.barcode) {
    const b = side.barcode;
    const text = await readRegion(
      img,
      h,
      { x: b.x - 3, y: b.y - 3, w: b.w + 6, h: b.h + 6 },
      pxmm,
      'Code128',
      5,
      streaks,
    );
    out.student_id = text;
    if (text === null) out.student_detail = 'student-number barcode not readable';
    else if (typeof printedKey === 'number' && studentKey(text) !== printedKey) {
      // The barcode is the printed identity: another number than the strip's is a misread.
      out.student_id = null;
      out.student_detail = `student-number barcode read as ${text}, which is not the number this card was printed for`;
    }
  }
  if (side.qrcode) {
    const q = side.qrcode;
    const quiet = 4 * q.module;
    out.qrcode = await readRegion(
      img,
      h,
      { x: q.x - quiet, y: q.y - quiet, w: q.w + 2 * quiet, h: q.h + 2 * quiet },
      pxmm,
      'QRCode',
      4 / q.module,
      streaks,
    );
  }
  out.ms = ms();
  return out;
}

/** Clamps a ring's paper to the paper map's level at the area, less `allow` of it (bands darken) or more half of it. */
function limiter(paper: PaperMap, h: Homography, a: { x: number; y: number }, allow: number): (g: number) => number {
  const c = applyH(h, a.x, a.y);
  const m = paper.level(c.x, c.y);
  const lo = m * (1 - allow),
    hi = m * (1 + allow / 2);
  return (g) => (g < lo ? lo : Math.min(g, hi));
}

/**
 * The side's identities to try, in turn: the strip read against the paper above its middle and
 * ends, then against the paper right above each of its columns: a cast shadow's edge across the
 * strip leaves part of it darker than that paper (generator C's heavy shadows at 150 dpi,
 * docs/cards.md, section 8, "Generator C, fifth round"). The second is read where the first does
 * not check, or checks (a misread passes the CRC-8 one time in 512) but names no side of a loaded
 * layout (a heavy shadow at 300 dpi, "tenth round"). Its CRC and the layout key, which must be a
 * loaded layout's, keep a misread from being taken.
 */
function* identities(img: GreyImage, h: Homography, f: PageFrame, pxmm: number) {
  const whole = decodeSideIdentity(readStrip(img, h, ID_STRIP, f.black, pxmm));
  if (whole) yield whole;
  const columns = decodeSideIdentity(readStrip(img, h, ID_STRIP, f.black, pxmm, true));
  if (
    columns &&
    (!whole || columns.layoutKey !== whole.layoutKey || columns.sheet !== whole.sheet || columns.side !== whole.side)
  )
    yield columns;
}

/**
 * A strip's cells, black (1) or white, judged against the fiducials' black and the paper just
 * above the strip (blank on every card: the content ends 13 mm higher), the brightest of three
 * spots in case one is written on; with `perColumn`, the paper 1.5-3.5 mm right above each
 * column (a shadow's edge across the strip).
 */
function readStrip(
  img: GreyImage,
  h: Homography,
  strip: { x: number; y: number; cols: number; rows: number; cell: number },
  black: number,
  pxmm: number,
  perColumn = false,
): number[] {
  const inset = strip.cell * 0.25;
  const w = strip.cols * strip.cell;
  let paper = 0;
  for (const t of [0.15, 0.5, 0.85])
    paper = Math.max(paper, sampleSquare(img, h, strip.x + t * w - 2, strip.y - 7, 4, pxmm));
  const thr = Array.from({ length: strip.cols }, (_, c) =>
    perColumn
      ? (sampleSquare(img, h, strip.x + (c + 0.5) * strip.cell - 1, strip.y - 3.5, 2, pxmm) + black) / 2
      : (paper + black) / 2,
  );
  const bits: number[] = [];
  for (let r = 0; r < strip.rows; r++)
    for (let c = 0; c < strip.cols; c++) {
      bits.push(
        sampleSquare(
          img,
          h,
          strip.x + c * strip.cell + inset,
          strip.y + r * strip.cell + inset,
          strip.cell - 2 * inset,
          pxmm,
        ) < thr[c]!
          ? 1
          : 0,
      );
    }
  return bits;
}

/**
 * Whether an area has the other side's QR code (unless `withQr` is false), barcode or student
 * strip right behind it (the sheet turned over its long edge: x mirrored), which shows through
 * as blotchy grey.
 */
export function densePrintBehind(
  layout: Layout,
  side: LayoutSide,
  withQr = true,
): (a: { x: number; y: number; w: number; h: number }) => boolean {
  const other = layout.sides.find((x) => x.sheet === side.sheet && x.side !== side.side);
  const boxes = other
    ? [withQr ? other.qrcode : undefined, other.barcode, other.student_code].filter(
        (b): b is NonNullable<typeof b> => b !== undefined,
      )
    : [];
  if (boxes.length === 0) return () => false;
  return (a) => {
    const x0 = PAGE.width - a.x - a.w / 2,
      x1 = PAGE.width - a.x + a.w / 2,
      y0 = a.y - a.h / 2,
      y1 = a.y + a.h / 2;
    return boxes.some((b) => x1 > b.x && x0 < b.x + b.w && y1 > b.y && y0 < b.y + b.h);
  };
}
