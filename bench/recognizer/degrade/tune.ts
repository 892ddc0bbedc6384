// Tuning aid for generator C: renders its TUNING seeds once into .tmp/degrade-cache/ and reads
// them again with the current recognizer on one thread (each card's sides judged together as one
// student, as the bench does), printing each class's figures and, with
// --list, every area read wrong or uncertain with its page's measured condition. Never on the
// evaluation seeds (run.ts).
//   npx tsx bench/recognizer/degrade/tune.ts [cards per set] [dpi,dpi] [class,class] [--list] [--offset=N] [--crops=DIR]
// With --list, each spot an area holds is shown as mm²/mm across, an edge spot with its size
// followed in the image (speck-spots.ts, `grownInImage`), then r and how far out its cell
// nearest the centre lies (share of the radius, rim-patch.ts); --crops=DIR writes each listed area's
// neighbourhood there as a PNG, 6 times magnified, to look at.
// --offset=N shifts every seed by N: scratch pages at a resolution whose own tuning seeds are
// another resolution's evaluation cards (300 dpi), refused where a seed would land on one.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import type { AreaSample } from '../../../packages/recognizer/src/area-sampler.ts';
import type { GreyImage } from '../../../packages/recognizer/src/grey-image.ts';
import { loadRecognizer } from '../under-test.ts';
import { INDEPENDENT_CARDS } from '../independent/cards.ts';
import type { RenderedCard } from '../rendered.ts';
import { CLASS_STRENGTHS, classLabel } from './classes.ts';
import { DEGRADE_EVALUATION_SEED_BASE, DEGRADE_TUNING_SEED_BASE } from './run.ts';
import type { DegradeJob } from './render-worker.ts';
import { grownInImage, spotsOf } from '../../../packages/recognizer/src/speck-spots.ts';
import { fillsOf, splitOf } from '../../../packages/recognizer/src/mark-classifier.ts';

const [cardsArg, dpiArg, classArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const list = process.argv.includes('--list');
const crops = process.argv.find((a) => a.startsWith('--crops='))?.slice(8);
const offset = Number(process.argv.find((a) => a.startsWith('--offset='))?.slice(9) ?? '0');
const cards = Number(cardsArg ?? '2');
const dpis = (dpiArg ?? '200').split(',').map(Number);
const classes = classArg ? classArg.split(',') : null;
// The tuning seeds at a resolution 100 dpi above an evaluated one are that resolution's
// evaluation cards (DEGRADE_*_SEED_BASE + 10 000 × dpi; a card's marks and damage come from its
// seed alone): refused, so that no threshold is set on an evaluation card.
const leaking = offset === 0 ? dpis.filter((d) => [150, 200, 300].includes(d - 100)) : [];
if (leaking.length > 0) {
  console.error(
    `tuning at ${leaking.join(', ')} dpi would render the evaluation's cards of ${leaking.map((d) => d - 100).join(', ')} dpi: refused`,
  );
  process.exit(2);
}
// With an offset, every seed is checked against the evaluation's (DEGRADE_EVALUATION_SEED_BASE
// + 10 000 × dpi + 500 × class + card, for the resolutions it is run at, up to 40 cards).
const evaluationSeed = (seed: number) =>
  [100, 150, 200, 300].some((d) => {
    const at = seed - DEGRADE_EVALUATION_SEED_BASE - d * 10_000;
    return at >= 0 && at < CLASS_STRENGTHS.length * 500 + 40;
  });
if (offset !== 0) {
  const bad = dpis.filter((dpi) =>
    CLASS_STRENGTHS.some((_, ci) =>
      Array.from({ length: cards }, (_, i) => DEGRADE_TUNING_SEED_BASE + dpi * 10_000 + ci * 500 + i + offset).some(
        evaluationSeed,
      ),
    ),
  );
  if (bad.length > 0) {
    console.error(`offset ${offset} at ${bad.join(', ')} dpi lands on the evaluation's seeds: refused`);
    process.exit(2);
  }
}
const rec = await loadRecognizer();
const layouts = rec.createLayoutSet(
  await Promise.all(INDEPENDENT_CARDS.map(async (d) => (await rec.planTemplate(d)).layout)),
);
const dir = new URL('../../../.tmp/degrade-cache/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });

async function renderMissing(jobs: DegradeJob[]): Promise<void> {
  const todo = jobs.filter((j) => !existsSync(`${dir}${j.seed}.json`));
  if (todo.length === 0) return;
  const workers = [0, 1].map(
    () =>
      new Worker(new URL('../worker-boot.mjs', import.meta.url), {
        workerData: { entry: new URL('./render-worker.ts', import.meta.url).href },
      }),
  );
  let left = todo.length;
  await new Promise<void>((resolve, reject) => {
    const feed = (w: Worker) => {
      const j = todo.shift();
      if (j) w.postMessage(j);
    };
    for (const w of workers) {
      w.on('error', reject);
      let current: DegradeJob | undefined;
      const send = () => {
        current = todo[0];
        feed(w);
      };
      w.on('message', (c: RenderedCard & { error?: string }) => {
        if (c.error) {
          reject(new Error(c.error));
          return;
        }
        writeFileSync(
          `${dir}${current!.seed}.json`,
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

const load = (seed: number): RenderedCard => {
  const c = JSON.parse(readFileSync(`${dir}${seed}.json`, 'utf8'));
  return {
    ...c,
    sides: c.sides.map((s: { jpeg: string }) => ({ ...s, jpeg: new Uint8Array(Buffer.from(s.jpeg, 'base64')) })),
  };
};

let wrongAll = 0,
  uncAll = 0,
  nAll = 0;
for (const dpi of dpis)
  for (const [cls, strength] of CLASS_STRENGTHS) {
    const label = classLabel(cls, strength);
    if (classes && !classes.some((f) => label.startsWith(f))) continue;
    const ci = CLASS_STRENGTHS.findIndex(([c, s]) => c === cls && s === strength);
    const jobs = Array.from({ length: cards }, (_, i) => ({
      cls,
      strength,
      dpi,
      id: i,
      seed: DEGRADE_TUNING_SEED_BASE + dpi * 10_000 + ci * 500 + i + offset,
    }));
    await renderMissing(jobs);
    let n = 0,
      unc = 0,
      wrong = 0,
      unread = 0,
      blanks = 0,
      blankOk = 0;
    const lines: string[] = [];
    for (const j of jobs) {
      const card = load(j.seed);
      // One card is one student: its sides are read, then judged together as the bench's
      // StudentAssembler does (poolStudent, docs/cards.md, section 5, step 9).
      const diags: Array<import('../../../packages/recognizer/src/index.ts').PageDiagnostics> = [];
      const readings: Array<import('../../../packages/recognizer/src/index.ts').PageReading> = [];
      for (const s of card.sides) {
        const diag: import('../../../packages/recognizer/src/index.ts').PageDiagnostics = {};
        const img = await (await import('../../../packages/recognizer/src/grey-image.ts')).decodeGrey(s.jpeg);
        readings.push(await rec.recognizeGrey(img, layouts, diag));
        diags.push(diag);
      }
      const pooled = rec.poolStudent(readings);
      // The student's hand and uniform greys: each side's evidence merged as poolStudent merges it.
      const sides = readings.flatMap((r) => (r.status === 'ok' && r.evidence ? [r.evidence] : []));
      const studentHand = fillsOf(sides.flatMap((e) => e.marks).sort((a, b) => a - b)).hand;
      // With --list: those greys, where the gap between residue and faint fills is looked for, on a
      // student whose sides alone or together left an area uncertain.
      if (
        list &&
        [...pooled, ...readings].some((r) => r.status === 'ok' && r.areas.some((a) => a.state === 'uncertain'))
      ) {
        const show = (greys: number[]) => {
          const sp = splitOf(greys);
          return `${greys.map((g) => g.toFixed(3)).join(' ')} split ${sp ? `${sp.below.toFixed(3)}|${sp.above.toFixed(3)}${sp.belowRun ? ' belowRun' : ''}${sp.aboveRun ? ' aboveRun' : ''}` : 'none'}`;
        };
        for (const [k, e] of sides.entries()) lines.push(`    seed ${j.seed} side ${k} greys ${show(e.greys)}`);
        lines.push(
          `    seed ${j.seed} student ${studentHand} greys ${show(sides.flatMap((e) => e.greys).sort((a, b) => a - b))}`,
        );
      }
      for (const [k, s] of card.sides.entries()) {
        const diag = diags[k]!;
        const r = pooled[k]!;
        const raw = readings[k]!;
        const q = diag.quality
          ? `bands ${diag.quality.bandsAcross.toFixed(3)}/${diag.quality.bandsAlong.toFixed(3)} uneven ${diag.quality.uneven.toFixed(2)} steep ${diag.quality.steep.toFixed(2)} contrast ${diag.quality.contrast.toFixed(0)} blur ${diag.quality.blurMm.toFixed(2)} block ${diag.quality.blockiness.toFixed(2)} specks ${diag.quality.specks.toFixed(2)} (largest ${(diag.quality.speckSize ?? Number.NaN).toFixed(2)} mm², measured ${(diag.quality.speckMeasured ?? Number.NaN).toFixed(2)}) show ${diag.quality.showThrough.toFixed(2)} local ${diag.quality.local.toFixed(2)}`
          : '';
        if (s.truth === null) {
          blanks++;
          if (r.status === 'blank') blankOk++;
          else lines.push(`    seed ${j.seed} blank back read as ${r.status} ${'detail' in r ? r.detail : ''}`);
          continue;
        }
        n += s.truth.length;
        if (r.status !== 'ok') {
          unread++;
          unc += s.truth.length;
          lines.push(
            `    seed ${j.seed} sheet ${s.sheet}${s.side[0]} ${r.status} ${'detail' in r ? r.detail : ''} ${q}`,
          );
          continue;
        }
        if (list) lines.push(`    seed ${j.seed} sheet ${s.sheet}${s.side[0]} ${q}`);
        for (const [i, a] of r.areas.entries()) {
          const t = s.truth![i]!;
          const ok = a.state !== 'uncertain' && (a.state === 'filled') === t.filled;
          if (a.state === 'uncertain') unc++;
          else if (!ok) wrong++;
          if (!ok && (list || a.state !== 'uncertain')) {
            const e = diag.areas?.[i];
            const sample = diag.samples?.[i];
            const sp = sample && diag.levels ? spotsOf(sample, diag.levels) : null;
            const spots = sp
              ? ` spots ${sp.spots.map((p) => `${p.area.toFixed(2)}/${p.side.toFixed(1)}${p.edge ? `E${diag.speckImage ? `(${grownInImage(sample!, p, diag.speckImage).toFixed(2)})` : ''}` : ''}r${p.reach.toFixed(2)}`).join(',')} rest ${sp.rest.toFixed(3)}`
              : '';
            if (crops && sample?.place && diag.speckImage)
              await writeCrop(
                diag.speckImage.img,
                sample.place,
                diag.speckImage.pxmm,
                `${crops}/${j.seed}-${s.sheet}${s.side[0]}-${a.chapter}.${a.index}.png`,
              );
            lines.push(
              `      ${a.state === 'uncertain' ? 'unc' : 'WRONG'} ${t.kind}->${a.state} area ${a.chapter}.${a.index} ${e ? `solid ${e.solid.toFixed(3)} peak ${e.peak.toFixed(3)} stroke ${e.stroke.toFixed(1)} blob ${e.blob.toFixed(1)}@${e.blobContrast.toFixed(3)}${spots}` : ''} [${diag.fills?.hand ?? '?'}/${studentHand}${diag.behind?.[i] ? ', behind print' : ''}${diag.cleared?.[i] ? ', QR taken out' : ''}; alone ${diag.alone?.[i] ?? '?'}${diag.overruled?.[i] ? `, by ${diag.overruled[i]}` : ''}${raw.status === 'ok' && raw.areas[i]!.state !== a.state ? `, student ${raw.areas[i]!.state}->${a.state}` : ''}]`,
            );
          }
        }
      }
    }
    wrongAll += wrong;
    uncAll += unc;
    nAll += n;
    console.log(
      `${label.padEnd(22)} ${dpi} dpi: ${n - unc - wrong}/${n} right, ${unc} uncertain, ${wrong} WRONG, ${unread} pages unreadable, blanks ${blankOk}/${blanks}`,
    );
    for (const l of lines) console.log(l);
  }
console.log(`total: ${nAll - uncAll - wrongAll}/${nAll} right, ${uncAll} uncertain, ${wrongAll} wrong`);

/** A square of the page around an area (its sampled ellipse and 1.5 mm beyond), magnified 6 times. */
async function writeCrop(
  img: GreyImage,
  place: NonNullable<AreaSample['place']>,
  pxmm: number,
  file: string,
): Promise<void> {
  const [cx, cy, , , , , rx, ry] = place;
  const half = Math.ceil((Math.max(rx, ry) + 1.5) * pxmm);
  const left = Math.max(0, Math.round(cx) - half),
    top = Math.max(0, Math.round(cy) - half);
  const w = Math.min(img.width - left, 2 * half),
    h = Math.min(img.height - top, 2 * half);
  mkdirSync(crops!, { recursive: true });
  await sharp(Buffer.from(img.data), { raw: { width: img.width, height: img.height, channels: 1 } })
    .extract({ left, top, width: w, height: h })
    .resize(w * 6, h * 6, { kernel: 'nearest' })
    .png()
    .toFile(file);
}
