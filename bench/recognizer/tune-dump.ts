// Tuning aid: renders generator A's TUNING pages (mixed set, every resolution) and writes, per
// page, the recogniser's measured levels, the page's fills and every area's evidence with its
// ground truth (and the darkness grid of the areas in the uncertain band), as JSON lines, so a
// rule can be tried on thousands of areas without rendering again. Never run on generator B.
//   npx tsx bench/recognizer/tune-dump.ts OUT.jsonl [cards per dpi, default 16] [first card, default 0] [mixed|barcode, default mixed]
import { createWriteStream } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { BARCODE_CARD, BENCH_CARD, TUNING_SEED_BASE } from './bench-card.ts';
import { loadRecognizer } from './under-test.ts';
import { densePrintBehind } from '../../packages/recognizer/src/page-recognizer.ts';
import type { RenderedCard, RenderJob } from './rendered.ts';
import { decodeGrey } from '../../packages/recognizer/src/grey-image.ts';
import type { PageDiagnostics } from '../../packages/recognizer/src/index.ts';

const out = createWriteStream(process.argv[2] ?? '/tmp/tune.jsonl');
const perDpi = Number(process.argv[3] ?? '16');
const first = Number(process.argv[4] ?? '0');
const scenario = process.argv[5] === 'barcode' ? ('barcode' as const) : ('mixed' as const);
const rec = await loadRecognizer();
const { layout } = await rec.planTemplate(scenario === 'barcode' ? BARCODE_CARD : BENCH_CARD);
const layouts = rec.createLayoutSet([layout]);
// Seeds as the bench's tuning run numbers them (set index of bench A list: mixed 100 dpi is 2,
// 150 is 3, 200 is 4, 300 is 5; barcode 100 dpi is 6, 150 is 7, 200 is 8), and beyond.
const SETS =
  scenario === 'barcode'
    ? ([
        [100, 6],
        [150, 7],
        [200, 8],
      ] as const)
    : ([
        [100, 2],
        [150, 3],
        [200, 4],
        [300, 5],
      ] as const);
const jobs: RenderJob[] = SETS.flatMap(([dpi, idx]) =>
  Array.from({ length: perDpi }, (_, k) => k + first).map((i) => ({
    generator: 'A' as const,
    scenario,
    dpi,
    seed: TUNING_SEED_BASE + idx * 1000 + i,
    id: dpi * 1000 + i,
    tuning: true,
  })),
);
const workers = [0, 1].map(
  () =>
    new Worker(new URL('./worker-boot.mjs', import.meta.url), {
      workerData: { entry: new URL('./render-worker.ts', import.meta.url).href },
    }),
);
let pending = jobs.length;
await new Promise<void>((resolve) => {
  const feed = (w: Worker) => {
    const j = jobs.shift();
    if (j) w.postMessage(j);
  };
  for (const w of workers) {
    w.on('message', async (c: RenderedCard) => {
      feed(w);
      for (const s of c.sides) {
        if (!s.truth) continue;
        const d: PageDiagnostics = {};
        const r = await rec.recognizeGrey(await decodeGrey(s.jpeg), layouts, d);
        if (r.status !== 'ok') {
          out.write(`${JSON.stringify({ unreadable: true })}\n`);
          continue;
        }
        const side = layout.sides.find((x) => x.sheet === r.sheet && x.side === r.side)!;
        const isBehind = densePrintBehind(layout, side);
        const areas = r.areas.map((a, i) => {
          const e = d.areas![i]!,
            t = s.truth![i]!,
            sm = d.samples![i]!,
            la = side.areas[i]!;
          // The grid of areas in the uncertain band, and of every area with the other side's print behind it.
          const behind = isBehind(la);
          const band = (e.solid > 0.04 && e.solid < 0.35) || behind;
          return {
            ...e,
            state: a.state,
            kind: t.kind,
            filled: t.filled,
            x: la.x,
            y: la.y,
            ch: la.chapter,
            ...(behind ? { behind } : {}),
            ...(d.clearPaper?.has(i) ? { paperClear: d.clearPaper.get(i) } : {}),
            ...(band
              ? {
                  paper: sm.paper,
                  range: sm.range,
                  grid: Array.from(sm.grid, (v) => (Number.isNaN(v) ? null : Math.round(v * 1000) / 1000)),
                  inner: Array.from(sm.inner),
                  cols: sm.cols,
                  rows: sm.rows,
                  step: sm.step,
                }
              : {}),
          };
        });
        out.write(
          `${JSON.stringify({ scenario, dpi: Math.floor(c.id / 1000), card: c.id % 1000, sheet: r.sheet, side: r.side, hand: c.hand, pxmm: d.pxmm, levels: d.levels, quality: d.quality, fills: d.fills, showThrough: d.showThrough ?? null, areas })}\n`,
        );
      }
      if (--pending === 0) resolve();
    });
    feed(w);
  }
});
for (const w of workers) void w.terminate();
out.end();
