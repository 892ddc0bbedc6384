// Generator C's damage classes: what printers, ADF scanners and copiers do to a page, as the
// document-image literature describes it (docs/cards.md, section 8; the classes in the
// project's design notes, "Recognition on real scans"). Each class is drawn at two strengths,
// `light` and `heavy`; both stay readable by a person (the corner squares, the outlines and the
// marks remain plainly visible), which is where the recognizer must make no silent error.
// The feed direction is the page's long edge, top first, in the printer and in the ADF: bands
// "across the feed" are horizontal, streaks and stripes "along the feed" vertical.
import type { Rng } from './rng.ts';

export const DAMAGE_CLASSES = [
  'clean',
  'office',
  'bands-across',
  'bands-along',
  'streaks',
  'low-ink',
  'toner',
  'bleed-through',
  'ink-bleed',
  'lighting',
  'low-contrast',
  'jpeg',
  'geometry',
  'copier',
] as const;
export type DamageClass = (typeof DAMAGE_CLASSES)[number];
export type Strength = 'light' | 'heavy';

/** The class-strengths the bench draws: clean and office have one strength, a bad photocopy is heavy. */
export const CLASS_STRENGTHS: ReadonlyArray<readonly [DamageClass, Strength]> = DAMAGE_CLASSES.flatMap(
  (c): Array<readonly [DamageClass, Strength]> =>
    c === 'clean' || c === 'office'
      ? [[c, 'light']]
      : c === 'copier'
        ? [[c, 'heavy']]
        : [
            [c, 'light'],
            [c, 'heavy'],
          ],
);

export const classLabel = (c: DamageClass, s: Strength) =>
  c === 'clean' || c === 'office' || c === 'copier' ? c : `${c}:${s}`;

/**
 * A periodic band pattern. `axis` y: horizontal bands (across the feed), x: vertical ones (along
 * it). `widthMm` 0: a smooth (sinusoidal) density wave, as a worn roller's speed ripple gives;
 * otherwise a band of that width with soft 0.3 mm edges, as a dirty roller or drum gives once
 * per turn. `depth`: how much darker at the band's middle (share of the light).
 */
export interface Band {
  axis: 'x' | 'y';
  periodMm: number;
  widthMm: number;
  depth: number;
  phaseMm: number;
}

/** Profile 0..1 of a band pattern at a coordinate (mm). */
export function bandAt(b: Band, mm: number): number {
  const t = (((mm + b.phaseMm) % b.periodMm) + b.periodMm) % b.periodMm;
  if (b.widthMm === 0) return 0.5 * (1 + Math.cos((2 * Math.PI * t) / b.periodMm));
  const d = Math.abs(t - b.periodMm / 2) - b.widthMm / 2;
  return d <= -0.3 ? 1 : d >= 0 ? 0 : -d / 0.3;
}

export interface Damage {
  cls: DamageClass;
  strength: Strength;
  // The printer (page millimetres, before the student writes on the sheet).
  /** Toner fog over the whole sheet (share of the light). */
  fog: number;
  /** Bands of toner on the paper (a drum or roller), in the page's own coordinates. */
  printBands: Band[];
  /** Periodic lines where the toner ran short: printed ink there is this much lighter. */
  lowInk: { axis: 'x' | 'y'; periodMm: number; widthMm: number; fade: number; phaseMm: number } | null;
  /** Toner specks: centre (mm), radius (mm), darkness. */
  blobs: Array<{ x: number; y: number; r: number; dark: number }>;
  /** Soft grey patches of a bad copy: centre, radii (mm), darkness at the middle. */
  patches: Array<{ x: number; y: number; rx: number; ry: number; dark: number }>;
  /** Ink spreading into the paper (mm): print and pen marks grow by this much. */
  spreadMm: number;
  // The scanner (image millimetres).
  /** The other side showing through (share of its darkness). */
  bleed: number;
  angleDeg: number;
  shearDeg: number;
  scale: number;
  offsetMm: { x: number; y: number };
  upsideDown: boolean;
  /** Grey of the backing around the sheet (0..1), or null for a white lid. */
  backing: number | null;
  /** Light bands from the scanner's rollers or lamp, in the image's coordinates (multiplicative). */
  scanBands: Band[];
  /** Dust on the ADF glass: a column (mm from the left), its width in pixels and light gain (< 1 dark). */
  streaks: Array<{ xMm: number; px: number; gain: number }>;
  /** Light falling off across the page (share at the far side) and its direction. */
  gradient: { drop: number; angle: number };
  /** A cast shadow over a half-plane: its normal, offset (mm from the page centre), soft edge (mm), darkness. */
  shadow: { angle: number; offsetMm: number; edgeMm: number; dark: number } | null;
  blurMm: number;
  black: number;
  white: number;
  gamma: number;
  noise: number;
  jpeg: number;
}

function bands(r: Rng, axis: 'x' | 'y', n: number, lo: number, hi: number): Band[] {
  return Array.from({ length: n }, () => {
    const smooth = r.next() < 0.4;
    return {
      axis,
      periodMm: smooth ? r.range(6, 40) : r.range(12, 75),
      widthMm: smooth ? 0 : r.range(1, 9),
      depth: r.range(lo, hi),
      phaseMm: r.range(0, 100),
    };
  });
}

/** Splits band patterns between the printer (page coordinates) and the scanner (image coordinates). */
function splitBands(r: Rng, d: Damage, all: Band[]): void {
  for (const b of all) (r.next() < 0.5 ? d.printBands : d.scanBands).push(b);
}

function streakList(r: Rng, n: number, lo: number, hi: number, maxPx: number): Damage['streaks'] {
  return Array.from({ length: n }, () => ({
    xMm: r.range(3, 207),
    px: r.int(1, maxPx),
    gain: r.next() < 0.85 ? r.range(lo, hi) : r.range(1.05, 1.2),
  }));
}

/** One side's damage for a class at a strength. `blank`: the back of a single-sided sheet. */
export function drawDamage(r: Rng, cls: DamageClass, strength: Strength): Damage {
  const heavy = strength === 'heavy';
  const d: Damage = {
    cls,
    strength,
    fog: 0,
    printBands: [],
    lowInk: null,
    blobs: [],
    patches: [],
    spreadMm: 0,
    bleed: r.range(0.03, 0.08),
    angleDeg: r.range(-1, 1),
    shearDeg: r.range(-0.2, 0.2),
    scale: r.range(0.99, 1.01),
    offsetMm: { x: r.range(-3, 3), y: r.range(-3, 3) },
    upsideDown: r.next() < 0.5,
    backing: r.next() < 0.4 ? r.range(0.05, 0.35) : null,
    scanBands: [],
    streaks: [],
    gradient: { drop: r.range(0, 0.06), angle: r.range(0, 2 * Math.PI) },
    shadow: null,
    blurMm: r.range(0, 0.08),
    black: r.range(12, 35),
    white: r.range(235, 252),
    gamma: r.range(0.9, 1.1),
    noise: r.range(1.5, 4.5),
    jpeg: r.int(75, 95),
  };
  switch (cls) {
    case 'clean':
      break;
    case 'office':
      splitBands(r, d, bands(r, r.next() < 0.5 ? 'y' : 'x', 1, 0.02, 0.05));
      d.streaks = streakList(r, r.int(0, 2), 0.75, 0.92, 2);
      d.jpeg = r.int(60, 90);
      break;
    case 'bands-across':
      splitBands(r, d, bands(r, 'y', r.int(1, 2), heavy ? 0.08 : 0.03, heavy ? 0.2 : 0.08));
      break;
    case 'bands-along':
      splitBands(r, d, bands(r, 'x', r.int(1, 2), heavy ? 0.08 : 0.03, heavy ? 0.2 : 0.08));
      break;
    case 'streaks':
      d.streaks = heavy ? streakList(r, r.int(4, 12), 0.3, 0.7, 5) : streakList(r, r.int(1, 4), 0.6, 0.9, 3);
      break;
    case 'low-ink':
      d.lowInk = {
        axis: r.next() < 0.75 ? 'y' : 'x',
        periodMm: heavy ? r.range(4, 12) : r.range(6, 20),
        widthMm: heavy ? r.range(0.5, 2) : r.range(0.3, 1),
        fade: heavy ? r.range(0.6, 0.85) : r.range(0.3, 0.6),
        phaseMm: r.range(0, 20),
      };
      break;
    case 'toner':
      d.blobs = Array.from({ length: heavy ? r.int(80, 300) : r.int(20, 80) }, () => ({
        x: r.range(0, 210),
        y: r.range(0, 297),
        r: heavy ? r.range(0.08, 0.75) : r.range(0.08, 0.3),
        dark: r.range(0.4, 0.9),
      }));
      d.patches = Array.from({ length: heavy ? r.int(3, 8) : r.int(1, 3) }, () => ({
        x: r.range(0, 210),
        y: r.range(0, 297),
        rx: r.range(5, 30),
        ry: r.range(5, 30),
        dark: heavy ? r.range(0.1, 0.3) : r.range(0.04, 0.1),
      }));
      d.fog = heavy ? r.range(0.03, 0.12) : r.range(0, 0.04);
      break;
    case 'bleed-through':
      d.bleed = heavy ? r.range(0.22, 0.4) : r.range(0.12, 0.22);
      break;
    case 'ink-bleed':
      d.spreadMm = heavy ? r.range(0.15, 0.3) : r.range(0.08, 0.15);
      d.blurMm = r.range(0.05, 0.12);
      break;
    case 'lighting':
      d.gradient = { drop: heavy ? r.range(0.3, 0.5) : r.range(0.1, 0.3), angle: r.range(0, 2 * Math.PI) };
      if (heavy)
        d.shadow = {
          angle: r.range(0, 2 * Math.PI),
          offsetMm: r.range(40, 110),
          edgeMm: r.range(3, 25),
          dark: r.range(0.3, 0.5),
        };
      break;
    case 'low-contrast':
      d.black = heavy ? r.range(100, 140) : r.range(60, 100);
      d.white = Math.min(235, d.black + (heavy ? r.range(65, 95) : r.range(100, 140)));
      d.gamma = r.range(0.8, 1.25);
      break;
    case 'jpeg':
      d.jpeg = heavy ? r.int(30, 59) : r.int(60, 95);
      break;
    case 'geometry':
      d.angleDeg = (r.next() < 0.5 ? -1 : 1) * (heavy ? r.range(1.5, 3) : r.range(0, 1.5));
      d.shearDeg = heavy ? r.range(-1, 1) : r.range(-0.5, 0.5);
      d.scale = heavy ? r.pick([r.range(0.95, 0.98), r.range(1.02, 1.05)]) : r.range(0.98, 1.02);
      break;
    case 'copier':
      d.blobs = Array.from({ length: r.int(60, 200) }, () => ({
        x: r.range(0, 210),
        y: r.range(0, 297),
        r: r.range(0.08, 0.6),
        dark: r.range(0.4, 0.9),
      }));
      d.patches = Array.from({ length: r.int(2, 6) }, () => ({
        x: r.range(0, 210),
        y: r.range(0, 297),
        rx: r.range(8, 40),
        ry: r.range(8, 40),
        dark: r.range(0.06, 0.22),
      }));
      d.fog = r.range(0.04, 0.12);
      splitBands(r, d, bands(r, r.next() < 0.5 ? 'y' : 'x', 1, 0.03, 0.1));
      d.streaks = streakList(r, r.int(0, 3), 0.6, 0.9, 3);
      d.black = r.range(30, 70);
      d.white = r.range(215, 240);
      d.jpeg = r.int(50, 80);
      break;
  }
  return d;
}
