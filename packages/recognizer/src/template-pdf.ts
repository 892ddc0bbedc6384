// Template generation: definition -> layout + printable A4 PDF (one card per student when a
// student list is given). Printed at 100 %, the PDF's millimetres are the layout's.
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { parseCardDefinition, type CardDefinition } from './card-definition.ts';
import { computeLayout, LayoutError, type Layout } from './layout.ts';
import { encodeCode128, encodeQr } from './codes.ts';
import { drawSide, type DrawOp, type PersonalContent } from './page-drawing.ts';
import { PAGE } from './page-frame.ts';
import { encodeStudentIdentity, studentKey } from './id-strip.ts';

export interface TemplateStudent {
  student_id: string;
  name?: string;
}
export interface TemplateOptions {
  students?: TemplateStudent[];
}
export interface SideDrawing {
  sheet: number;
  side: 'front' | 'back';
  ops: DrawOp[];
}
/** One card = the drawings of its printed sides, in print order. */
export interface CardDrawing {
  student?: TemplateStudent;
  sides: SideDrawing[];
}

const PT = 72 / 25.4;

/** Layout and the drawing of every card, without writing a PDF (used by the benchmark). */
export async function planTemplate(
  input: CardDefinition | unknown,
  opts: TemplateOptions = {},
): Promise<{ layout: Layout; cards: CardDrawing[] }> {
  const def = parseCardDefinition(input);
  const qr = await encodeQr(def.qrcode);
  const { layout, decorations } = computeLayout(def, qr.cols);
  const students = opts.students ?? [];
  for (const s of students) checkStudent(def, s);
  const cards: CardDrawing[] = [];
  const makeCard = async (student?: TemplateStudent): Promise<CardDrawing> => {
    const personal: PersonalContent = { qr };
    if (student) {
      personal.label = `${student.name ? `${student.name}  ·  ` : ''}${student.student_id}`;
      personal.studentBits = encodeStudentIdentity(parseInt(layout.layout_id, 16), studentKey(student.student_id));
      if (def.student_number.type === 'barcode')
        personal.barcode = { matrix: await encodeCode128(student.student_id), text: student.student_id };
    }
    return {
      ...(student ? { student } : {}),
      sides: layout.sides.map((s, i) => ({
        sheet: s.sheet,
        side: s.side,
        ops: drawSide(layout, i, decorations[i]!, personal),
      })),
    };
  };
  if (students.length === 0) cards.push(await makeCard());
  else for (const s of students) cards.push(await makeCard(s));
  return { layout, cards };
}

function checkStudent(def: CardDefinition, s: TemplateStudent): void {
  if (typeof s.student_id !== 'string' || !/^[\x21-\x7e]{1,32}$/.test(s.student_id))
    throw new LayoutError(`student_id ${JSON.stringify(s.student_id)}: 1-32 printable ASCII characters`);
  if (
    def.student_number.type === 'bubbles' &&
    !new RegExp(`^[0-9]{${def.student_number.digits}}$`).test(s.student_id)
  ) {
    throw new LayoutError(
      `student_id ${s.student_id}: the card's bubbles hold exactly ${def.student_number.digits} digits`,
    );
  }
}

/** `{ pdf, layout }`: the printable template and where everything on it is. */
export async function generateTemplate(
  input: CardDefinition | unknown,
  opts: TemplateOptions = {},
): Promise<{ pdf: Uint8Array; layout: Layout }> {
  const { layout, cards } = await planTemplate(input, opts);
  const doc = await PDFDocument.create();
  doc.setTitle(`${layout.title} (layout ${layout.layout_id})`);
  doc.setCreator('boxhub card template');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const order = printedSides(layout);
  for (const card of cards) {
    for (const i of order) {
      const page = doc.addPage([PAGE.width * PT, PAGE.height * PT]);
      if (i !== null) renderPdfPage(page, font, card.sides[i]!.ops);
    }
  }
  return { pdf: await doc.save(), layout };
}

/**
 * The pages of one card in the template's PDF: the index in `layout.sides` each page prints,
 * or null for a blank back. Duplex cards keep each card on its own sheets, so a card ending on a
 * front gets a blank back (the simulated class of the demo reads a printed PDF with this).
 */
export function printedSides(layout: Pick<Layout, 'duplex' | 'sides'>): Array<number | null> {
  const order: Array<number | null> = [];
  layout.sides.forEach((s, i) => {
    order.push(i);
    const next = layout.sides[i + 1];
    if (layout.duplex && s.side === 'front' && (!next || next.sheet !== s.sheet)) order.push(null);
  });
  return order;
}

/** Helvetica (WinAnsi) cannot show every script; unknown characters print as '?'. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e\u00a0-\u00ff·]/g, '?');
}

function renderPdfPage(page: PDFPage, font: PDFFont, ops: DrawOp[]): void {
  const H = PAGE.height;
  for (const o of ops) {
    if (o.op === 'rect')
      page.drawRectangle({
        x: o.x * PT,
        y: (H - o.y - o.h) * PT,
        width: o.w * PT,
        height: o.h * PT,
        color: rgb(o.grey, o.grey, o.grey),
      });
    else if (o.op === 'outline')
      page.drawRectangle({
        x: o.x * PT,
        y: (H - o.y - o.h) * PT,
        width: o.w * PT,
        height: o.h * PT,
        borderColor: rgb(o.grey, o.grey, o.grey),
        borderWidth: o.width * PT,
        ...(o.dashed ? { borderDashArray: [2 * PT, 1.2 * PT] } : {}),
      });
    else if (o.op === 'ellipse')
      page.drawEllipse({
        x: o.cx * PT,
        y: (H - o.cy) * PT,
        xScale: o.rx * PT,
        yScale: o.ry * PT,
        borderColor: rgb(o.grey, o.grey, o.grey),
        borderWidth: o.width * PT,
      });
    else {
      const text = printable(o.text);
      const size = o.size * PT;
      const w = font.widthOfTextAtSize(text, size);
      const x = o.align === 'center' ? o.x * PT - w / 2 : o.align === 'right' ? o.x * PT - w : o.x * PT;
      page.drawText(text, { x, y: (H - o.y) * PT, size, font, color: rgb(o.grey, o.grey, o.grey) });
    }
  }
}
