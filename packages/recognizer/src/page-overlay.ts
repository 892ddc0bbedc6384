// What was read on a page, drawn over the page (docs/cards.md, "The review loop"): every area
// outlined as filled, empty or uncertain with its score, the student-number grid or barcode
// region and the QR code region marked. The geometry is the layout's, carried into the scanned
// image through the homography of the corner marks the recognizer located (PageReading.corners),
// so a person sees where the recognizer looked, not where the template says it printed.
import sharp from 'sharp';
import { apply, solveHomography, type Homography, type Pt } from './homography.ts';
import { fiducialCentre } from './page-frame.ts';
import type { AreaState } from './mark-classifier.ts';
import type { LayoutSide } from './layout.ts';

/** An ellipse in image pixels: centre, half axes, rotation in degrees. */
export interface OverlayEllipse {
  cx: number;
  cy: number;
  rx: number;
  ry: number;
  angle: number;
}
export interface OverlayArea extends OverlayEllipse {
  chapter: number;
  index: number;
  state: AreaState;
  score: number;
}
export interface PageOverlay {
  areas: OverlayArea[];
  /** The student-number bubbles (grid outline and each cell) or the barcode region, on the side that has one. */
  student:
    | { kind: 'bubbles'; outline: Pt[]; cells: Array<OverlayEllipse & { position: number; value: number }> }
    | { kind: 'barcode'; outline: Pt[] }
    | null;
  /** The QR code region (with its quiet zone), on the first side. */
  qrcode: Pt[] | null;
}

/** The page's homography from the reading's `corners` (tl, tr, bl, br as x, y), or null. */
export function cornerHomography(corners: readonly number[] | undefined): Homography | null {
  if (corners?.length !== 8 || corners.some((v) => !Number.isFinite(v))) return null;
  const pts: Pt[] = [0, 1, 2, 3].map((i) => ({ x: corners[2 * i]!, y: corners[2 * i + 1]! }));
  return solveHomography([fiducialCentre('tl'), fiducialCentre('tr'), fiducialCentre('bl'), fiducialCentre('br')], pts);
}

const r1 = (v: number) => Math.round(v * 10) / 10;

function ellipse(h: Homography, x: number, y: number, w: number, hh: number): OverlayEllipse {
  const c = apply(h, x, y);
  const a0 = apply(h, x - w / 2, y),
    a1 = apply(h, x + w / 2, y);
  const b0 = apply(h, x, y - hh / 2),
    b1 = apply(h, x, y + hh / 2);
  return {
    cx: r1(c.x),
    cy: r1(c.y),
    rx: r1(Math.hypot(a1.x - a0.x, a1.y - a0.y) / 2),
    ry: r1(Math.hypot(b1.x - b0.x, b1.y - b0.y) / 2),
    angle: r1((Math.atan2(a1.y - a0.y, a1.x - a0.x) * 180) / Math.PI),
  };
}

function box(h: Homography, x: number, y: number, w: number, hh: number): Pt[] {
  return [
    [x, y],
    [x + w, y],
    [x + w, y + hh],
    [x, y + hh],
  ].map(([u, v]) => {
    const p = apply(h, u!, v!);
    return { x: r1(p.x), y: r1(p.y) };
  });
}

/**
 * The overlay of one side: `states` gives each area's state and score (the reading's, or a
 * result's after review), by `chapter:index`; an area without one is drawn as empty.
 */
export function pageOverlay(
  side: LayoutSide,
  h: Homography,
  states: ReadonlyMap<string, { state: AreaState; score: number }>,
): PageOverlay {
  const areas = side.areas.map((a) => {
    const s = states.get(`${a.chapter}:${a.index}`) ?? { state: 'empty' as const, score: 0 };
    return { chapter: a.chapter, index: a.index, state: s.state, score: s.score, ...ellipse(h, a.x, a.y, a.w, a.h) };
  });
  let student: PageOverlay['student'] = null;
  if (side.student_cells.length > 0) {
    const xs = side.student_cells.flatMap((c) => [c.x - c.w / 2, c.x + c.w / 2]);
    const ys = side.student_cells.flatMap((c) => [c.y - c.h / 2, c.y + c.h / 2]);
    const [x0, x1, y0, y1] = [
      Math.min(...xs) - 1.5,
      Math.max(...xs) + 1.5,
      Math.min(...ys) - 1.5,
      Math.max(...ys) + 1.5,
    ];
    student = {
      kind: 'bubbles',
      outline: box(h, x0, y0, x1 - x0, y1 - y0),
      cells: side.student_cells.map((c) => ({
        position: c.position,
        value: c.value,
        ...ellipse(h, c.x, c.y, c.w, c.h),
      })),
    };
  } else if (side.barcode) {
    const b = side.barcode;
    student = { kind: 'barcode', outline: box(h, b.x, b.y, b.w, b.h) };
  }
  let qrcode: Pt[] | null = null;
  if (side.qrcode) {
    const q = side.qrcode,
      quiet = 4 * q.module;
    qrcode = box(h, q.x - quiet, q.y - quiet, q.w + 2 * quiet, q.h + 2 * quiet);
  }
  return { areas, student, qrcode };
}

/** Outline colours, also the console's (docs/console.md): filled blue, uncertain orange, empty grey. */
export const OVERLAY_COLOURS: Record<AreaState, string> = { filled: '#1565c0', uncertain: '#e65100', empty: '#9e9e9e' };

const pts = (p: readonly Pt[]) => p.map((q) => `${q.x},${q.y}`).join(' ');

/** The overlay's shapes as SVG elements in image pixels (no <svg> around them). */
export function overlayShapes(o: PageOverlay): string {
  const out: string[] = [];
  if (o.qrcode)
    out.push(
      `<polygon class="ov-qr" points="${pts(o.qrcode)}" fill="none" stroke="#6a1b9a" stroke-width="4" stroke-dasharray="12 6"/>`,
    );
  if (o.student) {
    out.push(
      `<polygon class="ov-student" points="${pts(o.student.outline)}" fill="none" stroke="#2e7d32" stroke-width="4" stroke-dasharray="12 6"/>`,
    );
    if (o.student.kind === 'bubbles') {
      for (const c of o.student.cells)
        out.push(
          `<ellipse cx="${c.cx}" cy="${c.cy}" rx="${c.rx}" ry="${c.ry}" transform="rotate(${c.angle} ${c.cx} ${c.cy})" fill="none" stroke="#2e7d32" stroke-width="1.5"/>`,
        );
    }
  }
  for (const a of o.areas) {
    const w = a.state === 'empty' ? 2 : 4;
    out.push(
      `<ellipse class="ov-area ov-${a.state}" cx="${a.cx}" cy="${a.cy}" rx="${r1(a.rx + 3)}" ry="${r1(a.ry + 3)}" transform="rotate(${a.angle} ${a.cx} ${a.cy})" fill="${a.state === 'filled' ? OVERLAY_COLOURS.filled : 'none'}" fill-opacity="0.18" stroke="${OVERLAY_COLOURS[a.state]}" stroke-width="${w}"/>`,
    );
    if (a.state === 'uncertain') {
      const size = Math.max(10, r1(a.ry * 0.9));
      out.push(
        `<text x="${r1(a.cx - a.rx)}" y="${r1(a.cy + a.ry + 6 + size)}" font-family="DejaVu Sans, sans-serif" font-size="${size}" fill="${OVERLAY_COLOURS.uncertain}">${a.score.toFixed(2)}</text>`,
      );
    }
  }
  return out.join('');
}

/**
 * The page image with the overlay drawn on it, as JPEG: what a person looks at instead of
 * reading coordinates. `width`×`height` of the image as scanned (upside-down pages stay as they
 * came: the homography already maps into them).
 */
export async function annotatePage(image: Uint8Array, overlay: PageOverlay | null, note?: string): Promise<Uint8Array> {
  const img = sharp(image, { failOn: 'none' });
  const meta = await img.metadata();
  const width = meta.width ?? 0,
    height = meta.height ?? 0;
  if (!width || !height) throw new Error('the page image has no size');
  const label = note
    ? `<rect x="0" y="0" width="${width}" height="${Math.round(height / 40)}" fill="#fff" fill-opacity="0.85"/><text x="10" y="${Math.round(height / 55)}" font-family="DejaVu Sans, sans-serif" font-size="${Math.round(height / 80)}" fill="#b71c1c">${escapeXml(note)}</text>`
    : '';
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${overlay ? overlayShapes(overlay) : ''}${label}</svg>`;
  const out = await img
    .flatten({ background: '#ffffff' })
    .composite([{ input: Buffer.from(svg), top: 0, left: 0 }])
    .jpeg({ quality: 80 })
    .toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** An image's size in pixels from its header (0 × 0 when it cannot be read). */
export async function imageSize(image: Uint8Array): Promise<{ width: number; height: number }> {
  try {
    const m = await sharp(image, { failOn: 'none' }).metadata();
    return { width: m.width ?? 0, height: m.height ?? 0 };
  } catch {
    return { width: 0, height: 0 };
  }
}

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
