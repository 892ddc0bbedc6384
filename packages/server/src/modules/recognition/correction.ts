// How a correction becomes a student's result (docs/cards.md, "The review loop"): the
// remaining pages must still make one student's card (the student assembler says), the areas
// start from the recognizer's reading, keep what the current result decided, then take the
// correction; the student number is typed or read, the QR code read.
import type { ApiError, api } from '@boxhub/protocol';
import {
  RECOGNITION_ERRORS,
  StudentAssembler,
  createLayoutSet,
  poolStudent,
  type AreaState,
  type Layout,
  type PageReading,
  type PageSource,
} from '@boxhub/recognizer';
import type { RecognitionPageRow } from '../../db/schema.ts';

type Ok = Extract<PageReading, { status: 'ok' }>;
/** A result's fields (docs/api.md, "Recognition result callback", result). */
export interface Fills {
  student_id: string;
  qrcode: string;
  fills: number[][];
  uncertain?: number[][];
}

/** Where the pages and their layouts come from (the review service's stored rows). */
export interface CorrectionSources {
  /** The task's pages by page_number. */
  rows: ReadonlyMap<number, RecognitionPageRow>;
  /** The application's card template for a layout id, or null (deleted). */
  layoutOf(layoutId: string, cache: Map<string, Layout | null>): Promise<Layout | null>;
}

const key = (chapter: number, index: number) => `${chapter}:${index}`;

/**
 * The corrected result of a student's remaining pages (docs/cards.md, "The review loop"): the
 * recognizer's reading of them, then what the current result says (the recognizer's or the
 * last revision's), then this correction. `invalid` makes the refusal (30421) with the reason.
 */
export async function correctedResult(
  src: CorrectionSources,
  body: api.ReviewCorrectBody,
  current: Fills | null,
  pages: readonly PageSource[],
  invalid: (why: string) => ApiError,
): Promise<Fills> {
  const rows = src.rows;
  const readings: Array<{ source: PageSource; reading: PageReading }> = [];
  for (const p of pages) {
    const row = rows.get(p.page_number);
    const reading = row?.reading ? (JSON.parse(row.reading) as PageReading) : null;
    if (!reading) throw invalid(`page ${p.page_number} has not been read`);
    if (reading.status !== 'ok')
      throw invalid(
        `page ${p.page_number} cannot be read (${reading.status === 'blank' ? 'blank' : reading.detail}): mark its sheet as not a card, or leave the student as it is`,
      );
    readings.push({ source: p, reading });
  }
  const oks = readings.map((r) => r.reading as Ok);
  const cache = new Map<string, Layout | null>();
  const layouts: Layout[] = [];
  for (const r of oks) {
    const l = await src.layoutOf(r.layout_id, cache);
    if (!l) throw invalid(`the card template ${r.layout_id} was deleted`);
    if (!layouts.includes(l)) layouts.push(l);
  }
  // The pages must still make one student's card (all its sides, in order): the assembler says.
  const asm = new StudentAssembler(createLayoutSet(layouts));
  const made = [...readings.flatMap((r) => asm.push(r.source, r.reading)), ...asm.end()];
  if (made.length !== 1) throw invalid("the remaining pages are not one student's card");
  const base = made[0]!;
  if (base.error_code === RECOGNITION_ERRORS.chapters || base.error_code === RECOGNITION_ERRORS.imageAcquisition)
    throw invalid(base.detail ?? `error ${base.error_code}`);
  if (base.error_code === RECOGNITION_ERRORS.studentNumber && /^missing /.test(base.detail ?? ''))
    throw invalid(base.detail!);
  const layout = layouts[0]!;
  const states = new Map<string, AreaState>();
  for (const r of poolStudent(oks)) for (const a of r.areas) states.set(key(a.chapter, a.index), a.state);
  // What earlier revisions (or the recognizer's result) decided stays decided.
  const before = current;
  if (before)
    for (const k2 of states.keys()) {
      const [c, i] = k2.split(':').map(Number) as [number, number];
      states.set(k2, stateIn(before, c, i));
    }
  for (const a of body.areas ?? []) {
    const k2 = key(a.chapter, a.index);
    if (!states.has(k2)) throw invalid(`area ${a.index} of chapter ${a.chapter} is not on this student's card`);
    states.set(k2, a.filled ? 'filled' : 'empty');
  }
  const studentId =
    body.student_id ??
    before?.student_id ??
    base.result?.student_id ??
    oks.find((r) => r.student_id)?.student_id ??
    undefined;
  if (!studentId)
    throw invalid(`the student number was not read (${base.detail ?? 'not recognized'}): type it (student_id)`);
  const qrcode = before?.qrcode ?? base.result?.qrcode ?? oks.find((r) => r.qrcode)?.qrcode ?? undefined;
  if (!qrcode) throw invalid('the QR code on the first side was not read, so the result cannot say which card this is');
  const fills: number[][] = layout.chapters.map(() => []);
  const uncertain: number[][] = layout.chapters.map(() => []);
  for (const [k2, st] of states) {
    const [c, i] = k2.split(':').map(Number) as [number, number];
    if (st === 'filled') fills[c - 1]?.push(i);
    else if (st === 'uncertain') uncertain[c - 1]?.push(i);
  }
  for (const f of [...fills, ...uncertain]) f.sort((a, b) => a - b);
  return { student_id: studentId, qrcode, fills, uncertain };
}

/** An area's state in a result. */
export function stateIn(r: Fills, chapter: number, index: number): AreaState {
  if (r.fills[chapter - 1]?.includes(index)) return 'filled';
  if (r.uncertain?.[chapter - 1]?.includes(index)) return 'uncertain';
  return 'empty';
}
