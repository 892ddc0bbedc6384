// Diagnosis only (not committed): generator B's evidence, to name a failure class to reproduce on A.
import { createWriteStream } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { INDEPENDENT_CARDS, INDEPENDENT_SEED_BASE } from './independent/cards.ts';
import { loadRecognizer } from './under-test.ts';
import type { RenderedCard, RenderJob } from './rendered.ts';
import { decodeGrey } from '../../packages/recognizer/src/grey-image.ts';
import type { PageDiagnostics } from '../../packages/recognizer/src/index.ts';
const out = createWriteStream(process.argv[2]!);
const rec = await loadRecognizer();
const lays = await Promise.all(INDEPENDENT_CARDS.map(async (d) => (await rec.planTemplate(d)).layout));
const layouts = rec.createLayoutSet(lays);
const SETS = [[150, 1, 16], [200, 2, 20]] as const;
const jobs: RenderJob[] = SETS.flatMap(([dpi, idx, n]) => Array.from({ length: n }, (_, i) => ({ generator: 'B' as const, scenario: 'mixed' as const, dpi, seed: INDEPENDENT_SEED_BASE + idx * 1000 + i, id: dpi * 1000 + i })));
const workers = [0, 1].map(() => new Worker(new URL('./worker-boot.mjs', import.meta.url), { workerData: { entry: new URL('./independent/render-worker.ts', import.meta.url).href } }));
let pending = jobs.length;
await new Promise<void>((resolve) => {
  const feed = (w: Worker) => { const j = jobs.shift(); if (j) w.postMessage(j); };
  for (const w of workers) {
    w.on('message', async (c: RenderedCard) => {
      feed(w);
      for (const s of c.sides) {
        if (!s.truth) continue;
        const d: PageDiagnostics = {};
        const r = await rec.recognizeGrey(await decodeGrey(s.jpeg), layouts, d);
        if (r.status !== 'ok') continue;
        const areas = r.areas.map((a, i) => ({ ...d.areas![i]!, state: a.state, kind: s.truth![i]!.kind, filled: s.truth![i]!.filled }));
        out.write(JSON.stringify({ dpi: Math.floor(c.id / 1000), card: c.card, sheet: r.sheet, side: r.side, hand: c.hand, pxmm: d.pxmm, levels: d.levels, fills: d.fills, areas }) + '\n');
      }
      if (--pending === 0) resolve();
    });
    feed(w);
  }
});
for (const w of workers) void w.terminate();
out.end();
