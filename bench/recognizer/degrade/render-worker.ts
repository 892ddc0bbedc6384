// Generator C: filled cards printed by a damaged printer and scanned by a damaged scanner, one
// damage class at a time (classes.ts, damage.ts), on a worker thread. The cards and the marks'
// shapes are generator B's (the template PDF through poppler, SVG marks through librsvg): B is
// evaluation only, so no rule of the recognizer was set on those shapes; the students' hands,
// the damage and every random number are C's own.
import { parentPort } from 'node:worker_threads';
import type { Layout } from '../../../packages/recognizer/src/index.ts';
import { loadRecognizer } from '../under-test.ts';
import type { RenderedCard, RenderedSide, SideTruth } from '../rendered.ts';
import { INDEPENDENT_CARDS } from '../independent/cards.ts';
import { isFilledB, markSvg, type BKind } from '../independent/marks-svg.ts';
import { drawMarks, rasterisePdfPage } from '../independent/scan.ts';
import { drawDamage, type DamageClass, type Strength } from './classes.ts';
import { printerDamage, scanPage, spread, type Grey } from './damage.ts';
import { splitmix, type Rng } from './rng.ts';

export interface DegradeJob {
  cls: DamageClass;
  strength: Strength;
  dpi: number;
  seed: number;
  id: number;
}

const rec = await loadRecognizer();

type Hand = 'pen' | 'pencil' | 'light' | 'mixed';
const FILLED: BKind[] = [
  'pen',
  'pen',
  'pencil',
  'pencil',
  'light-pencil',
  'faint-pencil',
  'partial',
  'small',
  'tick',
  'thin-tick',
  'cross',
  'slash',
];
const STYLES: BKind[] = [
  'pen',
  'pen',
  'pen',
  'pen',
  'pen',
  'pen',
  'pen',
  'pen',
  'partial',
  'small',
  'tick',
  'cross',
  'slash',
];

function hand(r: Rng): { hand: Hand; mark(q: Rng, filled: boolean): { kind: BKind; level?: number } } {
  const x = r.next();
  const h: Hand = x < 0.35 ? 'pen' : x < 0.7 ? 'pencil' : x < 0.85 ? 'light' : 'mixed';
  const dark = h === 'pencil' ? r.range(0.35, 0.8) : h === 'light' ? r.range(0.2, 0.3) : 1;
  return {
    hand: h,
    mark(q, filled) {
      if (h === 'mixed')
        return filled
          ? { kind: q.pick(FILLED) }
          : q.next() < 0.15
            ? { kind: q.pick(['erasure', 'smudge', 'stray'] as const) }
            : { kind: 'none' };
      if (!filled) {
        if (q.next() >= 0.08) return { kind: 'none' };
        if (h === 'pen' || q.next() < 0.5) return { kind: 'stray' };
        return { kind: 'erasure', level: Math.min(0.12, dark * q.range(0.05, 0.25)) };
      }
      const style = q.pick(STYLES);
      if (h === 'pen' || style !== 'pen')
        return style === 'partial' && h !== 'pen' ? { kind: style, level: dark } : { kind: style };
      const v = Math.max(0.2, Math.min(0.85, dark + q.range(-0.05, 0.05)));
      return { kind: v >= 0.3 ? 'pencil' : 'light-pencil', level: v };
    },
  };
}

const templates = new Map<number, Promise<{ layout: Layout; pdf: Uint8Array }>>();
const printedCache = new Map<string, Promise<Grey>>();

function printed(which: number, pdf: Uint8Array, page: number, dpi: number): Promise<Grey> {
  const k = `${which}:${page}:${dpi}`;
  let p = printedCache.get(k);
  if (!p) {
    if (printedCache.size > 8) printedCache.clear();
    p = rasterisePdfPage(pdf, page, dpi, false).then((r) => ({ data: r.data, width: r.width, height: r.height }));
    printedCache.set(k, p);
  }
  return p;
}

async function render(job: DegradeJob): Promise<RenderedCard> {
  // The quiz (three single-sided sheets, scanned duplex: blank backs) and the duplex survey, in turn.
  const which = job.id % 2 === 0 ? 0 : 2;
  let t = templates.get(which);
  if (!t) {
    t = rec.generateTemplate(INDEPENDENT_CARDS[which]!);
    templates.set(which, t);
  }
  const { layout, pdf } = await t;
  const r = splitmix(job.seed);
  const renderDpi = Math.min(400, Math.round(job.dpi * 1.5));
  const who = hand(r);
  const digits: string[] = [];
  const composed: Grey[] = [];
  const truths: SideTruth[][] = [];
  const damage = layout.sides.map(() => drawDamage(r, job.cls, job.strength));
  for (let k = 0; k < layout.sides.length; k++) {
    const side = layout.sides[k]!;
    let svg = '';
    const truth: SideTruth[] = [];
    for (const a of side.areas) {
      const m = who.mark(r, r.next() < 0.3);
      svg += markSvg(
        {
          kind: m.kind,
          x: a.x,
          y: a.y,
          w: a.w,
          h: a.h,
          seed: Math.floor(r.next() * 2 ** 31),
          ...(m.level !== undefined ? { level: m.level } : {}),
        },
        false,
      );
      truth.push({ chapter: a.chapter, index: a.index, filled: isFilledB(m.kind), kind: m.kind });
    }
    if (side.student_cells.length > 0) {
      const positions = Math.max(...side.student_cells.map((c) => c.position));
      for (let p = 1; p <= positions; p++) {
        const v = Math.floor(r.next() * 10);
        digits.push(String(v));
        const cell = side.student_cells.find((c) => c.position === p && c.value === v)!;
        svg += markSvg(
          {
            kind: r.pick(['pen', 'pen', 'pencil'] as const),
            x: cell.x,
            y: cell.y,
            w: cell.w,
            h: cell.h,
            seed: Math.floor(r.next() * 2 ** 31),
          },
          false,
        );
      }
    }
    const base = printerDamage(await printed(which, pdf, k + 1, renderDpi), renderDpi, damage[k]!);
    const marked = await drawMarks({ ...base, channels: 1 }, svg);
    composed.push(
      spread({ data: marked.data, width: marked.width, height: marked.height }, renderDpi, damage[k]!.spreadMm),
    );
    truths.push(truth);
  }
  const sides: RenderedSide[] = [];
  for (let k = 0; k < layout.sides.length; k++) {
    const s = layout.sides[k]!,
      d = damage[k]!;
    const other = layout.duplex ? composed[s.side === 'front' ? k + 1 : k - 1]! : null;
    sides.push({
      jpeg: await scanPage(composed[k]!, renderDpi, job.dpi, d, other, Math.floor(r.next() * 2 ** 31)),
      truth: truths[k]!,
      sheet: s.sheet,
      side: s.side,
      upsideDown: d.upsideDown,
      folded: false,
    });
    if (!layout.duplex) {
      // The blank back of a single-sided sheet scanned duplex, through the same printer and scanner.
      const bd = drawDamage(r, job.cls, job.strength);
      bd.upsideDown = d.upsideDown;
      const blank = printerDamage(
        {
          data: new Uint8Array(composed[k]!.width * composed[k]!.height).fill(255),
          width: composed[k]!.width,
          height: composed[k]!.height,
        },
        renderDpi,
        { ...bd, lowInk: null },
      );
      sides.push({
        jpeg: await scanPage(blank, renderDpi, job.dpi, bd, composed[k]!, Math.floor(r.next() * 2 ** 31)),
        truth: null,
        sheet: s.sheet,
        side: 'back',
        upsideDown: d.upsideDown,
        folded: false,
      });
    }
  }
  return {
    id: job.id,
    card: which,
    studentId: digits.join(''),
    ambiguous: false,
    personalised: false,
    qrcode: layout.qrcode,
    hand: who.hand,
    sides,
  };
}

parentPort!.on('message', async (job: DegradeJob) => {
  try {
    const out = await render(job);
    parentPort!.postMessage(
      out,
      out.sides.map((s) => s.jpeg.buffer as ArrayBuffer),
    );
  } catch (e) {
    parentPort!.postMessage({ error: (e as Error).stack ?? String(e) });
  }
});
