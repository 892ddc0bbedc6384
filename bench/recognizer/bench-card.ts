// The benchmark's card and scan scenarios. Evaluation and tuning use disjoint seed ranges:
// thresholds are tuned on TUNING_SEED_BASE pages only, figures are reported on the others.
import type { CardDefinition } from '../../packages/recognizer/src/index.ts';
import type { MarkMix } from '../../packages/recognizer/src/synthetic/filled-card.ts';
import type { ScanEffects } from '../../packages/recognizer/src/synthetic/render-scan.ts';
import { between, mulberry32, pick } from '../../packages/recognizer/src/synthetic/random.ts';

export const TUNING_SEED_BASE = 1_000_000;
export const EVALUATION_SEED_BASE = 9_000_000;

/** A dense duplex card: about 300 areas per side, so each page weighs in the accuracy. */
export const BENCH_CARD: CardDefinition = {
  id: 'bench-dense', title: 'Benchmark card', qrcode: 'https://bench.example/card/dense?v=1',
  student_number: { type: 'bubbles', digits: 8 }, duplex: true,
  chapters: [
    { areas: 60 }, { areas: 45 }, { areas: 30 }, { areas: 60 },
    { areas: 75, new_side: true }, { areas: 60 }, { areas: 45 }, { areas: 60 }, { areas: 45 },
  ],
};

export type SetName = 'clean' | 'hard';

export const MIXES: Record<SetName, MarkMix> = {
  clean: { fillRate: 0.3, filled: ['pen', 'pencil', 'tick', 'cross', 'partial'], emptyMarks: ['stray'], emptyMarkRate: 0.05, doubleDigitRate: 0, studentNumberKinds: ['pen', 'pencil'] },
  hard: { fillRate: 0.3, filled: ['pen', 'pencil', 'light-pencil', 'partial', 'tick', 'cross'], emptyMarks: ['erasure', 'stray'], emptyMarkRate: 0.2, doubleDigitRate: 0.03, studentNumberKinds: ['pen', 'pencil', 'light-pencil'] },
};

export function effectsFor(set: SetName, dpi: number, seed: number): ScanEffects {
  const r = mulberry32(seed ^ 0x5eed);
  if (set === 'clean') {
    return { dpi, rotationDeg: between(r, -0.5, 0.5), offsetMm: { x: between(r, -1, 1), y: between(r, -1, 1) }, noise: 2, jpegQuality: 85, seed };
  }
  return {
    dpi, seed,
    rotationDeg: between(r, -3, 3), upsideDown: r() < 0.5, skewDeg: between(r, -0.5, 0.5), scale: between(r, 0.98, 1.02),
    offsetMm: { x: between(r, -3, 3), y: between(r, -3, 3) }, blurMm: between(r, 0, 0.15), noise: between(r, 3, 10),
    jpegQuality: Math.round(between(r, 35, 90)), unevenLight: between(r, 0, 0.35), streaks: pick(r, [0, 0, 1, 2]),
    colour: r() < 0.3, paper: between(r, 0.9, 1),
    ...(r() < 0.08 ? { foldedCorner: pick(r, ['tl', 'tr', 'bl', 'br'] as const) } : {}),
  };
}

export function showThroughFor(set: SetName, seed: number): number {
  return set === 'clean' ? 0 : between(mulberry32(seed ^ 0x7777), 0.05, 0.18);
}
