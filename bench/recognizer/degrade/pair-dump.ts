// Tuning aid for generator C: the same cards (marks and damage come from the seed alone) scanned
// at several resolutions, every area's evidence dumped one line each, so that what changes with
// the resolution alone can be seen area by area. TUNING or scratch seeds only: a seed of the
// evaluation (run.ts) is refused.
//   npx tsx bench/recognizer/degrade/pair-dump.ts OUT.jsonl CLASS FIRST_SEED CARDS DPI,DPI,…
// CLASS is a class label (classes.ts: clean, office, toner:heavy, …); cards FIRST_SEED … FIRST_SEED
// + CARDS - 1 (card i is rendered as tune.ts renders card i: the quiz for even i, the survey for
// odd). Pages are cached in .tmp/degrade-cache/pair-DPI-SEED.json.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { loadRecognizer } from '../under-test.ts';
import { INDEPENDENT_CARDS } from '../independent/cards.ts';
import type { RenderedCard } from '../rendered.ts';
import { CLASS_STRENGTHS, classLabel } from './classes.ts';
import { DEGRADE_EVALUATION_SEED_BASE } from './run.ts';
import type { DegradeJob } from './render-worker.ts';
import type { PageDiagnostics, PageReading } from '../../../packages/recognizer/src/index.ts';
import { decodeGrey } from '../../../packages/recognizer/src/grey-image.ts';

const [out, label, firstArg, cardsArg, dpiArg] = process.argv.slice(2);
if (!out || !label || !firstArg || !cardsArg || !dpiArg) {
  console.error('usage: pair-dump.ts OUT.jsonl CLASS FIRST_SEED CARDS DPI,DPI');
  process.exit(2);
}
const first = Number(firstArg),
  cards = Number(cardsArg),
  dpis = dpiArg.split(',').map(Number);
const cs = CLASS_STRENGTHS.find(([c, s]) => classLabel(c, s) === label);
if (!cs) {
  console.error(`no class ${label}`);
  process.exit(2);
}
const evaluationSeed = (seed: number) =>
  [100, 150, 200, 300].some((d) => {
    const at = seed - DEGRADE_EVALUATION_SEED_BASE - d * 10_000;
    return at >= 0 && at < CLASS_STRENGTHS.length * 500 + 40;
  });
const jobs: DegradeJob[] = [];
for (const dpi of dpis)
  for (let i = 0; i < cards; i++) {
    if (evaluationSeed(first + i)) {
      console.error(`seed ${first + i} is an evaluation seed: refused`);
      process.exit(2);
    }
    jobs.push({ cls: cs[0], strength: cs[1], dpi, id: i, seed: first + i });
  }
const dir = new URL('../../../.tmp/degrade-cache/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
const file = (j: { dpi: number; seed: number }) => `${dir}pair-${j.dpi}-${j.seed}.json`;

const todo = jobs.filter((j) => !existsSync(file(j)));
if (todo.length > 0) {
  const workers = [0, 1].map(
    () =>
      new Worker(new URL('../worker-boot.mjs', import.meta.url), {
        workerData: { entry: new URL('./render-worker.ts', import.meta.url).href },
      }),
  );
  let left = todo.length;
  await new Promise<void>((resolve, reject) => {
    for (const w of workers) {
      let current: DegradeJob | undefined;
      const send = () => {
        current = todo.shift();
        if (current) w.postMessage(current);
      };
      w.on('error', reject);
      w.on('message', (c: RenderedCard & { error?: string }) => {
        if (c.error) return reject(new Error(c.error));
        writeFileSync(
          file(current!),
          JSON.stringify({ ...c, sides: c.sides.map((s) => ({ ...s, jpeg: Buffer.from(s.jpeg).toString('base64') })) }),
        );
        if (--left === 0) {
          for (const x of workers) void x.terminate();
          resolve();
        } else send();
      });
      send();
    }
  });
}

const rec = await loadRecognizer();
const layouts = rec.createLayoutSet(
  await Promise.all(INDEPENDENT_CARDS.map(async (d) => (await rec.planTemplate(d)).layout)),
);
const lines: string[] = [];
for (const j of jobs) {
  const c = JSON.parse(readFileSync(file(j), 'utf8'));
  const card: RenderedCard = {
    ...c,
    sides: c.sides.map((s: { jpeg: string }) => ({ ...s, jpeg: new Uint8Array(Buffer.from(s.jpeg, 'base64')) })),
  };
  const diags: PageDiagnostics[] = [];
  const readings: PageReading[] = [];
  for (const s of card.sides) {
    const diag: PageDiagnostics = {};
    readings.push(await rec.recognizeGrey(await decodeGrey(s.jpeg), layouts, diag));
    diags.push(diag);
  }
  const pooled = rec.poolStudent(readings);
  card.sides.forEach((s, k) => {
    if (s.truth === null) return;
    const r = pooled[k]!,
      raw = readings[k]!,
      d = diags[k]!;
    const page = {
      seed: j.seed,
      dpi: j.dpi,
      hand: card.hand,
      sheet: s.sheet,
      side: s.side,
      status: r.status,
      pageHand: d.fills?.hand,
      fillLevel: d.fills?.level,
      levels: d.levels,
      specks: d.quality?.specks,
      speckSize: d.quality?.speckSize,
      local: d.quality?.local,
      show: d.quality?.showThrough,
    };
    s.truth.forEach((t, i) => {
      const e = d.areas?.[i];
      lines.push(
        JSON.stringify({
          ...page,
          i,
          area: `${t.chapter}.${t.index}`,
          kind: t.kind,
          filled: t.filled,
          state: r.status === 'ok' ? r.areas[i]!.state : 'unread',
          page: raw.status === 'ok' ? raw.areas[i]!.state : 'unread',
          alone: d.alone?.[i],
          overruled: d.overruled?.[i] ?? null,
          ev: e,
          sd: d.samples?.[i]?.sd,
        }),
      );
    });
  });
  process.stderr.write(`${j.dpi} ${j.seed}\n`);
}
writeFileSync(out, `${lines.join('\n')}\n`);
