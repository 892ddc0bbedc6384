// Groups recognised pages into students, in scan order (docs/api.md, "Feedback-card
// recognition", placement rules: each student's pages in order, not interleaved, front
// first). A student is finished when the next student's first side arrives or the stream
// ends; only then is its result emitted.
import type { Layout } from './layout.ts';
import type { LayoutSet } from './layout-store.ts';
import type { PageReading } from './page-recognizer.ts';
import { RECOGNITION_ERRORS } from './error-codes.ts';
import { poolStudent } from './student-pool.ts';

/** Where a page came from (docs/api.md, recognition callback pages[]). */
export interface PageSource {
  paper_number: number;
  page_number: number;
  front: boolean;
  item_id: number;
}

export interface StudentFills {
  student_id: string;
  qrcode: string;
  /** Per chapter, 1-based indexes of clearly filled areas. */
  fills: number[][];
  /** Extension: per chapter, indexes neither clearly filled nor clearly empty (never in fills). */
  uncertain: number[][];
}

/** The callback body's shape (docs/api.md, "Recognition result callback"), without uuid, finish and download URLs. */
export interface StudentResult {
  error_code: number;
  pages: PageSource[];
  result: StudentFills | null;
  /** Extension: why a student failed, for people. */
  detail?: string;
}

interface Group {
  layout: Layout | undefined;
  /** Index in layout.sides of the last side added. */
  last: number;
  /** The student key printed on the group's sides (personalised cards); undefined for other cards. */
  key: string | undefined;
  pages: Array<{ source: PageSource; reading: PageReading }>;
}

/**
 * May a side with this strip reading belong to a group with that key? A personalised card
 * prints the same key on every side; an unreadable strip (null) cannot say no, but fails the
 * student when it is finished. A blank strip and a key never belong together.
 */
function sameStudent(group: Group, key: string | null | undefined): boolean {
  if (key === null) return true;
  const known = group.pages.some((p) => p.reading.status === 'ok' && p.reading.student_key !== null);
  return !known || group.key === key;
}

function sideIndex(layout: Layout, r: Extract<PageReading, { status: 'ok' }>): number {
  return layout.sides.findIndex((s) => s.sheet === r.sheet && s.side === r.side);
}

export class StudentAssembler {
  readonly #layouts: LayoutSet;
  #current: Group | undefined;
  #emitted = 0;
  #sawPages = false;

  constructor(layouts: LayoutSet) {
    this.#layouts = layouts;
  }

  /** Adds the next page in scan order; returns the students this page shows to be finished. */
  push(source: PageSource, reading: PageReading): StudentResult[] {
    this.#sawPages = true;
    if (reading.status === 'blank') return []; // blank backs carry nothing and are not "used"
    const cur = this.#current;
    const out: StudentResult[] = [];
    if (reading.status === 'unreadable') {
      // It belongs to the student still waiting for sides; otherwise it opens a new student.
      if (cur && !this.#complete(cur)) {
        cur.pages.push({ source, reading });
        return out;
      }
      if (cur) out.push(this.#finish(cur));
      this.#current = { layout: undefined, last: -1, key: undefined, pages: [{ source, reading }] };
      return out;
    }
    const layout = this.#layouts.get(parseInt(reading.layout_id, 16));
    const idx = layout ? sideIndex(layout, reading) : -1;
    if (!layout || idx < 0) {
      // recognizePage only says "ok" for a side of a loaded layout; keep the page anyway.
      if (cur) out.push(this.#finish(cur));
      this.#current = { layout: undefined, last: -1, key: undefined, pages: [{ source, reading }] };
      return out;
    }
    const key = reading.student_key;
    const continues =
      cur &&
      idx > 0 &&
      sameStudent(cur, key) &&
      ((cur.layout === layout && idx > cur.last) ||
        // A student whose first side was unreadable takes the sides that follow it.
        (cur.layout === undefined && cur.pages.every((p) => p.reading.status === 'unreadable')));
    if (cur && continues) {
      cur.layout = layout;
      cur.last = idx;
      cur.pages.push({ source, reading });
      if (typeof key === 'string') cur.key = key;
      return out;
    }
    if (cur) out.push(this.#finish(cur));
    this.#current = { layout, last: idx, key: typeof key === 'string' ? key : undefined, pages: [{ source, reading }] };
    return out;
  }

  /** The stream has ended: the last student, or 50003 when no page arrived at all. */
  end(): StudentResult[] {
    const out: StudentResult[] = [];
    if (this.#current) out.push(this.#finish(this.#current));
    this.#current = undefined;
    if (this.#emitted === 0) {
      this.#emitted++;
      out.push({
        error_code: RECOGNITION_ERRORS.noPageData,
        pages: [],
        result: null,
        detail: this.#sawPages ? 'only blank pages' : 'no page data',
      });
    }
    return out;
  }

  #complete(g: Group): boolean {
    return g.layout !== undefined && g.last === g.layout.sides.length - 1;
  }

  #finish(g: Group): StudentResult {
    this.#emitted++;
    const pages = g.pages.map((p) => p.source);
    const fail = (code: number, detail: string): StudentResult => ({ error_code: code, pages, result: null, detail });
    const bad = g.pages.find((p) => p.reading.status === 'unreadable');
    if (bad && bad.reading.status === 'unreadable')
      return fail(bad.reading.error_code, `page ${bad.source.page_number}: ${bad.reading.detail}`);
    const layout = g.layout;
    if (!layout) return fail(RECOGNITION_ERRORS.chapters, 'no readable side');
    const bySide = new Map<number, Extract<PageReading, { status: 'ok' }>>();
    for (const p of g.pages) if (p.reading.status === 'ok') bySide.set(sideIndex(layout, p.reading), p.reading);
    const missing = layout.sides.map((s, i) => ({ s, i })).filter(({ i }) => !bySide.has(i));
    const hasStudent = (i: number) =>
      layout.sides[i]!.student_cells.length > 0 || layout.sides[i]!.barcode !== undefined;
    const describe = (list: typeof missing) => list.map(({ s }) => `sheet ${s.sheet} ${s.side}`).join(', ');
    if (missing.some(({ i }) => hasStudent(i)))
      return fail(RECOGNITION_ERRORS.studentNumber, `missing ${describe(missing)}`);
    let studentId: string | undefined, qrcode: string | undefined;
    const problems: Array<[number, string]> = [];
    for (const [i, r] of bySide) {
      if (hasStudent(i)) {
        if (r.student_id) studentId = r.student_id;
        else
          problems.push([RECOGNITION_ERRORS.studentNumber, `student number: ${r.student_detail ?? 'not recognized'}`]);
      }
      if (layout.sides[i]!.qrcode) {
        if (r.qrcode) qrcode = r.qrcode;
        else problems.push([RECOGNITION_ERRORS.qrcode, 'QR code not recognized']);
      }
    }
    for (const [i, r] of bySide) {
      if (r.student_key === null)
        problems.push([
          RECOGNITION_ERRORS.studentNumber,
          `sheet ${layout.sides[i]!.sheet} ${layout.sides[i]!.side}: the student strip is not readable, so the sheet cannot be confirmed as this student's`,
        ]);
    }
    if (missing.length > 0) problems.push([RECOGNITION_ERRORS.chapters, `missing ${describe(missing)}`]);
    // One error_code per student: the student number first (without it the result cannot be
    // attributed), then the QR code, then the chapters.
    problems.sort((a, b) => a[0] - b[0]);
    if (problems.length > 0) return fail(problems[0]![0], problems.map((p) => p[1]).join('; '));
    const fills: number[][] = layout.chapters.map(() => []);
    const uncertain: number[][] = layout.chapters.map(() => []);
    // The student's sides are one hand: areas a side left uncertain, judged again with all of them.
    for (const r of poolStudent([...bySide.values()]))
      for (const a of r.areas) {
        if (a.state === 'filled') fills[a.chapter - 1]!.push(a.index);
        else if (a.state === 'uncertain') uncertain[a.chapter - 1]!.push(a.index);
      }
    for (const f of [...fills, ...uncertain]) f.sort((a, b) => a - b);
    return {
      error_code: RECOGNITION_ERRORS.ok,
      pages,
      result: { student_id: studentId!, qrcode: qrcode!, fills, uncertain },
    };
  }
}
