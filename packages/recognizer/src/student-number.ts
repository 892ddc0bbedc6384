// The student number from its bubble grid: one mark per digit column, or an error. An
// ambiguous number is never guessed (docs/cards.md, 1001); but a faint trace beside a clear
// fill is not a second mark, as no person would read it as one: an erased first choice, a
// smudge, the other side showing through.
import { classify, type PageFills } from './mark-classifier.ts';
import type { MarkEvidence } from './mark-evidence.ts';
import type { PageLevels } from './page-levels.ts';
import type { LayoutSide } from './layout.ts';

/** An uncertain cell is no rival to a clear fill if it is less than this share of its darkness. */
const RIVAL = 0.35;
/** A fill that clear: this dark on average, or a stroke. */
const CLEAR_FILL = 0.3;

export function readBubbleNumber(
  side: LayoutSide,
  ev: readonly MarkEvidence[],
  levels: PageLevels,
  fills: PageFills,
): { student_id: string | null; student_detail?: string } {
  const positions = new Map<
    number,
    Array<{ value: number; state: ReturnType<typeof classify>['state']; ev: MarkEvidence }>
  >();
  side.student_cells.forEach((c, i) => {
    const list = positions.get(c.position) ?? [];
    list.push({ value: c.value, state: classify(ev[i]!, levels, fills).state, ev: ev[i]! });
    positions.set(c.position, list);
  });
  let id = '';
  const problems: string[] = [];
  for (const [pos, cells] of [...positions.entries()].sort((a, b) => a[0] - b[0])) {
    const filled = cells.filter((c) => c.state === 'filled');
    const unsure = cells.filter((c) => c.state === 'uncertain');
    const one = filled.length === 1 ? filled[0]! : undefined;
    const onlyTraces =
      one !== undefined &&
      one.ev.solid >= CLEAR_FILL &&
      unsure.every((c) => c.ev.stroke === 0 && Math.max(c.ev.solid, c.ev.blobContrast) < RIVAL * one.ev.solid);
    if (one && (unsure.length === 0 || onlyTraces)) id += String(one.value);
    else if (filled.length === 0 && unsure.length === 0) problems.push(`digit ${pos}: no mark`);
    else if (filled.length > 1) problems.push(`digit ${pos}: ${filled.length} marks`);
    else problems.push(`digit ${pos}: unclear mark`);
  }
  return problems.length === 0 ? { student_id: id } : { student_id: null, student_detail: problems.join(', ') };
}
