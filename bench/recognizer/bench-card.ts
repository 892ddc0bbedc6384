// Generator A's cards and scan scenarios (canvas drawing, packages/recognizer/src/synthetic).
// Evaluation and tuning use disjoint seed ranges: thresholds are tuned on TUNING_SEED_BASE pages
// only, figures are reported on the others. Generator B (independent/) is evaluation only.
import type { CardDefinition } from '../../packages/recognizer/src/index.ts';
import type { MarkMix } from '../../packages/recognizer/src/synthetic/filled-card.ts';
import type { MarkKind } from '../../packages/recognizer/src/synthetic/marks.ts';
import type { ScanEffects } from '../../packages/recognizer/src/synthetic/render-scan.ts';
import { between, mulberry32, pick } from '../../packages/recognizer/src/synthetic/random.ts';

export const TUNING_SEED_BASE = 1_000_000;
export const EVALUATION_SEED_BASE = 9_000_000;

/** A dense duplex card: about 300 areas per side, so each page weighs in the accuracy. */
export const BENCH_CARD: CardDefinition = {
  id: 'bench-dense',
  title: 'Benchmark card',
  qrcode: 'https://bench.example/card/dense?v=1',
  student_number: { type: 'bubbles', digits: 8 },
  duplex: true,
  chapters: [
    { areas: 60 },
    { areas: 45 },
    { areas: 30 },
    { areas: 60 },
    { areas: 75, new_side: true },
    { areas: 60 },
    { areas: 45 },
    { areas: 60 },
    { areas: 45 },
  ],
};

/**
 * A personalised barcode card on two single-sided sheets: the Code128 student number at every
 * resolution, blank backs when it is scanned duplex, and sheets of two students swapped.
 */
export const BARCODE_CARD: CardDefinition = {
  id: 'bench-barcode',
  title: 'Benchmark barcode card',
  qrcode: 'bench:barcode:2',
  student_number: { type: 'barcode' },
  chapters: [{ areas: 45 }, { areas: 90, columns: 10 }, { areas: 40, columns: 8, new_side: true }, { areas: 30 }],
};

export type SetName = 'clean' | 'hard';

/**
 * Marks of the 'mixed' hand (any kind on any area), weights by repetition. Other students keep
 * to one instrument (filled-card.ts, Hand): 35 % pen, 35 % pencil, 15 % a light hand.
 */
const HARD_FILLED: MarkKind[] = [
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
  'light-partial',
  'small',
  'light-small',
  'tick',
  'tick',
  'thin-tick',
  'cross',
  'thin-cross',
];

export const MIXES: Record<SetName, MarkMix> = {
  clean: {
    fillRate: 0.3,
    filled: ['pen', 'pencil', 'tick', 'cross', 'partial'],
    emptyMarks: ['stray'],
    emptyMarkRate: 0.05,
    doubleDigitRate: 0,
    studentNumberKinds: ['pen', 'pencil'],
  },
  hard: {
    fillRate: 0.3,
    filled: HARD_FILLED,
    emptyMarks: ['erasure', 'stray'],
    emptyMarkRate: 0.08,
    smudgeRate: 0.03,
    doubleDigitRate: 0.03,
    studentNumberKinds: ['pen', 'pencil', 'light-pencil'],
    hands: [
      ['pen', 0.35],
      ['pencil', 0.35],
      ['light', 0.15],
      ['mixed', 0.15],
    ],
  },
};

/**
 * Scan effects. Hard pages: ±3° rotation, half upside down, skew, scale, offset, blur, noise,
 * JPEG 35-90, uneven light, ADF streaks, colour, folded corners; a third on grey paper
 * (0.78-0.9) and half with the scanner's dark backing around the sheet; the scanner's tone curve
 * (black and white points, gamma) and dust on the glass.
 */
export function effectsFor(set: SetName, dpi: number, seed: number): ScanEffects {
  const r = mulberry32(seed ^ 0x5eed);
  if (set === 'clean') {
    return {
      dpi,
      rotationDeg: between(r, -0.5, 0.5),
      offsetMm: { x: between(r, -1, 1), y: between(r, -1, 1) },
      noise: 2,
      jpegQuality: 85,
      seed,
    };
  }
  const base: ScanEffects = {
    dpi,
    seed,
    rotationDeg: between(r, -3, 3),
    upsideDown: r() < 0.5,
    skewDeg: between(r, -0.5, 0.5),
    scale: between(r, 0.98, 1.02),
    offsetMm: { x: between(r, -3, 3), y: between(r, -3, 3) },
    blurMm: between(r, 0, 0.15),
    noise: between(r, 3, 10),
    jpegQuality: Math.round(between(r, 35, 90)),
    unevenLight: between(r, 0, 0.35),
    streaks: pick(r, [0, 0, 1, 2]),
    colour: r() < 0.3,
    paper: r() < 0.33 ? between(r, 0.78, 0.9) : between(r, 0.9, 1),
    tone: { black: between(r, 8, 45), white: between(r, 225, 255), gamma: between(r, 0.85, 1.15) },
    dust: Math.floor(between(r, 0, 25)),
    ...(r() < 0.08 ? { foldedCorner: pick(r, ['tl', 'tr', 'bl', 'br'] as const) } : {}),
  };
  if (r() < 0.5) Object.assign(base, darkBacking(r));
  return base;
}

function darkBacking(r: () => number): Pick<ScanEffects, 'backing' | 'scanAreaMm'> {
  return { backing: between(r, 0.06, 0.35), scanAreaMm: { w: 210 + between(r, 0, 6), h: 297 + between(r, 0, 6) } };
}

export function showThroughFor(set: SetName, seed: number): number {
  return set === 'clean' ? 0 : between(mulberry32(seed ^ 0x7777), 0.04, 0.12);
}

/** The back of a single-sided sheet scanned duplex: grey paper, dark backing, show-through. */
export function blankBackEffects(dpi: number, seed: number): ScanEffects {
  const r = mulberry32(seed ^ 0xb1a4);
  return {
    dpi,
    seed,
    rotationDeg: between(r, -3, 3),
    offsetMm: { x: between(r, -3, 3), y: between(r, -3, 3) },
    noise: between(r, 3, 10),
    jpegQuality: Math.round(between(r, 35, 90)),
    unevenLight: between(r, 0, 0.3),
    streaks: pick(r, [0, 1, 2]),
    paper: between(r, 0.75, 0.92),
    ...darkBacking(r),
  };
}

/** A student number as schools print them: 8 digits, `S-2024-0931` or `STU-2024-000931`. */
export function studentIdFor(seed: number): string {
  const r = mulberry32(seed ^ 0x51d);
  const digits = (n: number) => Array.from({ length: n }, () => String(Math.floor(r() * 10))).join('');
  const style = Math.floor(r() * 3);
  if (style === 0) return digits(8);
  if (style === 1) return `S-${2020 + Math.floor(r() * 6)}-${digits(4)}`;
  return `STU-${2020 + Math.floor(r() * 6)}-${digits(6)}`;
}
