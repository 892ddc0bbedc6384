// Geometry every printed side shares, whatever the card: the recognizer finds the page and
// reads which layout, sheet and side it is before it knows anything else (docs/cards.md).
// Millimetres from the page's top-left corner, A4 portrait.

export const PAGE = { width: 210, height: 297 } as const;

/** Centres of the four fiducials sit this far from both paper edges. */
export const FIDUCIAL_INSET = 15;
/** Side of the three plain square fiducials. */
export const FIDUCIAL_SMALL = 6;
/** Side of the top-left fiducial: larger, so orientation is known without any code. */
export const FIDUCIAL_LARGE = 9;
/** Nothing else is printed within this distance of a paper corner (both axes). */
export const CORNER_KEEP_OUT = 32;

/** Content (chapters, codes) is printed inside this box. */
export const CONTENT = { left: 17, right: 193, top: 34, bottom: 262 } as const;

export type Corner = 'tl' | 'tr' | 'bl' | 'br';
export const CORNERS: readonly Corner[] = ['tl', 'tr', 'bl', 'br'];

export function fiducialCentre(c: Corner): { x: number; y: number } {
  return {
    x: c === 'tl' || c === 'bl' ? FIDUCIAL_INSET : PAGE.width - FIDUCIAL_INSET,
    y: c === 'tl' || c === 'tr' ? FIDUCIAL_INSET : PAGE.height - FIDUCIAL_INSET,
  };
}

export function fiducialSize(c: Corner): number {
  return c === 'tl' ? FIDUCIAL_LARGE : FIDUCIAL_SMALL;
}

/**
 * The identification strip: 2 rows x 24 square cells at the bottom centre, black = 1.
 * It is read by sampling through the page homography, so it needs no barcode decoder and
 * its 3 mm cells survive 100-dpi scans, blur and JPEG artefacts.
 */
export const ID_STRIP = { cols: 24, rows: 2, cell: 3, x: (PAGE.width - 24 * 3) / 2, y: 275 } as const;

/**
 * The student strip, left of the identification strip: 2 rows x 12 cells of 2.5 mm, printed only
 * on personalised cards (one card per student), on every side. It carries 16 bits of the
 * student's number and a CRC over them and the layout key, so that a sheet of another student's
 * card is told apart from the next sheet of this one (id-strip.ts). Blank on other cards.
 */
export const STUDENT_STRIP = { cols: 12, rows: 2, cell: 2.5, x: 35, y: 275.5 } as const;
