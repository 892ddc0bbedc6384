// What a page says about itself, from all its areas (most of them empty): where "empty" is on
// this scan, how noisy it is, and how dark a thin printed line comes out. Every decision is
// taken against these, never against one global threshold (docs/cards.md, "How recognition works").
import type { AreaSample } from './area-sampler.ts';

/** What a page says about its own levels, from all its areas (most of them empty). */
export interface PageLevels {
  /** Mean darkness of an empty area on this page (print, paper grain, scanner offset). */
  baseline: number;
  /** Standard deviation of single samples inside empty areas (scanner noise, JPEG). */
  noise: number;
  /** Spread of empty areas' means around the baseline. */
  spread: number;
  /** Darkness of the printed 0.3 mm outlines as scanned: what a thin stroke can look like. */
  line: number;
  /** Scan resolution, pixels per millimetre. */
  pxmm: number;
  /**
   * Grey levels from the paper to the print (page-quality.ts, `contrast`), where the page's
   * condition was measured: a faint fill measures lighter on a page of low contrast
   * (mark-classifier.ts, `lowContrast`).
   */
  contrast?: number;
}

/** The q-quantile of sorted values (nearest rank below). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * (sorted.length - 1))))]!;
}

export function pageLevels(samples: readonly AreaSample[], pxmm: number): PageLevels {
  if (samples.length === 0) return { baseline: 0, noise: 0.03, spread: 0.01, line: 0.6, pxmm };
  const means = samples.map((s) => s.mean).sort((a, b) => a - b);
  // Most areas are empty; the lower part of the distribution is theirs even on a busy page.
  const baseline = quantile(means, 0.25);
  const low = samples.filter((s) => s.mean <= quantile(means, 0.4));
  const sds = low.map((s) => s.sd).sort((a, b) => a - b);
  const noise = Math.max(0.008, quantile(sds, 0.5));
  const spread = Math.max(0.004, (quantile(means, 0.4) - quantile(means, 0.05)) / 1.9);
  const lines = samples.map((s) => s.outline).sort((a, b) => a - b);
  const line = Math.max(0.15, quantile(lines, 0.4));
  return { baseline, noise, spread, line, pxmm };
}
