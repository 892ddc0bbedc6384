// A one-sheet duplex layout for the assembler's unit tests: a front with the QR code and the
// student barcode, a back, and chapters of the given sizes. Only what grouping reads is real.
import type { Layout } from '../layout.ts';

export const layoutSide = (sheet: number, s: 'front' | 'back', extra: object) => ({
  sheet,
  side: s,
  fiducials: [],
  id_code: { x: 0, y: 0, w: 0, h: 0, cols: 0, rows: 0, cell: 0, bits: [] },
  areas: [],
  student_cells: [],
  ...extra,
});

export function duplexLayout(chapterAreas: readonly number[]): Layout {
  return {
    format: 'boxhub-card-layout',
    version: 1,
    layout_id: '0000abcd',
    card_id: 't',
    title: 't',
    page: { size: 'A4', width_mm: 210, height_mm: 297 },
    duplex: true,
    sheets: 1,
    qrcode: 'q',
    student_number: { type: 'barcode' },
    chapters: chapterAreas.map((areas, i) => ({ chapter: i + 1, title: String.fromCharCode(97 + i), areas })),
    sides: [
      layoutSide(1, 'front', {
        qrcode: { x: 0, y: 0, w: 1, h: 1, modules: 21, module: 1 },
        barcode: { x: 0, y: 0, w: 1, h: 1 },
      }),
      layoutSide(1, 'back', {}),
    ],
  } as unknown as Layout;
}
