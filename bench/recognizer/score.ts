// Scoring of the recognizer benchmark: per area against the generator's ground truth, per mark
// class and resolution, and per student through the assembler (blank backs, swapped sheets).
import type { PageReading, StudentResult } from '../../packages/recognizer/src/index.ts';
import type { RenderedCard } from './rendered.ts';

export interface Count {
  n: number;
  right: number;
  uncertain: number;
  silent: number;
}
const zero = (): Count => ({ n: 0, right: 0, uncertain: 0, silent: 0 });

export interface Tally {
  pages: number;
  unreadable: number;
  unreadableDetail: Map<string, number>;
  areas: Count;
  /** Per mark kind (truth), what became of it. */
  kinds: Map<string, Count>;
  silentKinds: Map<string, number>;
  uncertainKinds: Map<string, number>;
  /** Uncertain areas by the student's hand (one instrument, or 'mixed'). */
  uncertainHands: Map<string, number>;
  qrPages: number;
  qrRead: number;
  qrWrong: number;
  snCards: number;
  snRead: number;
  snError: number;
  snWrong: number;
  snAmbiguous: number;
  snAmbiguousFlagged: number;
  /** Code128 student numbers (barcode cards), apart from bubbles. */
  barcodeCards: number;
  barcodeRead: number;
  barcodeWrong: number;
  upsideDownPages: number;
  upsideDownRight: number;
  orientationWrong: number;
  folded: number;
  foldedRead: number;
  blankPages: number;
  blankSkipped: number;
  blankOther: Map<string, number>;
  /** Students through the assembler (barcode sets): right, failed, wrong, and results beyond the students scanned. */
  students: number;
  studentsOk: number;
  studentsFailed: number;
  studentsWrong: number;
  extraResults: number;
  /** Two students' second sheets swapped: pairs, pairs where a result silently merged two students. */
  swapPairs: number;
  swapMerged: number;
  ms: number[];
}

export function newTally(): Tally {
  return {
    pages: 0,
    unreadable: 0,
    unreadableDetail: new Map(),
    areas: zero(),
    kinds: new Map(),
    silentKinds: new Map(),
    uncertainKinds: new Map(),
    uncertainHands: new Map(),
    qrPages: 0,
    qrRead: 0,
    qrWrong: 0,
    snCards: 0,
    snRead: 0,
    snError: 0,
    snWrong: 0,
    snAmbiguous: 0,
    snAmbiguousFlagged: 0,
    barcodeCards: 0,
    barcodeRead: 0,
    barcodeWrong: 0,
    upsideDownPages: 0,
    upsideDownRight: 0,
    orientationWrong: 0,
    folded: 0,
    foldedRead: 0,
    blankPages: 0,
    blankSkipped: 0,
    blankOther: new Map(),
    students: 0,
    studentsOk: 0,
    studentsFailed: 0,
    studentsWrong: 0,
    extraResults: 0,
    swapPairs: 0,
    swapMerged: 0,
    ms: [],
  };
}

const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);
function add(c: Count, o: Count): void {
  c.n += o.n;
  c.right += o.right;
  c.uncertain += o.uncertain;
  c.silent += o.silent;
}

/** Per-page scoring of one card's readings (same order as card.sides). */
export function scorePages(t: Tally, card: RenderedCard, readings: PageReading[], barcode: boolean): void {
  card.sides.forEach((side, k) => {
    const r = readings[k]!;
    t.pages++;
    t.ms.push(r.ms);
    if (side.truth === null) {
      t.blankPages++;
      if (r.status === 'blank') t.blankSkipped++;
      else bump(t.blankOther, r.status === 'unreadable' ? `unreadable ${r.error_code}` : 'read as a card side');
      return;
    }
    if (side.upsideDown) t.upsideDownPages++;
    if (side.folded) {
      t.folded++;
      if (r.status === 'ok') t.foldedRead++;
    }
    const first = side.sheet === 1 && side.side === 'front';
    if (first) {
      t.qrPages++;
      if (barcode) t.barcodeCards++;
      else t.snCards++;
    }
    if (r.status !== 'ok') {
      t.unreadable++;
      bump(
        t.unreadableDetail,
        r.status === 'unreadable' ? `${r.error_code} ${r.detail.replace(/[0-9]+ of 4/, 'n of 4')}` : 'blank',
      );
      for (const a of side.truth) {
        const c = kindCount(t, a.kind);
        c.n++;
        c.uncertain++;
        t.areas.n++;
        t.areas.uncertain++;
      }
      return;
    }
    if (r.upside_down === side.upsideDown) {
      if (side.upsideDown) t.upsideDownRight++;
    } else t.orientationWrong++;
    r.areas.forEach((a, i) => {
      const truth = side.truth![i]!;
      const c = kindCount(t, truth.kind);
      c.n++;
      t.areas.n++;
      if (a.state === 'uncertain') {
        c.uncertain++;
        t.areas.uncertain++;
        bump(t.uncertainKinds, truth.kind);
        bump(t.uncertainHands, card.hand ?? '-');
      } else if ((a.state === 'filled') === truth.filled) {
        c.right++;
        t.areas.right++;
      } else {
        c.silent++;
        t.areas.silent++;
        bump(t.silentKinds, `${truth.kind}->${a.state}`);
      }
    });
    if (first) {
      if (r.qrcode === card.qrcode) t.qrRead++;
      else if (r.qrcode) t.qrWrong++;
      if (barcode) {
        if (r.student_id === card.studentId) t.barcodeRead++;
        else if (r.student_id) t.barcodeWrong++;
      } else if (card.ambiguous) {
        t.snAmbiguous++;
        if (r.student_id === null) t.snAmbiguousFlagged++;
        else t.snWrong++;
      } else if (r.student_id === card.studentId) t.snRead++;
      else if (r.student_id === null || r.student_id === undefined) t.snError++;
      else t.snWrong++;
    }
  });
}

function kindCount(t: Tally, kind: string): Count {
  let c = t.kinds.get(kind);
  if (!c) {
    c = zero();
    t.kinds.set(kind, c);
  }
  return c;
}

/** The assembler's view of a barcode set: each student's pages in scan order, blank backs included. */
export function scoreStudents(t: Tally, cards: RenderedCard[], results: StudentResult[]): void {
  t.students += cards.length;
  t.extraResults += Math.max(0, results.length - cards.length);
  for (const r of results) {
    if (r.error_code !== 0 || !r.result) {
      t.studentsFailed++;
      continue;
    }
    if (cards.some((c) => c.studentId === r.result!.student_id)) t.studentsOk++;
    else t.studentsWrong++;
  }
}

/** Swapped second sheets: any result with error_code 0 in such a stream merged two students. */
export function scoreSwap(t: Tally, results: StudentResult[]): void {
  t.swapPairs++;
  if (results.some((r) => r.error_code === 0)) t.swapMerged++;
}

export function merge(into: Tally, t: Tally): void {
  into.pages += t.pages;
  into.unreadable += t.unreadable;
  for (const [k, v] of t.unreadableDetail) bump(into.unreadableDetail, k, v);
  add(into.areas, t.areas);
  for (const [k, v] of t.kinds) add(kindCount(into, k), v);
  for (const [k, v] of t.silentKinds) bump(into.silentKinds, k, v);
  for (const [k, v] of t.uncertainKinds) bump(into.uncertainKinds, k, v);
  for (const [k, v] of t.uncertainHands) bump(into.uncertainHands, k, v);
  for (const [k, v] of t.blankOther) bump(into.blankOther, k, v);
  const keys = [
    'qrPages',
    'qrRead',
    'qrWrong',
    'snCards',
    'snRead',
    'snError',
    'snWrong',
    'snAmbiguous',
    'snAmbiguousFlagged',
    'barcodeCards',
    'barcodeRead',
    'barcodeWrong',
    'upsideDownPages',
    'upsideDownRight',
    'orientationWrong',
    'folded',
    'foldedRead',
    'blankPages',
    'blankSkipped',
    'students',
    'studentsOk',
    'studentsFailed',
    'studentsWrong',
    'extraResults',
    'swapPairs',
    'swapMerged',
  ] as const;
  for (const k of keys) into[k] += t[k];
  into.ms.push(...t.ms);
}

export const pct = (a: number, b: number, digits = 3) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(digits)} %`);
/**
 * The 95 % Wilson score interval of a proportion k / n, in per cent: how far a rate measured on
 * n independent students (a card is one) may lie from the generator's own. Not for areas: the
 * areas of one student share its hand and its page, so they are not independent draws.
 */
export function wilson(k: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 100];
  const p = k / n,
    z2 = z * z;
  const mid = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [100 * Math.max(0, mid - half), 100 * Math.min(1, mid + half)];
}
export const fmtKinds = (m: Map<string, number>) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ×${v}`)
    .join(', ') || '-';

export function report(label: string, t: Tally): void {
  const ms = t.ms.reduce((a, b) => a + b, 0) / Math.max(1, t.ms.length);
  console.log(
    `\n## ${label}: ${t.pages} pages, ${t.areas.n} areas${t.unreadable ? `, ${t.unreadable} pages unreadable (${fmtKinds(t.unreadableDetail)})` : ''}`,
  );
  console.log(`  areas right         ${pct(t.areas.right, t.areas.n)}  (${t.areas.right}/${t.areas.n})`);
  console.log(`  silent errors       ${t.areas.silent}  ${t.areas.silent ? fmtKinds(t.silentKinds) : ''}`);
  console.log(
    `  uncertain           ${pct(t.areas.uncertain, t.areas.n)}  (${t.areas.uncertain})  ${fmtKinds(t.uncertainKinds)}`,
  );
  console.log(`  QR read             ${pct(t.qrRead, t.qrPages, 1)}  (${t.qrRead}/${t.qrPages}, wrong ${t.qrWrong})`);
  if (t.snCards)
    console.log(
      `  student number      read ${t.snRead}, reported error ${t.snError}, wrong ${t.snWrong}; double-marked ${t.snAmbiguous} of which flagged ${t.snAmbiguousFlagged}`,
    );
  if (t.barcodeCards)
    console.log(`  Code128 number      read ${t.barcodeRead}/${t.barcodeCards}, wrong ${t.barcodeWrong}`);
  if (t.blankPages)
    console.log(
      `  blank backs         ${t.blankSkipped}/${t.blankPages} skipped as blank${t.blankOther.size ? `; others: ${fmtKinds(t.blankOther)}` : ''}`,
    );
  if (t.students)
    console.log(
      `  students            ${t.students} scanned: ${t.studentsOk} right, ${t.studentsFailed} failed, ${t.studentsWrong} wrong, ${t.extraResults} extra results`,
    );
  if (t.swapPairs)
    console.log(
      `  swapped 2nd sheets  ${t.swapPairs - t.swapMerged}/${t.swapPairs} pairs detected (${t.swapMerged} silently merged)`,
    );
  console.log(
    `  upside-down pages   ${t.upsideDownRight}/${t.upsideDownPages} detected, orientation wrong on ${t.orientationWrong}`,
  );
  if (t.folded) console.log(`  folded corner       ${t.foldedRead}/${t.folded} pages read with three fiducials`);
  console.log(`  ms per page         ${ms.toFixed(1)} (in a worker, decode included)`);
}
