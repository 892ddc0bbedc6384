// One scanned side -> what is on it. Decode once to greyscale, find the fiducials on a
// thumbnail, read the identification strip through the homography, then sample the areas
// and decode the codes in their predicted regions only (design/recognition.md, budget).
import { decodeGrey, crop, shrink, type GreyImage } from './grey-image.ts';
import { candidateFrames, estimateScale, findFiducials, type PageFrame } from './fiducials.ts';
import { apply, solveHomography, type Homography } from './homography.ts';
import { buildPaperMap } from './paper-map.ts';
import { findStreakColumns } from './streaks.ts';
import { sampleArea, sampleSquare, type AreaFeatures } from './area-sampler.ts';
import { classify, pageBaseline, type AreaState } from './mark-classifier.ts';
import { decodeSideIdentity, layoutKeyHex, type Side } from './id-strip.ts';
import { fiducialCentre, ID_STRIP } from './page-frame.ts';
import { readCode } from './codes.ts';
import type { Layout, LayoutSide } from './layout.ts';
import type { LayoutSet } from './layout-store.ts';
import { RECOGNITION_ERRORS } from './error-codes.ts';

export interface AreaReading { chapter: number; index: number; state: AreaState; score: number }

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
    areas: AreaReading[];
    ms: number;
  };

const THUMB_PX_PER_MM = 2;

export async function recognizePage(input: Uint8Array, layouts: LayoutSet): Promise<PageReading> {
  const t0 = performance.now();
  let img: GreyImage;
  try { img = await decodeGrey(input); } catch (e) {
    return { status: 'unreadable', error_code: RECOGNITION_ERRORS.imageAcquisition, detail: `cannot decode image: ${(e as Error).message}`, ms: performance.now() - t0 };
  }
  const r = await recognizeGrey(img, layouts);
  r.ms = performance.now() - t0;
  return r;
}

export async function recognizeGrey(img: GreyImage, layouts: LayoutSet): Promise<PageReading> {
  const t0 = performance.now();
  const ms = () => performance.now() - t0;
  const pxmm = estimateScale(img);
  if (pxmm < 2.5) return { status: 'unreadable', error_code: RECOGNITION_ERRORS.imageAcquisition, detail: `image too small (${img.width}x${img.height}); at least 70 dpi`, ms: ms() };
  const factor = Math.max(1, Math.round(pxmm / THUMB_PX_PER_MM));
  const thumb = shrink(img, factor);
  const found = findFiducials(img, thumb, factor);
  const frames = candidateFrames(found);
  let frame: PageFrame | undefined, h: Homography | undefined, layout: Layout | undefined, side: LayoutSide | undefined;
  let unknownKey: number | undefined;
  for (const f of frames) {
    const hh = solveHomography([fiducialCentre('tl'), fiducialCentre('tr'), fiducialCentre('bl'), fiducialCentre('br')], f.points);
    if (!hh) continue;
    const id = readIdentity(img, hh, f, pxmm);
    if (!id) continue;
    const l = layouts.get(id.layoutKey);
    if (!l) { unknownKey = id.layoutKey; continue; }
    const s = l.sides.find((x) => x.sheet === id.sheet && x.side === id.side);
    if (!s) { unknownKey = id.layoutKey; continue; }
    frame = f; h = hh; layout = l; side = s;
    break;
  }
  if (!frame || !h || !layout || !side) {
    if (unknownKey !== undefined) return { status: 'unreadable', error_code: RECOGNITION_ERRORS.chapters, detail: `layout ${layoutKeyHex(unknownKey)} is not loaded (or has no such side)`, ms: ms() };
    if (isBlank(thumb)) return { status: 'blank', ms: ms() };
    const detail = found.length < 3 ? `found ${found.length} of 4 corner marks` : 'identification strip not readable';
    return { status: 'unreadable', error_code: RECOGNITION_ERRORS.imageAcquisition, detail, ms: ms() };
  }

  const paper = buildPaperMap(thumb, factor, 16);
  const streaks = findStreakColumns(img);
  const areaFeatures = side.areas.map((a) => sampleArea(img, h!, paper, frame!.black, streaks, a.x, a.y, a.w, a.h, pxmm));
  const cellFeatures = side.student_cells.map((c) => sampleArea(img, h!, paper, frame!.black, streaks, c.x, c.y, c.w, c.h, pxmm));
  const baseline = pageBaseline([...areaFeatures, ...cellFeatures]);
  const areas: AreaReading[] = side.areas.map((a, i) => ({ chapter: a.chapter, index: a.index, ...classify(areaFeatures[i]!, baseline) }));

  const out: Extract<PageReading, { status: 'ok' }> = {
    status: 'ok', layout_id: layout.layout_id, sheet: side.sheet, side: side.side, upside_down: frame.upsideDown, areas, ms: 0,
  };
  if (side.student_cells.length > 0) Object.assign(out, readBubbleNumber(side, cellFeatures, baseline));
  if (side.barcode) {
    const b = side.barcode;
    const text = await readRegion(img, h, b.x - 3, b.y - 3, b.w + 6, b.h + 6, pxmm, 'Code128', 5);
    out.student_id = text;
    if (text === null) out.student_detail = 'student-number barcode not readable';
  }
  if (side.qrcode) {
    const q = side.qrcode;
    const quiet = 4 * q.module;
    out.qrcode = await readRegion(img, h, q.x - quiet, q.y - quiet, q.w + 2 * quiet, q.h + 2 * quiet, pxmm, 'QRCode', 4 / q.module);
  }
  out.ms = ms();
  return out;
}

function readIdentity(img: GreyImage, h: Homography, f: PageFrame, pxmm: number) {
  // The strip's cells are judged against the fiducials' black and the paper beside the strip.
  const id = ID_STRIP;
  const inset = id.cell * 0.25;
  const values: number[] = [];
  for (let r = 0; r < id.rows; r++) for (let c = 0; c < id.cols; c++) {
    values.push(sampleSquare(img, h, id.x + c * id.cell + inset, id.y + r * id.cell + inset, id.cell - 2 * inset, pxmm));
  }
  const paper = Math.max(sampleSquare(img, h, id.x - 8, id.y, 4, pxmm), sampleSquare(img, h, id.x + id.cols * id.cell + 4, id.y, 4, pxmm));
  const thr = (paper + f.black) / 2;
  return decodeSideIdentity(values.map((v) => (v < thr ? 1 : 0)));
}

function isBlank(thumb: GreyImage): boolean {
  // Blank backs: show-through and ADF streaks are light or thin; printed content is not.
  const hist = new Uint32Array(256);
  for (let i = 0; i < thumb.data.length; i += 3) hist[thumb.data[i]!]!++;
  const n = Math.ceil(thumb.data.length / 3);
  let acc = 0, paper = 255;
  for (let v = 0; v < 256; v++) { acc += hist[v]!; if (acc >= 0.9 * n) { paper = v; break; } }
  let dark = 0;
  for (let v = 0; v < paper * 0.55; v++) dark += hist[v]!;
  return dark / n < 0.004;
}

function readBubbleNumber(side: LayoutSide, features: AreaFeatures[], baseline: number): { student_id: string | null; student_detail?: string } {
  const positions = new Map<number, Array<{ value: number; state: AreaState }>>();
  side.student_cells.forEach((c, i) => {
    const list = positions.get(c.position) ?? [];
    list.push({ value: c.value, state: classify(features[i]!, baseline).state });
    positions.set(c.position, list);
  });
  let id = '';
  const problems: string[] = [];
  for (const [pos, cells] of [...positions.entries()].sort((a, b) => a[0] - b[0])) {
    const filled = cells.filter((c) => c.state === 'filled');
    const unsure = cells.filter((c) => c.state === 'uncertain');
    if (filled.length === 1 && unsure.length === 0) id += String(filled[0]!.value);
    else if (filled.length === 0 && unsure.length === 0) problems.push(`digit ${pos}: no mark`);
    else if (filled.length > 1) problems.push(`digit ${pos}: ${filled.length} marks`);
    else problems.push(`digit ${pos}: unclear mark`);
  }
  return problems.length === 0 ? { student_id: id } : { student_id: null, student_detail: problems.join(', ') };
}

/**
 * Decodes a code in the image region covering a layout box (mm): first the plain crop,
 * downscaled to about `pxPerMmWanted`; then the region resampled upright through the
 * homography (no rotation, no perspective left for the decoder to guess), then harder modes.
 */
async function readRegion(img: GreyImage, h: Homography, x: number, y: number, w: number, hh: number, pxmm: number, format: 'QRCode' | 'Code128', pxPerMmWanted: number): Promise<string | null> {
  const corners = [apply(h, x, y), apply(h, x + w, y), apply(h, x, y + hh), apply(h, x + w, y + hh)];
  const xs = corners.map((p) => p.x), ys = corners.map((p) => p.y);
  const region = crop(img, Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys));
  if (region.width < 8 || region.height < 8) return null;
  const f = Math.floor(pxmm / pxPerMmWanted);
  const small = f >= 2 ? shrink(region, f) : region;
  const first = await readCode(small, format);
  if (first !== null) return first;
  const upright = warpUpright(img, h, x, y, w, hh, Math.max(pxPerMmWanted, 4));
  return (await readCode(upright, format)) ?? (await readCode(binarise(upright, Math.round(3 * Math.max(pxPerMmWanted, 4))), format)) ?? (await readCode(region, format, true));
}

/** Local-mean threshold: the decoders' own binarisers struggle with blur plus uneven light. */
function binarise(img: GreyImage, win: number): GreyImage {
  const { width: W, height: H, data } = img;
  const integral = new Float64Array((W + 1) * (H + 1));
  for (let y = 0; y < H; y++) {
    let row = 0;
    for (let x = 0; x < W; x++) { row += data[y * W + x]!; integral[(y + 1) * (W + 1) + x + 1] = integral[y * (W + 1) + x + 1]! + row; }
  }
  const out = new Uint8Array(W * H);
  const r = Math.max(2, win);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    const x0 = Math.max(0, x - r), x1 = Math.min(W, x + r + 1), y0 = Math.max(0, y - r), y1 = Math.min(H, y + r + 1);
    const sum = integral[y1 * (W + 1) + x1]! - integral[y0 * (W + 1) + x1]! - integral[y1 * (W + 1) + x0]! + integral[y0 * (W + 1) + x0]!;
    out[y * W + x] = data[y * W + x]! < (sum / ((x1 - x0) * (y1 - y0))) * 0.97 ? 0 : 255;
  }
  return { data: out, width: W, height: H };
}

function warpUpright(img: GreyImage, h: Homography, x0: number, y0: number, w: number, hh: number, ppm: number): GreyImage {
  const W = Math.round(w * ppm), H = Math.round(hh * ppm);
  const out = new Uint8Array(W * H);
  const src = img.data, sw = img.width, sh = img.height;
  for (let j = 0; j < H; j++) {
    for (let i = 0; i < W; i++) {
      const p = apply(h, x0 + (i + 0.5) / ppm, y0 + (j + 0.5) / ppm);
      const fx = p.x - 0.5, fy = p.y - 0.5;
      const ix = Math.floor(fx), iy = Math.floor(fy);
      if (ix < 0 || iy < 0 || ix + 1 >= sw || iy + 1 >= sh) { out[j * W + i] = 255; continue; }
      const ax = fx - ix, ay = fy - iy, k = iy * sw + ix;
      const top = src[k]! * (1 - ax) + src[k + 1]! * ax;
      const bot = src[k + sw]! * (1 - ax) + src[k + sw + 1]! * ax;
      out[j * W + i] = top * (1 - ay) + bot * ay;
    }
  }
  return { data: out, width: W, height: H };
}

