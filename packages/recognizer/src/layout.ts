// The layout: where everything is on each printed side, in millimetres from the page's
// top-left corner. It is what template generation stores (layout.json) and the only thing
// recognition needs besides the page image.
import { createHash } from 'node:crypto';
import type { CardDefinition, StudentNumberSpec } from './card-definition.ts';
import {
  CONTENT,
  CORNERS,
  fiducialCentre,
  fiducialSize,
  ID_STRIP,
  PAGE,
  STUDENT_STRIP,
  type Corner,
} from './page-frame.ts';
import { encodeSideIdentity, layoutKeyHex, MAX_SHEETS, type Side } from './id-strip.ts';

export type { Side };

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}
/** x, y are the centre; w, h the size. */
export interface LayoutArea {
  chapter: number;
  index: number;
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface StudentCell {
  position: number;
  value: number;
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface LayoutFiducial {
  corner: Corner;
  x: number;
  y: number;
  size: number;
}

export interface LayoutSide {
  sheet: number;
  side: Side;
  fiducials: LayoutFiducial[];
  /** Top-left corner of the identification strip; bits row-major, 1 = black cell. */
  id_code: Box & { cols: number; rows: number; cell: number; bits: number[] };
  /** The QR symbol itself (without quiet zone); only on the first side. */
  qrcode?: Box & { modules: number; module: number };
  /** The region where the student-number barcode (Code128) is printed or stuck. */
  barcode?: Box;
  /**
   * Top-left corner of the student strip (page-frame.ts, STUDENT_STRIP): on personalised cards it
   * carries the student's key on every side; blank otherwise. Absent in layouts made before it.
   */
  student_code?: Box & { cols: number; rows: number; cell: number };
  areas: LayoutArea[];
  student_cells: StudentCell[];
}

export interface Layout {
  format: 'boxhub-card-layout';
  version: 1;
  /** 8 hex digits; printed in every side's identification strip. */
  layout_id: string;
  card_id: string;
  title: string;
  page: { size: 'A4'; width_mm: number; height_mm: number };
  duplex: boolean;
  sheets: number;
  qrcode: string;
  student_number: StudentNumberSpec;
  chapters: Array<{ chapter: number; title: string; areas: number }>;
  /** Printed sides in scan order (sheet 1 front, sheet 1 back, sheet 2 front, ...). */
  sides: LayoutSide[];
}

/** Text and outlines that help people but are not read by the recognizer. */
export type Decoration =
  | {
      kind: 'text';
      x: number;
      y: number;
      size: number;
      text: string;
      align?: 'left' | 'center' | 'right';
      grey?: number;
    }
  | { kind: 'box'; x: number; y: number; w: number; h: number; dashed?: boolean; grey?: number };

export const AREA = { w: 7, h: 4.4, pitchX: 11.5, rowHeight: 9, titleHeight: 6, chapterGap: 2.5 } as const;
export const CELL = { w: 5, h: 3.4, pitchX: 6.5, pitchY: 4.6 } as const;
/**
 * QR module size: as large as the header allows (short content gets up to 1.25 mm), never
 * under 0.9 mm, the smallest that survives 100-dpi JPEG scans (docs/cards.md, "Print the template").
 */
export function qrModuleSize(modules: number): number {
  return Math.round(Math.min(1.25, Math.max(0.9, 36 / modules)) * 20) / 20;
}
/**
 * Code128 student numbers: module widths tried widest first, so that the number reads at 100 dpi
 * (a module of 0.4 mm is 1.6 pixels there and failed on most pages; the bench's barcode sets
 * measure each width), a 10-module quiet zone on each side (ISO/IEC 15417), bars 11 mm high.
 */
export const BARCODE = { modules: [0.75, 0.66, 0.6, 0.5], quiet: 10, height: 11, h: 18 } as const;

/** The widest module at which a symbol of `cols` modules, with its quiet zones, fits `width` mm; null if none does. */
export function barcodeModule(cols: number, width: number): number | null {
  for (const m of BARCODE.modules) if ((cols + 2 * BARCODE.quiet) * m <= width) return m;
  return null;
}

export class LayoutError extends Error {}

/** A stable 32-bit key of the definition; cards printed from equal definitions share it. */
export function layoutKey(def: CardDefinition): number {
  const canonical = JSON.stringify({
    // Barcode cards got a wider barcode region (readable at 100 dpi): a new key, so that a new
    // template never shares its id with a layout.json of the older geometry.
    v: def.student_number.type === 'barcode' ? 2 : 1,
    id: def.id,
    title: def.title ?? '',
    qrcode: def.qrcode,
    sn: def.student_number,
    duplex: def.duplex ?? false,
    chapters: def.chapters.map((c) => [c.areas, c.columns ?? null, c.new_side ?? false, c.title ?? '']),
  });
  return createHash('sha256').update(canonical).digest().readUInt32BE(0);
}

export interface ComputedLayout {
  layout: Layout;
  decorations: Decoration[][];
}

/**
 * Places the header (student number, QR) on the first side and flows the chapters over the
 * following rows and sides; a chapter that does not fit continues on the next side.
 * `qrModules` is the QR symbol's width in modules (it depends on the content).
 */
export function computeLayout(def: CardDefinition, qrModules: number): ComputedLayout {
  const key = layoutKey(def);
  const duplex = def.duplex ?? false;
  const sides: LayoutSide[] = [];
  const decorations: Decoration[][] = [];
  const title = def.title ?? def.id;

  const newSide = (): { side: LayoutSide; deco: Decoration[] } => {
    const n = sides.length;
    const sheet = duplex ? Math.floor(n / 2) + 1 : n + 1;
    if (sheet > MAX_SHEETS) throw new LayoutError(`the card needs more than ${MAX_SHEETS} sheets`);
    const side: Side = duplex && n % 2 === 1 ? 'back' : 'front';
    const bits = encodeSideIdentity({ layoutKey: key, sheet, side });
    const s: LayoutSide = {
      sheet,
      side,
      fiducials: CORNERS.map((c) => ({ corner: c, ...fiducialCentre(c), size: fiducialSize(c) })),
      id_code: {
        x: ID_STRIP.x,
        y: ID_STRIP.y,
        w: ID_STRIP.cols * ID_STRIP.cell,
        h: ID_STRIP.rows * ID_STRIP.cell,
        cols: ID_STRIP.cols,
        rows: ID_STRIP.rows,
        cell: ID_STRIP.cell,
        bits,
      },
      student_code: {
        x: STUDENT_STRIP.x,
        y: STUDENT_STRIP.y,
        w: STUDENT_STRIP.cols * STUDENT_STRIP.cell,
        h: STUDENT_STRIP.rows * STUDENT_STRIP.cell,
        cols: STUDENT_STRIP.cols,
        rows: STUDENT_STRIP.rows,
        cell: STUDENT_STRIP.cell,
      },
      areas: [],
      student_cells: [],
    };
    const deco: Decoration[] = [
      { kind: 'text', x: PAGE.width / 2, y: 17, size: 4.2, text: title, align: 'center' },
      {
        kind: 'text',
        x: PAGE.width / 2,
        y: 23,
        size: 2.8,
        text: `sheet ${sheet} ${side}`,
        align: 'center',
        grey: 0.35,
      },
      {
        kind: 'text',
        x: PAGE.width / 2,
        y: ID_STRIP.y + ID_STRIP.rows * ID_STRIP.cell + 4,
        size: 2.4,
        text: `${def.id}  ·  layout ${layoutKeyHex(key)}  ·  sheet ${sheet} ${side}`,
        align: 'center',
        grey: 0.35,
      },
    ];
    sides.push(s);
    decorations.push(deco);
    return { side: s, deco };
  };

  let cur = newSide();
  let y: number = CONTENT.top;

  // Header of the first side: student number on the left, QR on the right.
  const first = cur.side;
  const qm = qrModuleSize(qrModules);
  const qrSize = round(qrModules * qm);
  // The quiet zone (4 modules) is blank paper around the symbol.
  first.qrcode = {
    x: round(CONTENT.right - 4 * qm - qrSize),
    y: round(CONTENT.top + 4 * qm),
    w: qrSize,
    h: qrSize,
    modules: qrModules,
    module: qm,
  };
  let headerBottom = first.qrcode.y + qrSize + 4 * qm;
  cur.deco.push({ kind: 'text', x: CONTENT.left, y: CONTENT.top + 3, size: 3.2, text: 'Student number' });
  if (def.student_number.type === 'bubbles') {
    const digits = def.student_number.digits;
    const gridX = CONTENT.left + 6;
    const boxesY = CONTENT.top + 5;
    const gridY = boxesY + 9;
    for (let p = 0; p < digits; p++) {
      const cx = gridX + p * CELL.pitchX;
      // Boxes to write the digits in, for people; the bubbles below are what is read.
      cur.deco.push({
        kind: 'box',
        x: cx - CELL.pitchX / 2 + 0.4,
        y: boxesY,
        w: CELL.pitchX - 0.8,
        h: 6.5,
        grey: 0.45,
      });
      for (let v = 0; v <= 9; v++) {
        first.student_cells.push({
          position: p + 1,
          value: v,
          x: round(cx),
          y: round(gridY + v * CELL.pitchY),
          w: CELL.w,
          h: CELL.h,
        });
      }
    }
    for (let v = 0; v <= 9; v++)
      cur.deco.push({
        kind: 'text',
        x: CONTENT.left + 1,
        y: gridY + v * CELL.pitchY + 1,
        size: 2.6,
        text: String(v),
        grey: 0.35,
      });
    headerBottom = Math.max(headerBottom, gridY + 9 * CELL.pitchY + CELL.h / 2 + 2);
    if (gridX + (digits - 1) * CELL.pitchX + CELL.w > first.qrcode.x - 4)
      throw new LayoutError('student number grid overlaps the QR code');
  } else {
    // As wide as the header allows: up to the QR code's quiet zone, less a 3 mm gap.
    first.barcode = {
      x: CONTENT.left,
      y: CONTENT.top + 6,
      w: round(first.qrcode.x - 4 * qm - 3 - CONTENT.left),
      h: BARCODE.h,
    };
    headerBottom = Math.max(headerBottom, first.barcode.y + BARCODE.h + 2);
  }
  y = headerBottom + 4;

  const chapters: Layout['chapters'] = [];
  def.chapters.forEach((ch, ci) => {
    const chapter = ci + 1;
    const chTitle = ch.title ?? `Chapter ${chapter}`;
    chapters.push({ chapter, title: chTitle, areas: ch.areas });
    const columns = ch.columns ?? Math.min(ch.areas, 15);
    const rows = Math.ceil(ch.areas / columns);
    const startNew = () => {
      cur = newSide();
      y = CONTENT.top;
    };
    if ((ch.new_side && cur.side.areas.length > 0) || y + AREA.titleHeight + AREA.rowHeight > CONTENT.bottom)
      startNew();
    const putTitle = (cont: boolean) => {
      cur.deco.push({
        kind: 'text',
        x: CONTENT.left,
        y: y + 4,
        size: 3.4,
        text: `${chapter}. ${chTitle}${cont ? ' (continued)' : ''}`,
      });
      y += AREA.titleHeight;
    };
    putTitle(false);
    let index = 1;
    for (let r = 0; r < rows; r++) {
      if (y + AREA.rowHeight > CONTENT.bottom) {
        startNew();
        putTitle(true);
      }
      for (let c = 0; c < columns && index <= ch.areas; c++, index++) {
        const cx = CONTENT.left + AREA.w / 2 + 1 + c * AREA.pitchX;
        const cy = y + 5.6;
        cur.side.areas.push({ chapter, index, x: round(cx), y: round(cy), w: AREA.w, h: AREA.h });
        cur.deco.push({ kind: 'text', x: cx, y: y + 2.4, size: 2.4, text: String(index), align: 'center', grey: 0.3 });
      }
      y += AREA.rowHeight;
    }
    y += AREA.chapterGap;
  });

  const sheets = sides[sides.length - 1]!.sheet;
  const layout: Layout = {
    format: 'boxhub-card-layout',
    version: 1,
    layout_id: layoutKeyHex(key),
    card_id: def.id,
    title,
    page: { size: 'A4', width_mm: PAGE.width, height_mm: PAGE.height },
    duplex,
    sheets,
    qrcode: def.qrcode,
    student_number: def.student_number,
    chapters,
    sides,
  };
  return { layout, decorations };
}

function round(v: number): number {
  return Math.round(v * 100) / 100;
}
