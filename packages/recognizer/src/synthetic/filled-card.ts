// A student's filled-in card with its ground truth: which marks went where, and what a
// correct recognizer must report.
import type { Layout } from '../layout.ts';
import type { CardDrawing } from '../template-pdf.ts';
import type { DrawOp } from '../page-drawing.ts';
import { isFilledKind, pencilKind, type Mark, type MarkKind } from './marks.ts';
import { between, pick, type Random } from './random.ts';

/**
 * A student's hand: one instrument for the whole card, as in a classroom. 'pen' never erases;
 * 'pencil' fills at the student's own darkness (0.38-0.7) and erases down to a part of it;
 * 'light' is a hard pencil or a light hand (fills 0.12-0.30 around the student's own 0.12-0.27, lines darker; widened from 0.15
 * after generator B's lightest hands measured below A's); 'mixed' takes any
 * mark kind for any area (fills, light and faint pencil, erasures 0.04-0.12 mixed on one page).
 */
export type Hand = 'pen' | 'pencil' | 'light' | 'mixed';

export interface MarkMix {
  /** Probability that an area is meant as filled. */
  fillRate: number;
  filled: readonly MarkKind[];
  /** Marks on areas meant as empty (besides nothing at all) and how often. */
  emptyMarks: readonly MarkKind[];
  emptyMarkRate: number;
  /** Probability that an otherwise untouched empty area of a pencil (or mixed) hand is smudged. */
  smudgeRate?: number;
  /** Probability of a second mark in one student-number column (must give 1001). */
  doubleDigitRate: number;
  studentNumberKinds: readonly MarkKind[];
  /** When set, each card gets one hand (weights) and its marks follow it; 'mixed' uses the lists above. */
  hands?: ReadonlyArray<readonly [Hand, number]>;
}

/** The fill styles a hand uses (solid fills dominate), by repetition. */
const STYLES: Record<Exclude<Hand, 'mixed'>, readonly MarkKind[]> = {
  pen: [
    'pen',
    'pen',
    'pen',
    'pen',
    'pen',
    'pen',
    'pen',
    'pen',
    'pen',
    'pen',
    'partial',
    'small',
    'tick',
    'tick',
    'thin-tick',
    'cross',
    'thin-cross',
  ],
  pencil: [
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'partial',
    'small',
    'tick',
    'tick',
    'thin-tick',
    'cross',
    'thin-cross',
  ],
  light: [
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'pencil',
    'small',
    'light-small',
    'light-partial',
    'tick',
    'tick',
    'thin-tick',
    'cross',
  ],
};

interface HandMarker {
  mark(r: Random, filled: boolean): { kind: MarkKind; level?: number };
}

function handMarker(hand: Hand, r: Random, mix: MarkMix): HandMarker {
  if (hand === 'mixed') {
    return {
      mark: (q, filled) => ({
        kind: filled
          ? pick(q, mix.filled)
          : q() < mix.emptyMarkRate
            ? pick(q, mix.emptyMarks)
            : smudged(q, mix)
              ? 'smudge'
              : 'none',
      }),
    };
  }
  const fill = hand === 'pencil' ? between(r, 0.38, 0.7) : hand === 'light' ? between(r, 0.12, 0.27) : 1;
  const line = hand === 'light' ? between(r, 0.4, 0.6) : hand === 'pencil' ? Math.min(0.75, fill + 0.1) : undefined;
  const styles = STYLES[hand];
  return {
    mark(q, filled) {
      if (!filled) {
        if (q() >= mix.emptyMarkRate) {
          // A finger smudges graphite at 15-45 % of a light hand's darkness (a dark pencil's at
          // most 0.1); on top of the marks below, which keep their rates.
          if (hand !== 'pen' && smudged(q, mix))
            return {
              kind: 'smudge',
              level: Math.min(0.1, fill * (hand === 'light' ? between(q, 0.15, 0.45) : between(q, 0.1, 0.2))),
            };
          return { kind: 'none' };
        }
        // Pen cannot be erased; pencil erasures leave 8-25 % of the student's darkness.
        if (hand === 'pen' || q() < 0.5) return { kind: 'stray' };
        return { kind: 'erasure', level: Math.min(0.14, fill * between(q, 0.08, 0.25)) };
      }
      const style = pick(q, styles);
      if (hand === 'pen') return { kind: style };
      if (style === 'pencil') {
        const spread = hand === 'light' ? 0.04 : 0.06;
        const d = Math.min(
          hand === 'light' ? 0.3 : 0.75,
          Math.max(hand === 'light' ? 0.12 : 0.15, fill + between(q, -spread, spread)),
        );
        return { kind: pencilKind(d), level: d };
      }
      // Shading (a half fill) has the fill's darkness; a dot or a line is pressed, darker; a
      // light dot is the fill's darkness or a little more.
      if (style === 'light-partial') return { kind: style, level: Math.max(0.12, fill + between(q, -0.03, 0.03)) };
      if (style === 'light-small')
        return { kind: style, level: Math.min(0.3, Math.max(0.12, fill + between(q, -0.02, 0.06))) };
      return { kind: style, level: style === 'partial' ? fill : line };
    },
  };
}

export interface AreaTruth {
  chapter: number;
  index: number;
  filled: boolean;
  kind: MarkKind;
}
export interface FilledSide {
  sheet: number;
  side: 'front' | 'back';
  ops: DrawOp[];
  marks: Mark[];
  truth: AreaTruth[];
}
export interface FilledCard {
  sides: FilledSide[];
  studentId: string;
  /** True when the student number was marked ambiguously on purpose. */
  studentNumberAmbiguous: boolean;
  qrcode: string;
  hand: Hand;
}

/** `studentId`: the number a student marks in the student-number bubbles (their own, printed on
 *  a personalised card); a random one otherwise. */
export function fillCard(
  layout: Layout,
  drawing: CardDrawing,
  r: Random,
  mix: MarkMix,
  o: { studentId?: string } = {},
): FilledCard {
  let studentId = drawing.student?.student_id ?? '';
  let ambiguous = false;
  const hand = mix.hands ? pickWeighted(r, mix.hands) : 'mixed';
  const marker = handMarker(hand, r, mix);
  const sides: FilledSide[] = drawing.sides.map((d, i) => {
    const ls = layout.sides[i]!;
    const marks: Mark[] = [];
    const truth: AreaTruth[] = [];
    for (const a of ls.areas) {
      const { kind, level } = marker.mark(r, r() < mix.fillRate);
      if (kind !== 'none')
        marks.push({
          kind,
          x: a.x,
          y: a.y,
          w: a.w,
          h: a.h,
          seed: Math.floor(r() * 2 ** 31),
          ...(level !== undefined ? { level } : {}),
        });
      truth.push({ chapter: a.chapter, index: a.index, filled: isFilledKind(kind), kind });
    }
    if (ls.student_cells.length > 0) {
      const digits = Math.max(...ls.student_cells.map((c) => c.position));
      let id = '';
      for (let p = 1; p <= digits; p++) {
        // Drawn either way, so a given number leaves the rest of the card's marks as they were.
        const drawn = Math.floor(r() * 10);
        const v = o.studentId !== undefined ? Number(o.studentId[p - 1]) : drawn;
        id += String(v);
        const cell = ls.student_cells.find((c) => c.position === p && c.value === v)!;
        marks.push({
          kind: pick(r, mix.studentNumberKinds),
          x: cell.x,
          y: cell.y,
          w: cell.w,
          h: cell.h,
          seed: Math.floor(r() * 2 ** 31),
        });
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
  return { sides, studentId, studentNumberAmbiguous: ambiguous, qrcode: layout.qrcode, hand };
}

function smudged(r: Random, mix: MarkMix): boolean {
  return mix.smudgeRate !== undefined && r() < mix.smudgeRate;
}

function pickWeighted<T>(r: Random, items: ReadonlyArray<readonly [T, number]>): T {
  const total = items.reduce((a, [, w]) => a + w, 0);
  let x = r() * total;
  for (const [v, w] of items) {
    x -= w;
    if (x < 0) return v;
  }
  return items[items.length - 1]![0];
}

/** What the student assembler must report for this card when every page reads. */
export function expectedFills(layout: Layout, card: FilledCard): number[][] {
  const fills: number[][] = layout.chapters.map(() => []);
  for (const s of card.sides) for (const t of s.truth) if (t.filled) fills[t.chapter - 1]!.push(t.index);
  return fills.map((f) => f.sort((a, b) => a - b));
}
