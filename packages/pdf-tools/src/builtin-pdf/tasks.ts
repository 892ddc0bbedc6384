// The built-in PDF engine's tasks (worker.ts runs them; run.ts hands them over).

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface Common {
  /** A Flate stream that inflates past this is refused before parsing (flate-guard.ts). */
  maxInflateBytes: number;
}

export type BuiltinTask =
  | (Common & { kind: 'inspect'; path: string })
  | (Common & { kind: 'build'; source: string; blank?: string; sequence: ReadonlyArray<number | 'blank'>; out: string })
  | (Common & {
      kind: 'render';
      path: string;
      dpi: number;
      firstPage?: number;
      lastPage?: number;
      /** Largest page, pixels. */
      maxPixels: number;
      /** All PNGs together, bytes. */
      maxOutputBytes: number;
      /** Writes PREFIX-N.png for page N instead of answering the bytes. */
      outPrefix?: string;
    });

/** `qpdf --json=2 --json-key=pages --json-key=encrypt --json-key=qpdf`, the parts boxhub reads. */
export interface InspectResult {
  encrypted: boolean;
  pages: Array<{ object: string }>;
  objects: Record<string, { value: Json }>;
}
