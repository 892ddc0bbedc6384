// Generator C in the recognizer bench: one set per damage class, strength and resolution,
// scored per area, per sheet and per student, and printed as one table (bench/README.md).
import { Worker } from 'node:worker_threads';
import type { Layout, PageReading, PageSource, StudentResult } from '../../../packages/recognizer/src/index.ts';
import type { Recognizer } from '../under-test.ts';
import type { RenderedCard } from '../rendered.ts';
import { newTally, pct, fmtKinds, scorePages, merge, wilson, type Tally } from '../score.ts';
import { CLASS_STRENGTHS, classLabel, type DamageClass, type Strength } from './classes.ts';
import type { DegradeJob } from './render-worker.ts';

/** Apart from A's tuning (1 000 000…) and evaluation (9 000 000…), AMC's (5 000 000…) and B's (7 000 000…) seeds. */
export const DEGRADE_TUNING_SEED_BASE = 3_000_000;
export const DEGRADE_EVALUATION_SEED_BASE = 4_000_000;

export interface DegradeOptions {
  tune: boolean;
  cards: number;
  dpis: number[];
  classes: string[] | null;
  first: number;
}

/** Per set: the areas' tally and what became of its students and sheets. */
export interface DegradeTally {
  t: Tally;
  students: number;
  studentsClean: number;
  review: number;
  failed: number;
  wrongStudent: number;
  failures: Map<string, number>;
  sheets: number;
  sheetsClean: number;
  /** Students and students to review, per hand the generator drew (pen, pencil, light, mixed). */
  byHand: Map<string, { students: number; review: number }>;
}

const newDegrade = (): DegradeTally => ({
  t: newTally(),
  students: 0,
  studentsClean: 0,
  review: 0,
  failed: 0,
  wrongStudent: 0,
  failures: new Map(),
  sheets: 0,
  sheetsClean: 0,
  byHand: new Map(),
});

function mergeDegrade(a: DegradeTally, b: DegradeTally): void {
  merge(a.t, b.t);
  a.students += b.students;
  a.studentsClean += b.studentsClean;
  a.review += b.review;
  a.failed += b.failed;
  a.wrongStudent += b.wrongStudent;
  a.sheets += b.sheets;
  a.sheetsClean += b.sheetsClean;
  for (const [k, v] of b.failures) a.failures.set(k, (a.failures.get(k) ?? 0) + v);
  for (const [k, v] of b.byHand) {
    const h = a.byHand.get(k) ?? { students: 0, review: 0 };
    h.students += v.students;
    h.review += v.review;
    a.byHand.set(k, h);
  }
}

function render(jobs: DegradeJob[]): Promise<RenderedCard[]> {
  const entry = new URL('./render-worker.ts', import.meta.url).href;
  const workers = [0, 1].map(
    () => new Worker(new URL('../worker-boot.mjs', import.meta.url), { workerData: { entry } }),
  );
  const queue = [...jobs];
  const done: RenderedCard[] = [];
  return new Promise((resolve, reject) => {
    const feed = (w: Worker) => {
      const j = queue.shift();
      if (j) w.postMessage(j);
    };
    for (const w of workers) {
      w.on('error', reject);
      w.on('message', (c: RenderedCard | { error: string }) => {
        if ('error' in c) {
          for (const x of workers) void x.terminate();
          reject(new Error(c.error));
          return;
        }
        done.push(c);
        if (done.length === jobs.length) {
          for (const x of workers) void x.terminate();
          resolve(done.sort((a, b) => a.id - b.id));
        } else feed(w);
      });
      feed(w);
    }
  });
}

const source = (n: number): PageSource => ({
  paper_number: Math.ceil(n / 2),
  page_number: n,
  front: n % 2 === 1,
  item_id: 1,
});

/** Scores one card's sides (its own student) as read, and as the assembler makes one student of them. */
function scoreCard(rec: Recognizer, layouts: Layout[], d: DegradeTally, card: RenderedCard, raw: PageReading[]): void {
  const readings = rec.poolStudent ? rec.poolStudent(raw) : raw;
  scorePages(d.t, card, readings, false);
  card.sides.forEach((s, k) => {
    if (s.truth === null) return;
    const r = readings[k]!;
    d.sheets++;
    if (
      r.status === 'ok' &&
      r.areas.every((a, i) => a.state !== 'uncertain' && (a.state === 'filled') === s.truth![i]!.filled)
    )
      d.sheetsClean++;
  });
  const a = new rec.StudentAssembler(rec.createLayoutSet(layouts));
  const results: StudentResult[] = [];
  for (const [i, r] of raw.entries()) results.push(...a.push(source(i + 1), r));
  results.push(...a.end());
  d.students++;
  const hand = d.byHand.get(card.hand ?? 'unknown') ?? { students: 0, review: 0 };
  d.byHand.set(card.hand ?? 'unknown', hand);
  hand.students++;
  const one = results.length === 1 ? results[0]! : null;
  if (one?.error_code !== 0 || !one.result) {
    d.failed++;
    d.review++;
    hand.review++;
    const why = results
      .map((x) => (x.error_code === 0 ? 'ok' : `${x.error_code} ${(x.detail ?? '').replace(/\d+(\.\d+)?/g, '#')}`))
      .join(' + ');
    d.failures.set(why, (d.failures.get(why) ?? 0) + 1);
    return;
  }
  if (one.result.student_id !== card.studentId) d.wrongStudent++;
  if (one.result.uncertain.some((u) => u.length > 0)) {
    d.review++;
    hand.review++;
  } else d.studentsClean++;
}

const silentOf = (d: DegradeTally) => d.t.areas.silent + d.wrongStudent + d.t.qrWrong;

/** Renders and reads every set; prints the table per class, strength and resolution. */
export async function runDegradation(
  rec: Recognizer,
  layouts: Layout[],
  recognize: (page: Uint8Array) => Promise<PageReading>,
  o: DegradeOptions,
  /** Called with the first card of each set at 200 dpi: pages for the speed figure on C's pages. */
  keep?: (card: RenderedCard) => void,
): Promise<Map<string, DegradeTally>> {
  const sets = CLASS_STRENGTHS.filter(([c, s]) => !o.classes || o.classes.some((f) => classLabel(c, s).startsWith(f)));
  const out = new Map<string, DegradeTally>();
  const base = o.tune ? DEGRADE_TUNING_SEED_BASE : DEGRADE_EVALUATION_SEED_BASE;
  console.log(
    `\n# generator C (damage classes, ${o.tune ? 'TUNING' : 'evaluation'} seeds from ${base}): ${o.cards} cards per class and resolution`,
  );
  for (const dpi of o.dpis) {
    for (const [cls, strength] of sets) {
      const ci = CLASS_STRENGTHS.findIndex(([c, s]) => c === cls && s === strength);
      const jobs = Array.from({ length: o.cards }, (_, i) => ({
        cls,
        strength,
        dpi,
        id: i + o.first,
        seed: base + dpi * 10_000 + ci * 500 + i + o.first,
      }));
      const cards = await render(jobs);
      if (keep && dpi === 200 && cards[0]) keep(cards[0]);
      const d = newDegrade();
      for (const c of cards) scoreCard(rec, layouts, d, c, await Promise.all(c.sides.map((s) => recognize(s.jpeg))));
      out.set(`${classLabel(cls, strength)}@${dpi}`, d);
      const t = d.t;
      console.log(
        `  ${classLabel(cls, strength).padEnd(22)} ${String(dpi).padStart(3)} dpi  areas ${pct(t.areas.right, t.areas.n, 2).padStart(8)} right (${t.areas.uncertain} unc, ${t.areas.silent} wrong)  sheets clean ${d.sheetsClean}/${d.sheets}  review ${d.review}/${d.students}  silent ${silentOf(d)}${t.unreadable ? `  unreadable: ${fmtKinds(t.unreadableDetail)}` : ''}${t.blankPages ? `  blanks ${t.blankSkipped}/${t.blankPages}${t.blankOther.size ? ` (${fmtKinds(t.blankOther)})` : ''}` : ''}${t.areas.silent ? `  [${fmtKinds(t.silentKinds)}]` : ''}`,
      );
    }
  }
  printTable(
    out,
    sets.map(([c, s]) => classLabel(c, s)),
    o.dpis,
  );
  return out;
}

function printTable(all: Map<string, DegradeTally>, labels: string[], dpis: number[]): void {
  const cell = (d: DegradeTally | undefined) =>
    !d
      ? '-'
      : `${pct(d.t.areas.right, d.t.areas.n, 2)} ${pct(d.sheetsClean, d.sheets, 0)} ${pct(d.review, d.students, 0)} ${silentOf(d)}`;
  console.log(
    `\n# generator C per class and resolution: areas right (uncertain = not right) | sheets read with no error or uncertainty | review rate (students with an uncertain area or a failure) | silent errors`,
  );
  console.log(`  ${'class'.padEnd(22)} ${dpis.map((x) => `${x} dpi`.padEnd(34)).join('')}`);
  for (const l of labels)
    console.log(`  ${l.padEnd(22)} ${dpis.map((x) => cell(all.get(`${l}@${x}`)).padEnd(34)).join('')}`);
  // A group over every resolution run, then at each one (the targets hold per resolution). The
  // students' rate carries its 95 % interval (a card is one student, drawn independently), and
  // who is to review, per hand: the generator draws 15 % of its students as mixed hands
  // (render-worker.ts), and the review rate depends on that share as much as on the recognizer.
  const group = (name: string, test: (l: string) => boolean, target: string) => {
    for (const at of [null, ...(dpis.length > 1 ? dpis : [])]) {
      const g = newDegrade();
      for (const [k, v] of all) {
        const [l, d] = k.split('@');
        if (test(l!) && (at === null || Number(d) === at)) mergeDegrade(g, v);
      }
      if (g.students === 0) continue;
      const [lo, hi] = wilson(g.studentsClean, g.students);
      const hands = [...g.byHand.entries()]
        .sort((a, b) => a[0].localeCompare(b[0]))
        .map(([h, v]) => `${h} ${v.review}/${v.students}`)
        .join(', ');
      console.log(
        `  ${(at === null ? name : `  … at ${at} dpi`).padEnd(44)} areas ${pct(g.t.areas.right, g.t.areas.n)} (${g.t.areas.right}/${g.t.areas.n}, ${g.t.areas.uncertain} uncertain), students with nothing to review ${pct(g.studentsClean, g.students, 1)} (${g.studentsClean}/${g.students}; 95 % interval ${lo.toFixed(1)}-${hi.toFixed(1)} %), silent ${silentOf(g)}${at === null ? `   ${target}` : ''}`,
      );
      console.log(`  ${''.padEnd(46)} to review, per hand: ${hands}`);
    }
  };
  console.log('\n# generator C, groups (150-300 dpi)');
  group(
    'clean and office-grade',
    (l) => l === 'clean' || l === 'office',
    'target ≥ 99.9 % right, ≥ 96 % of students with nothing to review, 0 silent',
  );
  group(
    'heavy banding, bad photocopies, shadows',
    (l) =>
      l === 'bands-across:heavy' ||
      l === 'bands-along:heavy' ||
      l === 'copier' ||
      l === 'toner:heavy' ||
      l === 'lighting:heavy',
    'target ≥ 99 % right, 0 silent',
  );
  group('every class', () => true, 'target 0 silent');
  const fails = newDegrade();
  for (const v of all.values()) mergeDegrade(fails, v);
  if (fails.failures.size) console.log(`  students failed, by reason: ${fmtKinds(fails.failures)}`);
}

export type { DamageClass, Strength };
