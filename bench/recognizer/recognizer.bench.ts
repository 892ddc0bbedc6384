// Feedback-card recognizer benchmark: synthetic filled cards rendered from the template with
// ground truth per area and scan effects (bench-card.ts), read back through the worker pool.
// Prints per-area accuracy, silent errors apart from uncertain areas, QR and student-number
// read rates, upside-down detection and speed, against the targets of the issue.
// BOXHUB_BENCH_TUNE=1 runs the tuning seeds instead of the evaluation seeds.
import { Worker } from 'node:worker_threads';
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import sharp from 'sharp';
import { createLayoutSet, planTemplate, PagePool, recognizePage, type PageReading } from '../../packages/recognizer/src/index.ts';
import { BENCH_CARD, EVALUATION_SEED_BASE, TUNING_SEED_BASE, type SetName } from './bench-card.ts';
import type { RenderedCard, RenderJob } from './render-worker.ts';

const tune = process.env.BOXHUB_BENCH_TUNE === '1';
const seedBase = tune ? TUNING_SEED_BASE : EVALUATION_SEED_BASE;
const quick = process.env.BOXHUB_BENCH_QUICK === '1';

interface SetSpec { label: string; set: SetName; dpi: number; cards: number }
const SETS: SetSpec[] = ([
  { label: 'clean 150 dpi', set: 'clean', dpi: 150, cards: 4 },
  { label: 'clean 200 dpi', set: 'clean', dpi: 200, cards: 4 },
  { label: 'clean 300 dpi', set: 'clean', dpi: 300, cards: 3 },
  { label: 'clean 600 dpi', set: 'clean', dpi: 600, cards: 1 },
  { label: 'hard 200 dpi', set: 'hard', dpi: 200, cards: 14 },
  { label: 'hard 300 dpi', set: 'hard', dpi: 300, cards: 8 },
  { label: 'hard 100 dpi', set: 'hard', dpi: 100, cards: 12 },
] as SetSpec[]).map((s) => (quick ? { ...s, cards: Math.max(1, Math.ceil(s.cards / 4)) } : s));

function renderAll(spec: SetSpec, setIndex: number): Promise<RenderedCard[]> {
  const workers = [0, 1].map(() => new Worker(new URL('./worker-boot.mjs', import.meta.url), { workerData: { entry: new URL('./render-worker.ts', import.meta.url).href } }));
  const jobs: RenderJob[] = Array.from({ length: spec.cards }, (_, i) => ({ id: i, set: spec.set, dpi: spec.dpi, seed: seedBase + setIndex * 1000 + i }));
  const done: RenderedCard[] = [];
  return new Promise((resolve, reject) => {
    const feed = (w: Worker) => { const j = jobs.shift(); if (j) w.postMessage(j); };
    for (const w of workers) {
      w.on('error', reject);
      w.on('message', (c: RenderedCard) => {
        done.push(c);
        if (done.length === spec.cards) { for (const x of workers) void x.terminate(); resolve(done.sort((a, b) => a.id - b.id)); } else feed(w);
      });
      feed(w);
    }
  });
}

interface Tally {
  pages: number; unreadable: number; areas: number; correct: number; uncertain: number; silent: number;
  silentKinds: Map<string, number>; uncertainKinds: Map<string, number>;
  qrPages: number; qrRead: number; qrWrong: number;
  snCards: number; snRead: number; snError: number; snWrong: number; snAmbiguous: number; snAmbiguousFlagged: number;
  upsideDownPages: number; upsideDownRight: number; orientationWrong: number; folded: number; foldedRead: number;
  ms: number[];
}

function newTally(): Tally {
  return { pages: 0, unreadable: 0, areas: 0, correct: 0, uncertain: 0, silent: 0, silentKinds: new Map(), uncertainKinds: new Map(), qrPages: 0, qrRead: 0, qrWrong: 0, snCards: 0, snRead: 0, snError: 0, snWrong: 0, snAmbiguous: 0, snAmbiguousFlagged: 0, upsideDownPages: 0, upsideDownRight: 0, orientationWrong: 0, folded: 0, foldedRead: 0, ms: [] };
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

function score(t: Tally, card: RenderedCard, readings: PageReading[]): void {
  card.sides.forEach((side, k) => {
    const r = readings[k]!;
    t.pages++;
    t.ms.push(r.ms);
    if (side.upsideDown) t.upsideDownPages++;
    if (side.folded) { t.folded++; if (r.status === 'ok') t.foldedRead++; }
    if (r.status !== 'ok') { t.unreadable++; t.areas += side.truth.length; t.uncertain += side.truth.length; return; }
    if (r.upside_down === side.upsideDown) { if (side.upsideDown) t.upsideDownRight++; } else t.orientationWrong++;
    r.areas.forEach((a, i) => {
      const truth = side.truth[i]!;
      t.areas++;
      if (a.state === 'uncertain') { t.uncertain++; bump(t.uncertainKinds, truth.kind); }
      else if ((a.state === 'filled') === truth.filled) t.correct++;
      else { t.silent++; bump(t.silentKinds, `${truth.kind}->${a.state}(score ${a.score})`); }
    });
    if (k === 0) {
      t.qrPages++;
      if (r.qrcode === card.qrcode) t.qrRead++; else if (r.qrcode) t.qrWrong++;
      t.snCards++;
      if (card.ambiguous) { t.snAmbiguous++; if (r.student_id === null) t.snAmbiguousFlagged++; else t.snWrong++; }
      else if (r.student_id === card.studentId) t.snRead++;
      else if (r.student_id === null) t.snError++;
      else t.snWrong++;
    }
  });
}

const pct = (a: number, b: number) => (b === 0 ? '   n/a' : `${((100 * a) / b).toFixed(3)} %`);
const fmtKinds = (m: Map<string, number>) => [...m.entries()].map(([k, v]) => `${k} ×${v}`).join(', ') || '-';

function report(label: string, t: Tally): void {
  const ms = t.ms.reduce((a, b) => a + b, 0) / Math.max(1, t.ms.length);
  console.log(`\n## ${label}: ${t.pages} pages, ${t.areas} areas${t.unreadable ? `, ${t.unreadable} pages unreadable` : ''}`);
  console.log(`  areas right         ${pct(t.correct, t.areas)}  (${t.correct}/${t.areas})`);
  console.log(`  silent errors       ${t.silent}  ${t.silent ? fmtKinds(t.silentKinds) : ''}`);
  console.log(`  uncertain           ${pct(t.uncertain, t.areas)}  (${t.uncertain})  ${fmtKinds(t.uncertainKinds)}`);
  console.log(`  QR read             ${pct(t.qrRead, t.qrPages)}  (${t.qrRead}/${t.qrPages}, wrong ${t.qrWrong})`);
  console.log(`  student number      read ${t.snRead}, reported error ${t.snError}, wrong ${t.snWrong}; double-marked ${t.snAmbiguous} of which flagged ${t.snAmbiguousFlagged}`);
  console.log(`  upside-down pages   ${t.upsideDownRight}/${t.upsideDownPages} detected, orientation wrong on ${t.orientationWrong}`);
  if (t.folded) console.log(`  folded corner       ${t.foldedRead}/${t.folded} pages read with three fiducials`);
  console.log(`  ms per page         ${ms.toFixed(1)} (in a worker, decode included)`);
}

console.log(`# recognizer benchmark — ${tune ? 'TUNING seeds' : 'evaluation seeds'}${quick ? ' (quick)' : ''}; ${BENCH_CARD.chapters.reduce((a, c) => a + c.areas, 0)} areas per card`);
const { layout } = await planTemplate(BENCH_CARD);
const layouts = createLayoutSet([layout]);
const pool = new PagePool({ layouts: [layout], workers: 2 });
const totals = new Map<string, Tally>();
let speedPages: Uint8Array[] = [];
const t0 = performance.now();
const load0 = loadavg().map((x) => x.toFixed(1)).join(' ');
for (const [i, spec] of SETS.entries()) {
  const cards = await renderAll(spec, i);
  const tally = newTally();
  const readings = await Promise.all(cards.map((c) => Promise.all(c.sides.map((s) => pool.recognize(s.jpeg)))));
  cards.forEach((c, k) => score(tally, c, readings[k]!));
  report(spec.label, tally);
  totals.set(spec.label, tally);
  if (spec.set === 'hard' && spec.dpi === 200) speedPages = cards.flatMap((c) => c.sides.map((s) => s.jpeg));
}

// Speed: one thread, then the two-worker pool, on the hard 200-dpi pages.
sharp.concurrency(1);
for (const p of speedPages.slice(0, 2)) await recognizePage(p, layouts);
let t = performance.now();
for (const p of speedPages) await recognizePage(p, layouts);
const single = (performance.now() - t) / speedPages.length;
const poolRate = async (pl: PagePool) => {
  for (const p of speedPages.slice(0, 4)) await pl.recognize(p);
  const t1 = performance.now();
  await Promise.all([...speedPages, ...speedPages].map((p) => pl.recognize(p)));
  return (2 * speedPages.length) / ((performance.now() - t1) / 1000);
};
const pool1 = new PagePool({ layouts: [layout], workers: 1 });
const rate1 = await poolRate(pool1);
await pool1.close();
const rate2 = await poolRate(pool);
await pool.close();

const sum = (labels: string[], f: (t: Tally) => number) => labels.reduce((a, l) => a + f(totals.get(l)!), 0);
const clean = ['clean 150 dpi', 'clean 200 dpi', 'clean 300 dpi', 'clean 600 dpi'];
const hard = ['hard 200 dpi', 'hard 300 dpi'];
const all = SETS.map((s) => s.label);
console.log('\n# targets');
console.log(`  clean ≥150 dpi areas right      ${pct(sum(clean, (x) => x.correct), sum(clean, (x) => x.areas))}   (target 100 %)`);
console.log(`  hard 200-300 dpi areas right    ${pct(sum(hard, (x) => x.correct), sum(hard, (x) => x.areas))}   (target ≥ 99.95 %)`);
console.log(`  hard 200-300 dpi silent errors  ${sum(hard, (x) => x.silent)}   (target 0)`);
console.log(`  hard 200-300 dpi uncertain      ${pct(sum(hard, (x) => x.uncertain), sum(hard, (x) => x.areas))}   (target ≤ 0.5 %)`);
console.log(`  hard 100 dpi areas right        ${pct(totals.get('hard 100 dpi')!.correct, totals.get('hard 100 dpi')!.areas)}   (target ≥ 99.5 %), silent ${totals.get('hard 100 dpi')!.silent}`);
console.log(`  QR read, all sets               ${pct(sum(all, (x) => x.qrRead), sum(all, (x) => x.qrPages))}   (target 100 %), wrong ${sum(all, (x) => x.qrWrong)}`);
console.log(`  upside-down detected            ${sum(all, (x) => x.upsideDownRight)}/${sum(all, (x) => x.upsideDownPages)}, orientation wrong ${sum(all, (x) => x.orientationWrong)}   (target 100 %)`);
console.log(`  student numbers                 read ${sum(all, (x) => x.snRead)}, reported error ${sum(all, (x) => x.snError + x.snAmbiguousFlagged)}, wrong ${sum(all, (x) => x.snWrong)}   (target: never wrong)`);
console.log(`  speed, one thread, 200 dpi      ${single.toFixed(1)} ms/page = ${(1000 / single).toFixed(1)} pages/s/core   (target ≥ 10)`);
console.log(`  speed, pool of 1 / 2 workers    ${rate1.toFixed(1)} / ${rate2.toFixed(1)} pages/s = ${(rate2 / rate1).toFixed(2)}× with both cores`);
console.log(`  load average (others' work)     ${loadavg().map((x) => x.toFixed(1)).join(' ')} at the end, ${load0} at the start; speed figures are only meaningful near 0`);
console.log(`  bench wall time                 ${((performance.now() - t0) / 1000).toFixed(0)} s`);

const amc = spawnSync('sh', ['-c', 'command -v auto-multiple-choice'], { encoding: 'utf8' });
if (amc.status === 0) {
  const { AMC_SETS, runAmcComparison, printSideBySide } = await import('./amc/index.ts');
  printSideBySide(totals, await runAmcComparison(AMC_SETS, { copies: quick ? 3 : 12 }));
} else console.log('\n# Auto Multiple Choice: not found (apt-get install auto-multiple-choice to compare); skipped');
