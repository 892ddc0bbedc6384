// A stack of filled feedback cards that needs a teacher (docs/cards.md, "The review loop"),
// drawn by the recognizer's synthetic generator from the documented example card, duplex:
//   student 1: clear pen marks only (nothing to review);
//   student 2: faint pencil and erasure residue on empty areas (uncertain areas);
//   student 3: two marks in every student-number column (1001);
//   student 4: a stray sheet that is not a card between its front and its back (1004).
import { planTemplate, type DrawOp, type PageSource } from '@boxhub/recognizer';
import { fillCard, type MarkMix } from '@boxhub/recognizer/synthetic/filled-card.ts';
import { renderScan } from '@boxhub/recognizer/synthetic/render-scan.ts';
import { mulberry32 } from '@boxhub/recognizer/synthetic/random.ts';
import { exampleCard } from './card-stack.ts';

const PEN: MarkMix = {
  fillRate: 0.3,
  filled: ['pen'],
  emptyMarks: [],
  emptyMarkRate: 0,
  doubleDigitRate: 0,
  studentNumberKinds: ['pen'],
};

export interface ReviewStack {
  pages: Array<{ jpeg: Uint8Array; source: PageSource }>;
  /** The student numbers marked, per student (student 3's is marked twice per digit). */
  studentIds: string[];
  /** page_number of the stray sheet (student 4's). */
  strayPage: number;
}

/** A sheet that is not a card: printed lines of text and a dark bar, no corner marks. */
async function straySheet(seed: number): Promise<Uint8Array> {
  const ops: DrawOp[] = Array.from(
    { length: 30 },
    (_, i): DrawOp => ({
      op: 'text',
      x: 25,
      y: 40 + i * 7,
      size: 11,
      text: `Homework notice, line ${i + 1}: please bring your calculator`,
      align: 'left',
      grey: 0,
    }),
  );
  ops.push({ op: 'rect', x: 40, y: 260, w: 120, h: 8, grey: 0.2 });
  return renderScan(ops, [], { dpi: 200, rotationDeg: 0.3, noise: 3, jpegQuality: 80, seed });
}

/** The first `students` of the four (all by default). */
export async function reviewStack(students = 4): Promise<ReviewStack> {
  const { layout, cards } = await planTemplate(exampleCard);
  const r = mulberry32(9191);
  const pages: ReviewStack['pages'] = [];
  const studentIds: string[] = [];
  const add = async (jpeg: Uint8Array) => {
    const n = pages.length + 1;
    pages.push({
      jpeg,
      source: { paper_number: Math.ceil(n / 2), page_number: n, front: n % 2 === 1, item_id: Math.ceil(n / 4) },
    });
  };
  let strayPage = 0;
  for (let s = 1; s <= students; s++) {
    const card = fillCard(layout, cards[0]!, r, s === 3 ? { ...PEN, doubleDigitRate: 1 } : PEN);
    studentIds.push(card.studentId);
    if (s === 2) {
      // Faint traces on empty areas of the front: the recognizer cannot tell them from
      // erasures or faint fills by the area alone, so it says it is unsure (docs/cards.md, section 9).
      const front = card.sides[0]!;
      const empty = front.truth.filter((t) => !t.filled).slice(0, 6);
      for (const [i, t] of empty.entries()) {
        const a = layout.sides[0]!.areas.find((x) => x.chapter === t.chapter && x.index === t.index)!;
        front.marks.push({
          kind: i % 2 ? 'erasure' : 'very-faint-pencil',
          x: a.x,
          y: a.y,
          w: a.w,
          h: a.h,
          seed: 100 + i,
          level: 0.12 + i * 0.01,
        });
      }
    }
    for (const [i, side] of card.sides.entries()) {
      if (s === 4 && i === 1) {
        await add(await straySheet(pages.length + 1));
        strayPage = pages.length;
      }
      await add(
        await renderScan(side.ops, side.marks, {
          dpi: 200,
          rotationDeg: 0.3,
          noise: 3,
          jpegQuality: 80,
          seed: pages.length + 1,
        }),
      );
    }
  }
  return { pages, studentIds, strayPage };
}
