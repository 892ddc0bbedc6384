// Filled, empty or uncertain. Two kinds of evidence: how dark the area is on average (pen and
// pencil fills) and how much of it is covered by real strokes (ticks, crosses); a smooth grey
// erasure smudge has neither. Between "clearly empty" and "clearly filled" nothing is guessed.
import type { AreaFeatures } from './area-sampler.ts';

export type AreaState = 'filled' | 'empty' | 'uncertain';

export const THRESHOLDS = {
  filledMean: 0.3,
  filledInk: 0.12,
  emptyMean: 0.16,
  emptyInk: 0.04,
} as const;

/**
 * The page's empty-area level: printing and scanning leave every area slightly grey, and
 * that offset is the same across a page. Most areas of a page are empty; the cap keeps a
 * page full of marks from raising its own reference.
 */
export function pageBaseline(features: readonly AreaFeatures[]): number {
  if (features.length === 0) return 0;
  const means = features.map((f) => f.mean).sort((a, b) => a - b);
  return Math.min(means[Math.floor(means.length * 0.2)]!, 0.08);
}

export function classify(f: AreaFeatures, baseline: number): { state: AreaState; score: number } {
  const solid = f.mean - baseline;
  // One number for reports: how far along from "clearly empty" (0) to "clearly filled" (1).
  const score = Math.max(
    Math.min(1, Math.max(0, (solid - THRESHOLDS.emptyMean) / (THRESHOLDS.filledMean - THRESHOLDS.emptyMean))),
    Math.min(1, Math.max(0, (f.ink - THRESHOLDS.emptyInk) / (THRESHOLDS.filledInk - THRESHOLDS.emptyInk))),
  );
  if (solid >= THRESHOLDS.filledMean || f.ink >= THRESHOLDS.filledInk) return { state: 'filled', score: 1 };
  if (solid < THRESHOLDS.emptyMean && f.ink < THRESHOLDS.emptyInk) return { state: 'empty', score: 0 };
  return { state: 'uncertain', score: Math.round(score * 100) / 100 };
}
