// A JPG task as one PDF page the size of the media, for printers that cannot scale JPEG
// themselves (no print-scaling-supported value for it) or take no JPEG: the picture is turned
// as its EXIF orientation says, turned a further quarter when that fills the page better, and
// scaled to fit inside the printer's margins or, borderless, to fill the whole page (the
// overflow is cut off), centred. The JPEG data is embedded as it is (DCTDecode), not re-encoded.
import { writeFile } from 'node:fs/promises';
import { displayedSize, readJpegHeader } from '@boxhub/protocol/jpeg-header.ts';

export interface Margins {
  top: number;
  bottom: number;
  left: number;
  right: number;
}
export interface JpegPage {
  /** Page size, points. */
  width: number;
  height: number;
  /** The printable area's margins, points (0 for borderless). */
  margins: Margins;
  scaling: 'fit' | 'fill';
}

type Pt = [number, number];
type Fn = (p: Pt) => Pt;

/** Stored (y down) → displayed (y down) for EXIF orientations 1-8 (TIFF 6.0 tag 274). */
function orient(o: number, w: number, h: number): Fn {
  switch (o) {
    case 2:
      return ([x, y]) => [w - x, y];
    case 3:
      return ([x, y]) => [w - x, h - y];
    case 4:
      return ([x, y]) => [x, h - y];
    case 5:
      return ([x, y]) => [y, x];
    case 6:
      return ([x, y]) => [h - y, x];
    case 7:
      return ([x, y]) => [h - y, w - x];
    case 8:
      return ([x, y]) => [y, w - x];
    default:
      return (p) => p;
  }
}

/** The PDF matrix [a b c d e f] of an affine map, read off three points. */
function matrixOf(t: Fn): [number, number, number, number, number, number] {
  const [e, f] = t([0, 0]);
  const [x1, y1] = t([1, 0]);
  const [x2, y2] = t([0, 1]);
  return [x1 - e, y1 - f, x2 - e, y2 - f, e, f];
}

/** Where the picture lands: the CTM that maps the image's unit square onto the page. */
export function placement(
  img: { width: number; height: number; orientation: number },
  page: JpegPage,
): { matrix: [number, number, number, number, number, number]; turned: boolean; scale: number } {
  const { width: w, height: h } = img;
  const shown = displayedSize({ ...img, components: 3, progressive: false });
  const ax = page.margins.left;
  const ay = page.margins.bottom;
  const aw = page.width - page.margins.left - page.margins.right;
  const ah = page.height - page.margins.top - page.margins.bottom;
  // Turn a landscape picture on a portrait area (and the other way round) when it is not square.
  const turned = shown.width !== shown.height && aw !== ah && shown.width > shown.height !== aw > ah;
  const W = turned ? shown.height : shown.width;
  const H = turned ? shown.width : shown.height;
  const s = page.scaling === 'fill' ? Math.max(aw / W, ah / H) : Math.min(aw / W, ah / H);
  const ox = ax + (aw - W * s) / 2;
  const oy = ay + (ah - H * s) / 2;
  const toStored: Fn = ([u, v]) => [u * w, (1 - v) * h]; // image unit square (y up) → stored pixels (y down)
  const exif = orient(img.orientation, w, h); // → displayed pixels (y down)
  const turn: Fn = turned ? ([x, y]) => [shown.height - y, x] : (p) => p; // a quarter clockwise
  const toPage: Fn = ([x, y]) => [ox + x * s, oy + (H - y) * s]; // → page points (y up)
  return { matrix: matrixOf((p) => toPage(turn(exif(toStored(p))))), turned, scale: s };
}

export async function jpegToPdf(jpeg: Uint8Array, out: string, page: JpegPage): Promise<void> {
  const header = readJpegHeader(jpeg);
  // pdf-lib is loaded with the first JPG task, not at the agent's start (docs/box-protocol.md,
  // "Memory on the box").
  const {
    PDFDocument,
    clip,
    concatTransformationMatrix,
    drawObject,
    endPath,
    popGraphicsState,
    pushGraphicsState,
    rectangle,
  } = await import('pdf-lib');
  const doc = await PDFDocument.create();
  const image = await doc.embedJpg(jpeg);
  const p = doc.addPage([page.width, page.height]);
  const name = p.node.newXObject('Im', image.ref);
  const { matrix } = placement(header, page);
  const m = page.margins;
  p.pushOperators(
    pushGraphicsState(),
    // Fill overflows the area: cut it at the area's edge (the page edge when borderless).
    rectangle(m.left, m.bottom, page.width - m.left - m.right, page.height - m.top - m.bottom),
    clip(),
    endPath(),
    concatTransformationMatrix(...matrix),
    drawObject(name),
    popGraphicsState(),
  );
  await writeFile(out, await doc.save());
}
