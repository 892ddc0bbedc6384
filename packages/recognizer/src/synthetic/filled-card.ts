// A student's filled-in card with its ground truth: which marks went where, and what a
// correct recognizer must report.
import type { Layout } from '../layout.ts';
import type { CardDrawing } from '../template-pdf.ts';
import type { DrawOp } from '../page-drawing.ts';
import { isFilledKind, type Mark, type MarkKind } from './marks.ts';
import { pick, type Random } from './random.ts';

export interface MarkMix {
  /** Probability that an area is meant as filled. */
  fillRate: number;
  filled: readonly MarkKind[];
  /** Marks on areas meant as empty (besides nothing at all) and how often. */
  emptyMarks: readonly MarkKind[];
  emptyMarkRate: number;
  /** Probability of a second mark in one student-number column (must give 1001). */
  doubleDigitRate: number;
  studentNumberKinds: readonly MarkKind[];
}

export interface AreaTruth { chapter: number; index: number; filled: boolean; kind: MarkKind }
export interface FilledSide { sheet: number; side: 'front' | 'back'; ops: DrawOp[]; marks: Mark[]; truth: AreaTruth[] }
export interface FilledCard {
  sides: FilledSide[];
  studentId: string;
  /** True when the student number was marked ambiguously on purpose. */
  studentNumberAmbiguous: boolean;
  qrcode: string;
}

export function fillCard(layout: Layout, drawing: CardDrawing, r: Random, mix: MarkMix): FilledCard {
  let studentId = drawing.student?.student_id ?? '';
  let ambiguous = false;
  const sides: FilledSide[] = drawing.sides.map((d, i) => {
    const ls = layout.sides[i]!;
    const marks: Mark[] = [];
    const truth: AreaTruth[] = [];
    for (const a of ls.areas) {
      const filled = r() < mix.fillRate;
      const kind: MarkKind = filled ? pick(r, mix.filled) : r() < mix.emptyMarkRate ? pick(r, mix.emptyMarks) : 'none';
      if (kind !== 'none') marks.push({ kind, x: a.x, y: a.y, w: a.w, h: a.h, seed: Math.floor(r() * 2 ** 31) });
      truth.push({ chapter: a.chapter, index: a.index, filled: isFilledKind(kind), kind });
    }
    if (ls.student_cells.length > 0) {
      const digits = Math.max(...ls.student_cells.map((c) => c.position));
      let id = '';
      for (let p = 1; p <= digits; p++) {
        const v = Math.floor(r() * 10);
        id += String(v);
        const cell = ls.student_cells.find((c) => c.position === p && c.value === v)!;
        marks.push({ kind: pick(r, mix.studentNumberKinds), x: cell.x, y: cell.y, w: cell.w, h: cell.h, seed: Math.floor(r() * 2 ** 31) });
        if (r() < mix.doubleDigitRate) {
          const second = (v + 1 + Math.floor(r() * 9)) % 10;
          const other = ls.student_cells.find((c) => c.position === p && c.value === second)!;
          marks.push({ kind: 'pen', x: other.x, y: other.y, w: other.w, h: other.h, seed: Math.floor(r() * 2 ** 31) });
          ambiguous = true;
        }
      }
      studentId = id;
    }
    return { sheet: d.sheet, side: d.side, ops: d.ops, marks, truth };
  });
  return { sides, studentId, studentNumberAmbiguous: ambiguous, qrcode: layout.qrcode };
}

/** What the student assembler must report for this card when every page reads. */
export function expectedFills(layout: Layout, card: FilledCard): number[][] {
  const fills: number[][] = layout.chapters.map(() => []);
  for (const s of card.sides) for (const t of s.truth) if (t.filled) fills[t.chapter - 1]!.push(t.index);
  return fills.map((f) => f.sort((a, b) => a - b));
}
