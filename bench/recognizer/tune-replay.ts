// Tuning aid: replays the decision (mark-classifier.ts, the QR code behind taken out as
// show-through.ts does it, and the student's second look, student-pool.ts) on pages dumped by
// tune-dump.ts (generator A's TUNING seeds only; a card at one resolution is one student),
// without rendering again, and prints areas right / uncertain / wrong per resolution.
//   npx tsx bench/recognizer/tune-replay.ts DUMP.jsonl [DUMP.jsonl ...] [--list]
// --list prints every area not read right. Knobs for trying a rule's margin:
//   PERTURB=f,d   the light the QR code behind takes times f, and the areas over it d darker;
//   V=i           look for the gap between residue and faint fills among the areas over the
//                 QR code too; V=j  judge those areas by that gap (their side's and the student's);
//   V=o           leave the QR code behind in (the recognizer before the sixth round).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { BENCH_CARD } from './bench-card.ts';
import { planTemplate, poolStudent, type PageReading } from '../../packages/recognizer/src/index.ts';
import { densePrintBehind } from '../../packages/recognizer/src/page-recognizer.ts';
import {
  classifyAreas,
  fillsOf,
  splitGreys,
  splitOf,
  THRESHOLDS,
  uniformMarks,
} from '../../packages/recognizer/src/mark-classifier.ts';
import { evidence, type MarkEvidence } from '../../packages/recognizer/src/mark-evidence.ts';
import { encodeQr } from '../../packages/recognizer/src/codes.ts';
import { patternBehind, qrBehind, withoutShowThrough } from '../../packages/recognizer/src/show-through.ts';
import { sideEvidence } from '../../packages/recognizer/src/student-pool.ts';
import type { AreaSample } from '../../packages/recognizer/src/area-sampler.ts';
import type { PageLevels } from '../../packages/recognizer/src/page-levels.ts';

interface DumpArea extends MarkEvidence {
  state: string;
  kind: string;
  filled: boolean;
  x: number;
  y: number;
  ch: number;
  behind?: boolean;
  paperClear?: number;
  grid?: Array<number | null>;
  inner?: number[];
  cols?: number;
  rows?: number;
  step?: number;
  paper?: number;
  range?: number;
}
interface DumpPage {
  unreadable?: boolean;
  dpi: number;
  card: number;
  sheet: number;
  side: 'front' | 'back';
  hand: string;
  levels: PageLevels;
  areas: DumpArea[];
  showThrough?: { strength: number; blur: number; taken: number } | null;
}

const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const list = process.argv.includes('--list');
const V = process.env.V ?? '';
const [perturbF, perturbD] = (process.env.PERTURB ?? '1,0').split(',').map(Number) as [number, number];
const { layout } = await planTemplate(BENCH_CARD);
const qrMatrix = await encodeQr(layout.qrcode);
const flags = (withQr: boolean) =>
  new Map(
    layout.sides.map((s) => {
      const f = densePrintBehind(layout, s, withQr);
      return [`${s.sheet}${s.side}`, s.areas.map((a) => f(a))];
    }),
  );
const behindOf = flags(true),
  behindOtherOf = flags(false);

type Ok = Extract<PageReading, { status: 'ok' }>;
const students = new Map<string, Array<{ page: DumpPage; reading: Ok; ev: MarkEvidence[] }>>();
let unreadable = 0,
  differing = 0,
  corrected = 0,
  backs = 0;
for (const f of files) {
  for await (const line of createInterface({ input: createReadStream(f) })) {
    const p = JSON.parse(line) as DumpPage;
    if (p.unreadable) {
      unreadable++;
      continue;
    }
    const sideKey = `${p.sheet}${p.side}`;
    const lside = layout.sides.find((x) => x.sheet === p.sheet && x.side === p.side)!;
    const lv = p.levels;
    let ev: MarkEvidence[] = p.areas;
    let behind = behindOf.get(sideKey)!;
    const cleared = p.areas.map((d) => !V.includes('o') && !!p.showThrough && d.paperClear !== undefined);
    const q = qrBehind(layout, lside, qrMatrix);
    if (q) backs++;
    const rawOf = (d: DumpArea): AreaSample => {
      const grid = Float32Array.from(d.grid!, (v) => (v === null ? NaN : v)),
        inner = Uint8Array.from(d.inner!);
      let n = 0,
        sum = 0;
      for (let k = 0; k < grid.length; k++)
        if (inner[k] && !Number.isNaN(grid[k])) {
          n++;
          sum += grid[k]!;
        }
      return {
        grid,
        inner,
        cols: d.cols!,
        rows: d.rows!,
        step: d.step!,
        mean: n > 0 ? sum / n : 0,
        sd: 0,
        outline: 0,
        paper: d.paper!,
        range: d.range!,
      };
    };
    // V=o on a dump whose areas over the code were corrected: their evidence again from the raw samples.
    if (V.includes('o'))
      ev = p.areas.map((d) => (d.paperClear !== undefined ? evidence(rawOf(d), lv, THRESHOLDS.filledStroke) : d));
    if (q && p.showThrough && cleared.some((c) => c)) {
      // The QR code behind taken out as the recognizer took it out (its measured strength, blur
      // and cleared paper, from the dump), from the raw samples.
      corrected++;
      const st = p.showThrough;
      ev = p.areas.map((d, i) => {
        if (!cleared[i]) return d;
        const raw = rawOf(d);
        const t = patternBehind(q, raw, lside.areas[i]!.x, lside.areas[i]!.y, st.blur);
        return evidence(
          withoutShowThrough(raw, t, st.taken * perturbF, d.paperClear! + perturbD * d.range!),
          lv,
          THRESHOLDS.filledStroke,
        );
      });
      behind = behind.map((b, i) => (cleared[i] ? behindOtherOf.get(sideKey)![i]! : b));
    }
    const marks = uniformMarks(ev),
      fills = fillsOf(marks);
    // The gap between residue and faint fills is looked for among the areas measured in the clear.
    const greys = splitGreys(V.includes('i') ? ev : ev.filter((_, i) => !cleared[i]));
    const split = fills.hand === 'mixed' ? splitOf(greys) : null;
    const decided = classifyAreas(ev, lv, fills, split, behind, V.includes('j') ? undefined : cleared);
    const areas = ev.map((_, i) => ({ chapter: p.areas[i]!.ch, index: i, ...decided[i]! }));
    // The dump's own reading (of the recognizer that dumped it), side by side: they differ only where the decision changed since.
    areas.forEach((a, i) => {
      if (a.state !== p.areas[i]!.state) differing++;
    });
    const reading: Ok = {
      status: 'ok',
      layout_id: layout.layout_id,
      sheet: p.sheet,
      side: p.side,
      upside_down: false,
      areas,
      ms: 0,
      evidence: sideEvidence(
        marks,
        greys,
        fills,
        lv,
        areas.map((a) => a.state),
        ev,
        behind,
        V.includes('j') ? undefined : cleared,
      ),
    };
    const key = `${p.dpi}/${p.card}`;
    if (!students.has(key)) students.set(key, []);
    students.get(key)!.push({ page: p, reading, ev });
  }
}
const tally = new Map<number, { n: number; right: number; uncertain: number; wrong: number; pages: number }>();
for (const [key, sides] of students) {
  const pooled = poolStudent(sides.map((s) => s.reading)) as Ok[];
  sides.forEach(({ page, ev }, k) => {
    const t = tally.get(page.dpi) ?? { n: 0, right: 0, uncertain: 0, wrong: 0, pages: 0 };
    tally.set(page.dpi, t);
    t.pages++;
    pooled[k]!.areas.forEach((a, i) => {
      const d = { ...page.areas[i]!, ...ev[i]! };
      t.n++;
      const right = a.state === (d.filled ? 'filled' : 'empty');
      if (right) t.right++;
      else if (a.state === 'uncertain') t.uncertain++;
      else t.wrong++;
      if (list && !right)
        console.log(
          `${a.state === 'uncertain' ? 'U' : 'WRONG'} ${key} ${page.sheet}${page.side} #${i}${behindOf.get(`${page.sheet}${page.side}`)![i] ? 'b' : ''} ${page.hand} ${d.kind} solid=${d.solid.toFixed(3)} peak=${d.peak.toFixed(3)} stroke=${d.stroke.toFixed(2)} blob=${d.blob.toFixed(2)}@${d.blobContrast.toFixed(3)}`,
        );
    });
  });
}
let hi = { n: 0, right: 0, uncertain: 0, wrong: 0 };
for (const [dpi, t] of [...tally.entries()].sort((a, b) => a[0] - b[0])) {
  console.log(
    `${dpi} dpi: ${t.pages} pages, ${t.n} areas, right ${((100 * t.right) / t.n).toFixed(3)} %, uncertain ${t.uncertain}, wrong ${t.wrong}`,
  );
  if (dpi >= 150 && dpi <= 300)
    hi = { n: hi.n + t.n, right: hi.right + t.right, uncertain: hi.uncertain + t.uncertain, wrong: hi.wrong + t.wrong };
}
console.log(`QR code behind taken out on ${corrected} of ${backs} pages with one behind them`);
console.log(
  `per side, before the student's second look: ${differing} areas read otherwise than the dumping recognizer read them`,
);
console.log(
  `150-300 dpi: ${hi.n} areas, right ${((100 * hi.right) / hi.n).toFixed(3)} %, uncertain ${hi.uncertain}, wrong ${hi.wrong}${unreadable ? `; ${unreadable} unreadable pages` : ''}`,
);
