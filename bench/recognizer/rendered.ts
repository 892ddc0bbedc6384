// What both generators hand the benchmark: scanned sides with their ground truth. Plain data,
// it crosses worker boundaries.

export type GeneratorName = 'A' | 'B';

/** clean: pen, pencil, ticks on a clean scan; mixed: every mark class and scan effect on a card; barcode: a personalised two-sheet card scanned duplex with blank backs. */
export type Scenario = 'clean' | 'mixed' | 'barcode';

export interface RenderJob {
  generator: GeneratorName;
  scenario: Scenario;
  dpi: number;
  seed: number;
  id: number;
  tuning?: boolean;
}

export interface SideTruth {
  chapter: number;
  index: number;
  filled: boolean;
  kind: string;
}

export interface RenderedSide {
  jpeg: Uint8Array;
  /** Null for a blank back (the reverse of a single-sided sheet). */
  truth: SideTruth[] | null;
  sheet: number;
  side: 'front' | 'back';
  upsideDown: boolean;
  folded: boolean;
}

export interface RenderedCard {
  id: number;
  /** Which card definition of the generator (index into its list of layouts). */
  card: number;
  studentId: string;
  /** True when the student number was marked ambiguously on purpose (bubbles). */
  ambiguous: boolean;
  /** True when the template was printed for this student (name and number on it). */
  personalised: boolean;
  qrcode: string;
  /** The student's hand (one instrument for the card, or 'mixed'), where the generator has one. */
  hand?: string;
  sides: RenderedSide[];
}
