// A stack of filled feedback cards with its truth, for the recognition tests and benchmarks:
// drawn from the documented example card by the recognizer's synthetic generator (marks of a
// pen or pencil hand, scanned at `dpi` with mild scan effects), in scan order, duplex.
import { readFileSync } from 'node:fs';
import { planTemplate, type CardDefinition, type PageSource, type StudentResult } from '@boxhub/recognizer';
import { expectedFills, fillCard, type MarkMix } from '@boxhub/recognizer/synthetic/filled-card.ts';
import { renderScan } from '@boxhub/recognizer/synthetic/render-scan.ts';
import { mulberry32 } from '@boxhub/recognizer/synthetic/random.ts';

export const exampleCard = JSON.parse(
  readFileSync(new URL('../../../docs/examples/card.json', import.meta.url), 'utf8'),
) as CardDefinition;

const EASY: MarkMix = {
  fillRate: 0.3,
  filled: ['pen', 'pencil', 'tick', 'cross', 'partial'],
  emptyMarks: ['stray'],
  emptyMarkRate: 0.05,
  doubleDigitRate: 0,
  studentNumberKinds: ['pen', 'pencil'],
};

export interface StackPage {
  jpeg: Uint8Array;
  source: PageSource;
}
export interface CardStack {
  definition: CardDefinition;
  pages: StackPage[];
  expected: StudentResult[];
}

/** `students` cards of the example (one duplex sheet each: 2 pages per student). */
export async function cardStack(
  students: number,
  o: { dpi?: number; seed?: number; pagesPerItem?: number } = {},
): Promise<CardStack> {
  const { layout, cards } = await planTemplate(exampleCard);
  const r = mulberry32(o.seed ?? 4242);
  const pages: StackPage[] = [];
  const expected: StudentResult[] = [];
  const perItem = o.pagesPerItem ?? 4;
  for (let s = 0; s < students; s++) {
    const card = fillCard(layout, cards[0]!, r, EASY);
    const used: PageSource[] = [];
    for (const side of card.sides) {
      const n = pages.length + 1;
      const source: PageSource = {
        paper_number: Math.ceil(n / 2),
        page_number: n,
        front: n % 2 === 1,
        item_id: Math.ceil(n / perItem),
      };
      const jpeg = await renderScan(side.ops, side.marks, {
        dpi: o.dpi ?? 200,
        rotationDeg: (((n * 7) % 11) - 5) / 5,
        noise: 3,
        jpegQuality: 80,
        seed: n,
      });
      pages.push({ jpeg, source });
      used.push(source);
    }
    expected.push({
      error_code: 0,
      pages: used,
      result: {
        student_id: card.studentId,
        qrcode: card.qrcode,
        fills: expectedFills(layout, card),
        uncertain: layout.chapters.map(() => []),
      },
    });
  }
  return { definition: exampleCard, pages, expected };
}
