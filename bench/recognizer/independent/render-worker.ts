// Generator B: renders filled, scanned cards on a worker thread from the template PDF (poppler),
// SVG marks (librsvg) and its own scanner model (scan.ts). Evaluation only.
import { parentPort } from 'node:worker_threads';
import type { Layout } from '../../../packages/recognizer/src/index.ts';
import { loadRecognizer } from '../under-test.ts';
import type { RenderedCard, RenderedSide, RenderJob, SideTruth } from '../rendered.ts';
import { INDEPENDENT_CARDS, independentCardFor } from './cards.ts';
import { isFilledB, markSvg, type BKind } from './marks-svg.ts';
import { sfc32, type Rng } from './rng.ts';
import { drawMarks, rasterisePdfPage, scanParams, scanSide, type Raster } from './scan.ts';

const rec = await loadRecognizer();

/** Marks of students who use anything anywhere ('mixed'), by repetition. */
const FILLED: BKind[] = [
  'pen',
  'pen',
  'pen',
  'pencil',
  'pencil',
  'pencil',
  'light-pencil',
  'light-pencil',
  'faint-pencil',
  'partial',
  'small',
  'tick',
  'tick',
  'thin-tick',
  'cross',
  'thin-cross',
  'slash',
];
const EMPTY: BKind[] = ['erasure', 'erasure', 'smudge', 'stray', 'stray'];
/** Generator B's students: 30 % pen, 30 % pencil, 20 % a light hand, 20 % anything anywhere. */
type BHand = 'pen' | 'pencil' | 'light' | 'mixed';
const HANDS: ReadonlyArray<readonly [BHand, number]> = [
  ['pen', 0.3],
  ['pencil', 0.3],
  ['light', 0.2],
  ['mixed', 0.2],
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
  'pen',
  'pen',
  'pen',
  'pen',
  'partial',
  'small',
  'tick',
  'tick',
  'thin-tick',
  'cross',
  'thin-cross',
  'slash',
];

interface Marker {
  hand: BHand;
  mark(r: Rng, filled: boolean): { kind: BKind; level?: number };
}

function marker(r: Rng): Marker {
  let x = r.next(),
    hand: BHand = 'mixed';
  for (const [h, w] of HANDS) {
    if (x < w) {
      hand = h;
      break;
    }
    x -= w;
  }
  const fill = hand === 'pencil' ? r.range(0.35, 0.75) : hand === 'light' ? r.range(0.16, 0.28) : 1;
  const line = hand === 'light' ? r.range(0.45, 0.7) : Math.min(0.85, fill + 0.12);
  return {
    hand,
    mark(q, filled) {
      if (hand === 'mixed') return { kind: filled ? q.pick(FILLED) : q.next() < 0.2 ? q.pick(EMPTY) : 'none' };
      if (!filled) {
        if (q.next() >= 0.1) return { kind: 'none' };
        const v = q.next();
        if (hand === 'pen' || v < 0.4) return { kind: 'stray' };
        if (v < 0.55) return { kind: 'smudge' };
        return { kind: 'erasure', level: Math.min(0.13, fill * q.range(0.05, 0.3)) };
      }
      const style = q.pick(STYLES);
      if (hand === 'pen') return { kind: style };
      if (style === 'pen') {
        const jitter = hand === 'light' ? 0.05 : 0.07;
        const d = Math.min(hand === 'light' ? 0.3 : 0.85, Math.max(0.15, fill + q.range(-jitter, jitter)));
        return { kind: d >= 0.3 ? 'pencil' : d >= 0.2 ? 'light-pencil' : 'faint-pencil', level: d };
      }
      return { kind: style, level: style === 'partial' ? fill : line };
    },
  };
}

/** Renders at about twice the scan resolution (at most 400 dpi) and lets the scanner's optics resample. */
const renderDpiFor = (dpi: number) => Math.max(dpi, Math.min(2 * dpi, 400));

const shared = new Map<number, Promise<{ layout: Layout; pdf: Uint8Array }>>();
const rasters = new Map<string, Promise<Raster>>();

function studentNumber(r: Rng, style: number): string {
  const digits = (n: number) => Array.from({ length: n }, () => String(Math.floor(r.next() * 10))).join('');
  return style === 0
    ? digits(9)
    : style === 1
      ? `${String.fromCharCode(65 + Math.floor(r.next() * 26))}${digits(7)}`
      : `LAB-${digits(4)}-${digits(2)}`;
}

interface SideMarks {
  svg: string;
  truth: SideTruth[];
}

function markSide(
  r: Rng,
  hand: Marker,
  layout: Layout,
  k: number,
  colour: boolean,
  digitsOut: string[],
  ambiguous: { v: boolean },
): SideMarks {
  const side = layout.sides[k]!;
  let svg = '';
  const truth: SideTruth[] = [];
  for (const a of side.areas) {
    const { kind, level } = hand.mark(r, r.next() < 0.3);
    svg += markSvg(
      {
        kind,
        x: a.x,
        y: a.y,
        w: a.w,
        h: a.h,
        seed: Math.floor(r.next() * 2 ** 31),
        ...(level !== undefined ? { level } : {}),
      },
      colour,
    );
    truth.push({ chapter: a.chapter, index: a.index, filled: isFilledB(kind), kind });
  }
  if (side.student_cells.length > 0) {
    const positions = Math.max(...side.student_cells.map((c) => c.position));
    for (let p = 1; p <= positions; p++) {
      const v = Math.floor(r.next() * 10);
      digitsOut.push(String(v));
      const cell = side.student_cells.find((c) => c.position === p && c.value === v)!;
      svg += markSvg(
        {
          kind: r.pick(['pen', 'pen', 'pencil', 'light-pencil'] as const),
          x: cell.x,
          y: cell.y,
          w: cell.w,
          h: cell.h,
          seed: Math.floor(r.next() * 2 ** 31),
        },
        colour,
      );
      if (r.next() < 0.03) {
        const second = (v + 1 + Math.floor(r.next() * 9)) % 10;
        const o = side.student_cells.find((c) => c.position === p && c.value === second)!;
        svg += markSvg({ kind: 'pen', x: o.x, y: o.y, w: o.w, h: o.h, seed: Math.floor(r.next() * 2 ** 31) }, colour);
        ambiguous.v = true;
      }
    }
  }
  return { svg, truth };
}

async function printed(
  pdf: Uint8Array,
  key: string | null,
  page: number,
  dpi: number,
  colour: boolean,
): Promise<Raster> {
  if (key === null) return rasterisePdfPage(pdf, page, dpi, colour);
  const k = `${key}:${page}:${dpi}:${colour}`;
  let p = rasters.get(k);
  if (!p) {
    if (rasters.size > 12) rasters.clear();
    p = rasterisePdfPage(pdf, page, dpi, colour);
    rasters.set(k, p);
  }
  return p;
}

async function render(job: RenderJob): Promise<RenderedCard> {
  const which = independentCardFor(job.scenario, job.id);
  const def = INDEPENDENT_CARDS[which]!;
  const r = sfc32(job.seed);
  const personalised = job.scenario === 'barcode';
  let layout: Layout,
    pdf: Uint8Array,
    studentId = '';
  if (personalised) {
    studentId = studentNumber(r, Math.floor(r.next() * 3));
    ({ layout, pdf } = await rec.generateTemplate(def, {
      students: [{ student_id: studentId, name: `Pupil ${job.id + 1}` }],
    }));
  } else {
    let s = shared.get(which);
    if (!s) {
      s = rec.generateTemplate(def);
      shared.set(which, s);
    }
    ({ layout, pdf } = await s);
  }
  const renderDpi = renderDpiFor(job.dpi);
  const digits: string[] = [];
  const ambiguous = { v: false };
  const params = layout.sides.map((_, k) => scanParams(job.seed * 8 + k, job.dpi, false));
  const hand = marker(r);
  const composed: Raster[] = [];
  const truths: SideTruth[][] = [];
  for (let k = 0; k < layout.sides.length; k++) {
    const m = markSide(r, hand, layout, k, params[k]!.colour, digits, ambiguous);
    composed.push(
      await drawMarks(
        await printed(pdf, personalised ? null : String(which), k + 1, renderDpi, params[k]!.colour),
        m.svg,
      ),
    );
    truths.push(m.truth);
  }
  const sides: RenderedSide[] = [];
  for (let k = 0; k < layout.sides.length; k++) {
    const s = layout.sides[k]!,
      p = params[k]!;
    // Duplex cards show their other side through the paper.
    const other = layout.duplex ? composed[s.side === 'front' ? k + 1 : k - 1] : undefined;
    const jpeg = await scanSide(composed[k]!, renderDpi, p, other ?? null);
    sides.push({
      jpeg,
      truth: truths[k]!,
      sheet: s.sheet,
      side: s.side,
      upsideDown: p.upsideDown,
      folded: p.dogEar !== null,
    });
    if (personalised && !layout.duplex) {
      // A single-sided card scanned duplex: the blank back, on grey paper with a dark backing.
      const bp = scanParams(job.seed * 8 + k + 4, job.dpi, true);
      const blank: Raster = {
        data: new Uint8Array(composed[k]!.width * composed[k]!.height * (bp.colour ? 3 : 1)).fill(255),
        width: composed[k]!.width,
        height: composed[k]!.height,
        channels: bp.colour ? 3 : 1,
      };
      sides.push({
        jpeg: await scanSide(blank, renderDpi, bp, composed[k]!),
        truth: null,
        sheet: s.sheet,
        side: 'back',
        upsideDown: false,
        folded: false,
      });
    }
  }
  return {
    id: job.id,
    card: which,
    studentId: personalised ? studentId : digits.join(''),
    ambiguous: ambiguous.v,
    personalised,
    qrcode: layout.qrcode,
    hand: hand.hand,
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
