// Feedback-card recognizer benchmark. Two generators of filled, scanned cards with ground truth
// per area (README.md here):
//   A: the template's drawing list drawn with canvas (bench-card.ts, render-worker.ts); tuning
//      seeds (BOXHUB_BENCH_TUNE=1) and evaluation seeds (default);
//   B: independent/: the template PDF rasterised by poppler, marks of other shapes drawn as SVG
//      by librsvg, scan effects by sharp; evaluation only, never used to set a threshold.
// Every accuracy figure with its target (docs/cards.md, section 8) is reported per class on both
// generators, then speed.
import { Worker } from 'node:worker_threads';
import { spawnSync } from 'node:child_process';
import { loadavg, cpus } from 'node:os';
import sharp from 'sharp';
import type { Layout, PageReading, PageSource, StudentResult } from '../../packages/recognizer/src/index.ts';
import { BARCODE_CARD, BENCH_CARD, EVALUATION_SEED_BASE, TUNING_SEED_BASE } from './bench-card.ts';
import { INDEPENDENT_CARDS, INDEPENDENT_SEED_BASE } from './independent/cards.ts';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runDegradation } from './degrade/run.ts';
import { loadRecognizer, recognizerEntry, type Recognizer } from './under-test.ts';
import type { GeneratorName, RenderedCard, RenderJob, Scenario } from './rendered.ts';
import {
  merge,
  newTally,
  pct,
  fmtKinds,
  report,
  scorePages,
  scoreStudents,
  scoreSwap,
  type Count,
  type Tally,
} from './score.ts';

const tune = process.env.BOXHUB_BENCH_TUNE === '1';
const quick = process.env.BOXHUB_BENCH_QUICK === '1';
const scale = Number(process.env.BOXHUB_BENCH_SCALE ?? '1');
const only = process.env.BOXHUB_BENCH_GENERATOR as GeneratorName | 'C' | undefined;
/** Resolutions to run (every generator), e.g. `150,200`; all when unset. */
const dpiFilter = process.env.BOXHUB_BENCH_DPI?.split(',').map(Number) ?? null;
const rec = await loadRecognizer();

interface SetSpec {
  generator: GeneratorName;
  scenario: Scenario;
  dpi: number;
  cards: number;
}
const label = (s: SetSpec) => `${s.generator} ${s.scenario} ${s.dpi} dpi`;

const A: SetSpec[] = [
  { generator: 'A', scenario: 'clean', dpi: 300, cards: 2 },
  { generator: 'A', scenario: 'clean', dpi: 600, cards: 1 },
  { generator: 'A', scenario: 'mixed', dpi: 100, cards: 16 },
  { generator: 'A', scenario: 'mixed', dpi: 150, cards: 12 },
  { generator: 'A', scenario: 'mixed', dpi: 200, cards: 16 },
  { generator: 'A', scenario: 'mixed', dpi: 300, cards: 8 },
  { generator: 'A', scenario: 'barcode', dpi: 100, cards: 10 },
  { generator: 'A', scenario: 'barcode', dpi: 150, cards: 6 },
  { generator: 'A', scenario: 'barcode', dpi: 200, cards: 6 },
];
const B: SetSpec[] = [
  { generator: 'B', scenario: 'mixed', dpi: 100, cards: 20 },
  { generator: 'B', scenario: 'mixed', dpi: 150, cards: 16 },
  { generator: 'B', scenario: 'mixed', dpi: 200, cards: 20 },
  { generator: 'B', scenario: 'mixed', dpi: 300, cards: 10 },
  { generator: 'B', scenario: 'barcode', dpi: 100, cards: 10 },
  { generator: 'B', scenario: 'barcode', dpi: 150, cards: 6 },
  { generator: 'B', scenario: 'barcode', dpi: 200, cards: 6 },
];
// Generator B is evaluation only: the tuning run renders A's tuning seeds and nothing else.
const SETS = [...(!only || only === 'A' ? A : []), ...((!only || only === 'B') && !tune ? B : [])]
  .filter((s) => !dpiFilter || dpiFilter.includes(s.dpi))
  .map((s) => ({ ...s, cards: Math.max(1, Math.round((quick ? s.cards / 4 : s.cards) * scale)) }));

function seedFor(s: SetSpec, i: number): number {
  const setIndex = (s.generator === 'A' ? A : B).findIndex((x) => x.scenario === s.scenario && x.dpi === s.dpi);
  const base = s.generator === 'B' ? INDEPENDENT_SEED_BASE : tune ? TUNING_SEED_BASE : EVALUATION_SEED_BASE;
  return base + setIndex * 1000 + i;
}

const workerUrl = (g: GeneratorName) =>
  new URL(g === 'A' ? './render-worker.ts' : './independent/render-worker.ts', import.meta.url).href;

function renderAll(spec: SetSpec): Promise<RenderedCard[]> {
  const workers = [0, 1].map(
    () =>
      new Worker(new URL('./worker-boot.mjs', import.meta.url), { workerData: { entry: workerUrl(spec.generator) } }),
  );
  const jobs: RenderJob[] = Array.from({ length: spec.cards }, (_, i) => ({
    generator: spec.generator,
    scenario: spec.scenario,
    dpi: spec.dpi,
    seed: seedFor(spec, i),
    id: i,
    tuning: tune,
  }));
  const done: RenderedCard[] = [];
  return new Promise((resolve, reject) => {
    const feed = (w: Worker) => {
      const j = jobs.shift();
      if (j) w.postMessage(j);
    };
    for (const w of workers) {
      w.on('error', reject);
      w.on('message', (c: RenderedCard) => {
        done.push(c);
        if (done.length === spec.cards) {
          for (const x of workers) void x.terminate();
          resolve(done.sort((a, b) => a.id - b.id));
        } else feed(w);
      });
      feed(w);
    }
  });
}

async function layoutsOf(g: GeneratorName): Promise<Layout[]> {
  if (g === 'A') return [(await rec.planTemplate(BENCH_CARD)).layout, (await rec.planTemplate(BARCODE_CARD)).layout];
  return Promise.all(INDEPENDENT_CARDS.map(async (d) => (await rec.planTemplate(d)).layout));
}

/** Page numbering of a stack: duplex (sheet n's front is page 2n-1) or single-sided. */
const source = (n: number, duplex: boolean): PageSource =>
  duplex
    ? { paper_number: Math.ceil(n / 2), page_number: n, front: n % 2 === 1, item_id: 1 }
    : { paper_number: n, page_number: n, front: true, item_id: 1 };

function assemble(layouts: Layout[], pages: PageReading[], duplex = true): StudentResult[] {
  const a = new rec.StudentAssembler(rec.createLayoutSet(layouts));
  const out: StudentResult[] = [];
  for (const [i, r] of pages.entries()) out.push(...a.push(source(i + 1, duplex), r));
  out.push(...a.end());
  return out;
}

// Generator C (degrade/): the damage classes, on their own seeds; its cards are B's.
const runC = !only || only === 'C';
const cpu = cpus()[0]?.model ?? 'unknown CPU';
console.log(
  `# recognizer benchmark — ${tune ? 'TUNING seeds (generator A only)' : 'evaluation seeds'}${quick ? ' (quick)' : ''}; recognizer ${recognizerEntry().replace(/^file:\/\//, '')}`,
);
console.log(
  `# ${cpus().length} cores, ${cpu}, node ${process.version}, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
const t0 = performance.now();
const totals = new Map<string, Tally>();
let speedPages: Uint8Array[] = [];
const allLayouts = new Map<GeneratorName, Layout[]>();
for (const g of ['A', 'B'] as const)
  if (SETS.some((s) => s.generator === g) || (g === 'B' && runC)) allLayouts.set(g, await layoutsOf(g));
const pool = new rec.PagePool({ layouts: [...allLayouts.values()].flat(), workers: 2 });

for (const spec of SETS) {
  const cards = await renderAll(spec);
  const tally = newTally();
  // Each card is one student: its sides judged together as the assembler does when the student
  // is finished (student-pool.ts; absent from recognizers before it).
  const readings = (await Promise.all(cards.map((c) => Promise.all(c.sides.map((s) => pool.recognize(s.jpeg)))))).map(
    (r) => (rec.poolStudent ? rec.poolStudent(r) : r),
  );
  const barcode = spec.scenario === 'barcode';
  for (const [k, c] of cards.entries()) scorePages(tally, c, readings[k]!, barcode);
  if (barcode) {
    const layouts = allLayouts.get(spec.generator)!;
    scoreStudents(tally, cards, assemble(layouts, readings.flat()));
    // Second sheets of two students swapped: X1, Y2, Y1, X2, scanned single-sided (the fronts
    // only, so that nothing but the swap can fail a student).
    for (let i = 0; i + 1 < cards.length; i += 2) {
      const x = readings[i]!,
        y = readings[i + 1]!;
      const front = (r: PageReading[], sheet: 0 | 1) => r[sheet * 2]!;
      scoreSwap(tally, assemble(layouts, [front(x, 0), front(y, 1), front(y, 0), front(x, 1)], false));
    }
  }
  report(label(spec), tally);
  totals.set(label(spec), tally);
  if (spec.generator === 'A' && spec.scenario === 'mixed' && spec.dpi === 200)
    speedPages = cards.flatMap((c) => c.sides.map((s) => s.jpeg));
}

// Generator C's 200-dpi pages for its own speed figure (below): the first card of each set.
const cSpeedSides: Array<{ jpeg: Uint8Array; blank: boolean }> = [];
if (runC) {
  await runDegradation(
    rec,
    allLayouts.get('B')!,
    (p) => pool.recognize(p),
    {
      tune,
      cards: Math.max(1, Math.round(Number(process.env.BOXHUB_BENCH_C_CARDS ?? (quick ? 1 : 2)) * scale)),
      first: Number(process.env.BOXHUB_BENCH_C_FIRST ?? '0'),
      dpis: (dpiFilter ?? [150, 200, 300]).filter((d) => d >= 100),
      classes: process.env.BOXHUB_BENCH_CLASSES?.split(',') ?? null,
    },
    (card) => cSpeedSides.push(...card.sides.map((s) => ({ jpeg: s.jpeg, blank: s.truth === null }))),
  );
}

// The accuracy figures and their targets, per generator.
const sel = (g: GeneratorName, f: (s: SetSpec) => boolean): Tally => {
  const t = newTally();
  for (const s of SETS) if (s.generator === g && f(s)) merge(t, totals.get(label(s))!);
  return t;
};
const kindSum = (t: Tally, test: (k: string) => boolean): Count => {
  const c: Count = { n: 0, right: 0, uncertain: 0, silent: 0 };
  for (const [k, v] of t.kinds)
    if (test(k)) {
      c.n += v.n;
      c.right += v.right;
      c.uncertain += v.uncertain;
      c.silent += v.silent;
    }
  return c;
};
const fmtCount = (c: Count) =>
  `${pct(c.right, c.n, 2)} right (${c.right}/${c.n}), ${c.uncertain} uncertain, ${c.silent} silent`;
const isTick = (k: string) => k === 'tick' || k === 'thin-tick';
for (const g of ['A', 'B'] as const) {
  if (!SETS.some((s) => s.generator === g)) continue;
  const hi = sel(g, (s) => s.scenario !== 'clean' && s.dpi >= 150 && s.dpi <= 300);
  const d200 = sel(g, (s) => s.scenario !== 'clean' && s.dpi === 200);
  const d100 = sel(g, (s) => s.dpi === 100);
  const bc100 = sel(g, (s) => s.scenario === 'barcode' && s.dpi === 100);
  const bcAll = sel(g, (s) => s.scenario === 'barcode');
  const all = sel(g, () => true);
  const hiAll = sel(g, (s) => s.dpi >= 150);
  console.log(
    `\n# accuracy against the targets, generator ${g}${g === 'A' ? (tune ? ' (tuning seeds)' : ' (evaluation seeds)') : ' (independent, evaluation only)'}`,
  );
  console.log(
    `  areas right 150-300 dpi            ${pct(hi.areas.right, hi.areas.n)} (${hi.areas.right}/${hi.areas.n})   target ≥ 99.9 %`,
  );
  console.log(
    `  uncertain areas at 200 dpi         ${pct(d200.areas.uncertain, d200.areas.n)} (${d200.areas.uncertain}/${d200.areas.n})   target ≤ 0.3 %`,
  );
  console.log(
    `  uncertain 150-300 dpi, by hand     ${fmtKinds(hi.uncertainHands)}; by class ${fmtKinds(hi.uncertainKinds)}`,
  );
  console.log(
    `  light pencil 0.20-0.30, 150-300    ${fmtCount(kindSum(hi, (k) => k === 'light-pencil'))}   target ≥ 99 % right`,
  );
  console.log(`  light pencil 0.20-0.30, 100 dpi    ${fmtCount(kindSum(d100, (k) => k === 'light-pencil'))}`);
  console.log(
    `  faint pencil 0.15-0.20, 150-300    ${fmtCount(kindSum(hi, (k) => k === 'faint-pencil'))}   (no target)`,
  );
  console.log(`  ticks, 150-300 dpi                 ${fmtCount(kindSum(hi, isTick))}   target ≥ 99.5 % right`);
  console.log(`  ticks, 100 dpi                     ${fmtCount(kindSum(d100, isTick))}`);
  console.log(
    `  silent errors at 100 dpi           ${d100.areas.silent} in ${d100.pages} pages ${d100.areas.silent ? `(${fmtKinds(d100.silentKinds)})` : ''}   target 0`,
  );
  console.log(
    `  silent errors 150-600 dpi          ${hiAll.areas.silent} in ${hiAll.pages} pages ${hiAll.areas.silent ? `(${fmtKinds(hiAll.silentKinds)})` : ''}   must stay 0`,
  );
  console.log(
    `  Code128 student number at 100 dpi  ${bc100.barcodeRead}/${bc100.barcodeCards} read, ${bc100.barcodeWrong} wrong   target all read`,
  );
  console.log(
    `  Code128 student number, all dpi    ${bcAll.barcodeRead}/${bcAll.barcodeCards} read, ${bcAll.barcodeWrong} wrong`,
  );
  console.log(
    `  blank backs (grey paper, backing)  ${bcAll.blankSkipped}/${bcAll.blankPages} skipped as blank; students ${bcAll.studentsOk}/${bcAll.students} right, ${bcAll.extraResults} extra results   target all skipped, 0 extra`,
  );
  console.log(
    `  swapped sheets, personalised card  ${bcAll.swapPairs - bcAll.swapMerged}/${bcAll.swapPairs} pairs detected   target all`,
  );
  console.log(
    `  student ids                        wrong ${all.snWrong + all.barcodeWrong + all.studentsWrong}, QR wrong ${all.qrWrong}   must stay 0`,
  );
  console.log(`  QR read                            ${pct(all.qrRead, all.qrPages, 1)} (${all.qrRead}/${all.qrPages})`);
  console.log(
    `  upside-down detected               ${all.upsideDownRight}/${all.upsideDownPages}, orientation wrong ${all.orientationWrong}`,
  );
  const perKind = [...all.kinds.entries()].sort((a, b) => a[0].localeCompare(b[0]));
  console.log(`  per mark class, 150-300 dpi / 100 dpi:`);
  for (const [k] of perKind) {
    const h = hi.kinds.get(k),
      l = d100.kinds.get(k);
    console.log(`    ${k.padEnd(14)} ${h ? fmtCount(h) : '-'}  |  ${l ? fmtCount(l) : '-'}`);
  }
}

// Speed: one thread, then the pool, on generator A's mixed 200-dpi pages. With
// BOXHUB_BENCH_COMPARE=DIR (another copy of packages/recognizer/src), that recognizer reads the
// same pages on the same thread, alternating page by page, for a ratio measured side by side.
if (speedPages.length > 0) {
  const layouts = rec.createLayoutSet(allLayouts.get('A')!);
  sharp.concurrency(1);
  for (const p of speedPages.slice(0, 2)) await rec.recognizePage(p, layouts);
  const compareDir = process.env.BOXHUB_BENCH_COMPARE;
  const other = compareDir
    ? ((await import(pathToFileURL(resolve(compareDir, 'index.ts')).href)) as Recognizer)
    : undefined;
  const otherLayouts = other ? other.createLayoutSet([(await other.planTemplate(BENCH_CARD)).layout]) : undefined;
  if (other && otherLayouts) for (const p of speedPages.slice(0, 2)) await other.recognizePage(p, otherLayouts);
  let ours = 0,
    theirs = 0;
  for (const p of speedPages) {
    let t1 = performance.now();
    await rec.recognizePage(p, layouts);
    ours += performance.now() - t1;
    if (other && otherLayouts) {
      t1 = performance.now();
      await other.recognizePage(p, otherLayouts);
      theirs += performance.now() - t1;
    }
  }
  const single = ours / speedPages.length;
  if (other)
    console.log(
      `\n# speed side by side: ${compareDir} ${(theirs / speedPages.length).toFixed(1)} ms/page, this recognizer ${single.toFixed(1)} ms/page (${(single / (theirs / speedPages.length)).toFixed(2)}× the time)`,
    );
  const poolRate = async (pl: InstanceType<typeof rec.PagePool>) => {
    for (const p of speedPages.slice(0, 4)) await pl.recognize(p);
    const t1 = performance.now();
    await Promise.all([...speedPages, ...speedPages].map((p) => pl.recognize(p)));
    return (2 * speedPages.length) / ((performance.now() - t1) / 1000);
  };
  const pool1 = new rec.PagePool({ layouts: allLayouts.get('A')!, workers: 1 });
  const rate1 = await poolRate(pool1);
  await pool1.close();
  const rate2 = await poolRate(pool);
  console.log('\n# speed (generator A, mixed 200 dpi pages)');
  console.log(
    `  one thread                      ${single.toFixed(1)} ms/page = ${(1000 / single).toFixed(1)} pages/s/core   (target ≥ 10)`,
  );
  console.log(
    `  pool of 1 / 2 workers           ${rate1.toFixed(1)} / ${rate2.toFixed(1)} pages/s = ${(rate2 / rate1).toFixed(2)}× with both cores`,
  );
}
// Speed on generator C's 200-dpi pages (every class run, its first card; blank backs apart):
// one thread, each page twice after one warm-up, the load average before and after.
if (cSpeedSides.length > 0) {
  const layouts = rec.createLayoutSet(allLayouts.get('B')!);
  sharp.concurrency(1);
  const before = loadavg()[0]!;
  for (const s of cSpeedSides.slice(0, 2)) await rec.recognizePage(s.jpeg, layouts);
  const spent = { card: 0, cards: 0, blank: 0, blanks: 0 };
  for (let round = 0; round < 2; round++)
    for (const s of cSpeedSides) {
      const t1 = performance.now();
      await rec.recognizePage(s.jpeg, layouts);
      const dt = performance.now() - t1;
      if (s.blank) {
        spent.blank += dt;
        spent.blanks++;
      } else {
        spent.card += dt;
        spent.cards++;
      }
    }
  const all = (spent.card + spent.blank) / (spent.cards + spent.blanks);
  const card = spent.cards > 0 ? spent.card / spent.cards : Number.NaN;
  console.log(`\n# speed (generator C, 200 dpi pages: the first card of each set run, ${cSpeedSides.length} sides)`);
  console.log(
    `  one thread, every side           ${all.toFixed(1)} ms/page = ${(1000 / all).toFixed(1)} pages/s/core   (target ≥ 10)`,
  );
  console.log(
    `  … sides with a card / blank backs ${card.toFixed(1)} / ${spent.blanks > 0 ? (spent.blank / spent.blanks).toFixed(1) : '-'} ms/page = ${(1000 / card).toFixed(1)} pages/s/core for the cards' sides`,
  );
  console.log(
    `  load average                      ${before.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after (one-minute)`,
  );
}
await pool.close();
console.log(
  `  load average (others' work)     ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} at the end; speed figures are only meaningful near 0`,
);
console.log(`  bench wall time                 ${((performance.now() - t0) / 1000).toFixed(0)} s`);

const amc = spawnSync('sh', ['-c', 'command -v auto-multiple-choice'], { encoding: 'utf8' });
if (amc.status === 0 && !only) {
  const { AMC_SETS, runAmcComparison, printSideBySide } = await import('./amc/index.ts');
  const boxhub = new Map(
    [...totals.entries()].map(([k, v]) => [
      k,
      {
        pages: v.pages,
        areas: v.areas.n,
        correct: v.areas.right,
        silent: v.areas.silent,
        uncertain: v.areas.uncertain,
        ms: v.ms,
      },
    ]),
  );
  printSideBySide(boxhub, await runAmcComparison(AMC_SETS, { copies: quick ? 3 : 12 }));
} else console.log('\n# Auto Multiple Choice: not found (apt-get install auto-multiple-choice to compare); skipped');
