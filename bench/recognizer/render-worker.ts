// Renders synthetic filled cards for the benchmark on a worker thread.
import { parentPort } from 'node:worker_threads';
import { planTemplate, type Layout, type CardDrawing } from '../../packages/recognizer/src/index.ts';
import { fillCard, type AreaTruth } from '../../packages/recognizer/src/synthetic/filled-card.ts';
import { renderScan } from '../../packages/recognizer/src/synthetic/render-scan.ts';
import { mulberry32 } from '../../packages/recognizer/src/synthetic/random.ts';
import { BENCH_CARD, MIXES, effectsFor, showThroughFor, type SetName } from './bench-card.ts';

export interface RenderJob { id: number; set: SetName; dpi: number; seed: number }
export interface RenderedSide { jpeg: Uint8Array; truth: AreaTruth[]; upsideDown: boolean; folded: boolean }
export interface RenderedCard { id: number; studentId: string; ambiguous: boolean; qrcode: string; sides: RenderedSide[] }

let plan: Promise<{ layout: Layout; cards: CardDrawing[] }> | undefined;

parentPort!.on('message', async (job: RenderJob) => {
  plan ??= planTemplate(BENCH_CARD);
  const { layout, cards } = await plan;
  const card = fillCard(layout, cards[0]!, mulberry32(job.seed), MIXES[job.set]);
  const sides: RenderedSide[] = [];
  for (let k = 0; k < card.sides.length; k++) {
    const s = card.sides[k]!, other = card.sides[1 - k]!;
    const fx = effectsFor(job.set, job.dpi, job.seed * 2 + k);
    const st = showThroughFor(job.set, job.seed * 2 + k);
    const jpeg = await renderScan(s.ops, s.marks, st > 0 ? { ...fx, showThrough: { ops: other.ops, marks: other.marks, strength: st } } : fx);
    sides.push({ jpeg, truth: s.truth, upsideDown: fx.upsideDown ?? false, folded: fx.foldedCorner !== undefined });
  }
  const out: RenderedCard = { id: job.id, studentId: card.studentId, ambiguous: card.studentNumberAmbiguous, qrcode: card.qrcode, sides };
  parentPort!.postMessage(out, sides.map((s) => s.jpeg.buffer as ArrayBuffer));
});
