// A printed side as a list of primitives in millimetres. The PDF writer and the synthetic
// scan renderer draw the same list, so the benchmark reads exactly what schools print.
import type { Decoration, Layout, LayoutSide } from './layout.ts';
import type { ModuleMatrix } from './codes.ts';
import { BARCODE, barcodeModule, LayoutError } from './layout.ts';

/** grey: 0 = black, 1 = white. */
export type DrawOp =
  | { op: 'rect'; x: number; y: number; w: number; h: number; grey: number }
  | { op: 'outline'; x: number; y: number; w: number; h: number; grey: number; width: number; dashed?: boolean }
  | { op: 'ellipse'; cx: number; cy: number; rx: number; ry: number; grey: number; width: number }
  | { op: 'text'; x: number; y: number; size: number; text: string; align: 'left' | 'center' | 'right'; grey: number };

export interface PersonalContent {
  qr: ModuleMatrix;
  /** Code128 bars of this student's number (barcode cards printed with --students). */
  barcode?: { matrix: ModuleMatrix; text: string };
  /** Printed on every side of a personalised card. */
  label?: string;
  /** The student strip's cells (row-major, 1 = black) on every side of a personalised card. */
  studentBits?: number[];
}

const OUTLINE_GREY = 0.25;

function modules(out: DrawOp[], m: ModuleMatrix, x: number, y: number, mw: number, mh: number): void {
  // Horizontal runs become one rectangle: fewer PDF operators, no hairline seams.
  for (let r = 0; r < m.rows; r++) {
    let c = 0;
    while (c < m.cols) {
      if (m.data[r * m.cols + c] !== 1) {
        c++;
        continue;
      }
      const start = c;
      while (c < m.cols && m.data[r * m.cols + c] === 1) c++;
      out.push({ op: 'rect', x: x + start * mw, y: y + r * mh, w: (c - start) * mw, h: mh, grey: 0 });
    }
  }
}

export function drawSide(
  layout: Layout,
  sideIndex: number,
  decorations: Decoration[],
  personal: PersonalContent,
): DrawOp[] {
  const side: LayoutSide = layout.sides[sideIndex]!;
  const out: DrawOp[] = [];
  for (const f of side.fiducials)
    out.push({ op: 'rect', x: f.x - f.size / 2, y: f.y - f.size / 2, w: f.size, h: f.size, grey: 0 });
  const id = side.id_code;
  for (let i = 0; i < id.bits.length; i++) {
    if (id.bits[i] !== 1) continue;
    const c = i % id.cols,
      r = Math.floor(i / id.cols);
    out.push({ op: 'rect', x: id.x + c * id.cell, y: id.y + r * id.cell, w: id.cell, h: id.cell, grey: 0 });
  }
  // Thin brackets at the strip's ends so people see it is a code, not a printing fault.
  out.push({ op: 'outline', x: id.x - 1.5, y: id.y - 1, w: id.w + 3, h: id.h + 2, grey: 0.6, width: 0.2 });
  const st = side.student_code;
  if (st && personal.studentBits) {
    personal.studentBits.forEach((b, i) => {
      if (b === 1)
        out.push({
          op: 'rect',
          x: st.x + (i % st.cols) * st.cell,
          y: st.y + Math.floor(i / st.cols) * st.cell,
          w: st.cell,
          h: st.cell,
          grey: 0,
        });
    });
    out.push({ op: 'outline', x: st.x - 1, y: st.y - 1, w: st.w + 2, h: st.h + 2, grey: 0.6, width: 0.2 });
  }
  for (const d of decorations) {
    if (d.kind === 'text')
      out.push({ op: 'text', x: d.x, y: d.y, size: d.size, text: d.text, align: d.align ?? 'left', grey: d.grey ?? 0 });
    else
      out.push({
        op: 'outline',
        x: d.x,
        y: d.y,
        w: d.w,
        h: d.h,
        grey: d.grey ?? 0.3,
        width: 0.25,
        dashed: d.dashed ?? false,
      });
  }
  if (personal.label)
    out.push({ op: 'text', x: 105, y: 29, size: 3.2, text: personal.label, align: 'center', grey: 0 });
  for (const a of side.areas)
    out.push({ op: 'ellipse', cx: a.x, cy: a.y, rx: a.w / 2, ry: a.h / 2, grey: OUTLINE_GREY, width: 0.3 });
  for (const c of side.student_cells)
    out.push({ op: 'ellipse', cx: c.x, cy: c.y, rx: c.w / 2, ry: c.h / 2, grey: OUTLINE_GREY, width: 0.3 });
  if (side.qrcode) modules(out, personal.qr, side.qrcode.x, side.qrcode.y, side.qrcode.module, side.qrcode.module);
  if (side.barcode) {
    const b = side.barcode;
    if (personal.barcode) {
      const m = personal.barcode.matrix;
      const module = barcodeModule(m.cols, b.w);
      if (module === null)
        throw new LayoutError(`student_id ${personal.barcode.text}: too long for a barcode that reads at 100 dpi`);
      const w = m.cols * module;
      // Centred: the quiet zones are the paper on both sides, inside the region.
      const x = b.x + (b.w - w) / 2;
      modules(out, m, x, b.y + 1, module, BARCODE.height);
      out.push({
        op: 'text',
        x: b.x + b.w / 2,
        y: b.y + BARCODE.height + 4.5,
        size: 3,
        text: personal.barcode.text,
        align: 'center',
        grey: 0,
      });
    } else {
      out.push({ op: 'outline', x: b.x, y: b.y, w: b.w, h: b.h, grey: 0.5, width: 0.25, dashed: true });
      out.push({
        op: 'text',
        x: b.x + b.w / 2,
        y: b.y + b.h / 2 + 1,
        size: 2.8,
        text: "stick the student's barcode label here",
        align: 'center',
        grey: 0.5,
      });
    }
  }
  return out;
}
