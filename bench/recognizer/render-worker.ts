// Generator A: renders synthetic filled cards for the benchmark on a worker thread (canvas
// drawing of the template's own drawing list, packages/recognizer/src/synthetic).
import { parentPort } from 'node:worker_threads';
import type { CardDrawing, Layout } from '../../packages/recognizer/src/index.ts';
import { fillCard } from '../../packages/recognizer/src/synthetic/filled-card.ts';
import { renderScan } from '../../packages/recognizer/src/synthetic/render-scan.ts';
import { mulberry32 } from '../../packages/recognizer/src/synthetic/random.ts';
import {
  BARCODE_CARD,
  BENCH_CARD,
  MIXES,
  blankBackEffects,
  effectsFor,
  showThroughFor,
  studentIdFor,
} from './bench-card.ts';
import { loadRecognizer } from './under-test.ts';
import type { RenderedCard, RenderedSide, RenderJob } from './rendered.ts';

const rec = await loadRecognizer();
let dense: Promise<{ layout: Layout; cards: CardDrawing[] }> | undefined;

async function render(job: RenderJob): Promise<RenderedCard> {
  if (job.scenario === 'barcode') {
    const studentId = studentIdFor(job.seed);
    const { layout, cards } = await rec.planTemplate(BARCODE_CARD, {
      students: [{ student_id: studentId, name: `Student ${job.id + 1}` }],
    });
    const card = fillCard(layout, cards[0]!, mulberry32(job.seed), MIXES.hard);
    const sides: RenderedSide[] = [];
    for (let k = 0; k < card.sides.length; k++) {
      const s = card.sides[k]!;
      const fx = effectsFor('hard', job.dpi, job.seed * 4 + k);
      const jpeg = await renderScan(s.ops, s.marks, fx);
      sides.push({
        jpeg,
        truth: s.truth,
        sheet: s.sheet,
        side: s.side,
        upsideDown: fx.upsideDown ?? false,
        folded: fx.foldedCorner !== undefined,
      });
      // Single-sided cards scanned duplex: the sheet's back is blank but shows the front through.
      const bx = blankBackEffects(job.dpi, job.seed * 4 + k + 2);
      const back = await renderScan([], [], {
        ...bx,
        showThrough: { ops: s.ops, marks: s.marks, strength: showThroughFor('hard', job.seed * 4 + k) },
      });
      sides.push({ jpeg: back, truth: null, sheet: s.sheet, side: 'back', upsideDown: false, folded: false });
    }
    return {
      id: job.id,
      card: 1,
      studentId,
      ambiguous: false,
      personalised: true,
      qrcode: layout.qrcode,
      hand: card.hand,
      sides,
    };
  }
  dense ??= rec.planTemplate(BENCH_CARD);
  const { layout, cards } = await dense;
  const set = job.scenario === 'clean' ? 'clean' : 'hard';
  const card = fillCard(layout, cards[0]!, mulberry32(job.seed), MIXES[set]);
  const sides: RenderedSide[] = [];
  for (let k = 0; k < card.sides.length; k++) {
    const s = card.sides[k]!,
      other = card.sides[1 - k]!;
    const fx = effectsFor(set, job.dpi, job.seed * 2 + k);
    const st = showThroughFor(set, job.seed * 2 + k);
    const jpeg = await renderScan(
      s.ops,
      s.marks,
      st > 0 ? { ...fx, showThrough: { ops: other.ops, marks: other.marks, strength: st } } : fx,
    );
    sides.push({
      jpeg,
      truth: s.truth,
      sheet: s.sheet,
      side: s.side,
      upsideDown: fx.upsideDown ?? false,
      folded: fx.foldedCorner !== undefined,
    });
  }
  return {
    id: job.id,
    card: 0,
    studentId: card.studentId,
    ambiguous: card.studentNumberAmbiguous,
    personalised: false,
    qrcode: card.qrcode,
    hand: card.hand,
    sides,
  };
}

parentPort!.on('message', async (job: RenderJob) => {
  const out = await render(job);
  parentPort!.postMessage(
    out,
    out.sides.map((s) => s.jpeg.buffer as ArrayBuffer),
  );
});
