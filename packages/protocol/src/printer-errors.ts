// Printer error codes: the Device resource's `printer.error_code` (boxhub's own codes, in
// docs/errors.md, "Printer error codes"). Derived on the box from IPP printer-state and
// printer-state-reasons (RFC 8011 §5.4.11–§5.4.12, PWG 5100.9 / IANA registry for the keywords).
// Documented in docs/printers-and-scanners.md, "Printer error codes"; keep the two in step.

export interface PrinterErrorEntry {
  readonly code: number;
  readonly name: string;
  /** printer-state-reasons keywords (without -error/-warning/-report suffix) that give it. */
  readonly reasons: readonly string[];
  readonly meaning: string;
}

/** Ordered by precedence: when several reasons are present, the first entry that matches wins. */
export const PRINTER_ERRORS = [
  { code: 0, name: 'none', reasons: ['none'], meaning: 'No error: the printer is ready or printing' },
  {
    code: 1,
    name: 'unreachable',
    reasons: [],
    meaning: 'The box cannot reach the printer (no answer, connection refused, timeout)',
  },
  {
    code: 2,
    name: 'offline',
    reasons: ['offline', 'shutdown', 'timed-out', 'connecting-to-device'],
    meaning: 'The printer reports itself offline or shutting down',
  },
  {
    code: 3,
    name: 'cover_open',
    reasons: ['cover-open', 'door-open', 'interlock-open'],
    meaning: 'A cover, door or interlock is open',
  },
  { code: 4, name: 'media_jam', reasons: ['media-jam', 'input-tray-jam', 'output-tray-jam'], meaning: 'Paper jam' },
  {
    code: 5,
    name: 'media_empty',
    reasons: ['media-empty', 'media-needed', 'input-tray-missing'],
    meaning: 'Out of paper, or the tray is missing',
  },
  {
    code: 6,
    name: 'marker_supply_empty',
    reasons: ['marker-supply-empty', 'toner-empty', 'ink-empty'],
    meaning: 'Out of ink or toner',
  },
  {
    code: 7,
    name: 'marker_waste_full',
    reasons: ['marker-waste-full', 'marker-waste-almost-full'],
    meaning: 'Ink waste tank (maintenance box) full',
  },
  {
    code: 8,
    name: 'output_full',
    reasons: ['output-area-full', 'output-tray-missing'],
    meaning: 'The output tray is full or missing',
  },
  {
    code: 9,
    name: 'media_mismatch',
    reasons: ['media-size-mismatch', 'media-type-mismatch'],
    meaning: 'Loaded paper does not match what the job asks for',
  },
  {
    code: 10,
    name: 'paused',
    reasons: ['paused', 'moving-to-paused'],
    meaning: 'The printer is paused (stopped by its operator)',
  },
  {
    code: 99,
    name: 'other',
    reasons: [],
    meaning: 'Any other error reason, or printer-state stopped without a known reason',
  },
] as const satisfies readonly PrinterErrorEntry[];

export type PrinterErrorName = (typeof PRINTER_ERRORS)[number]['name'];
export const PrinterError = Object.fromEntries(PRINTER_ERRORS.map((e) => [e.name, e.code])) as {
  readonly [K in PrinterErrorName]: number;
};

/** Splits a printer-state-reasons keyword into its base and its severity suffix (RFC 8011 §5.4.12). */
export function splitReason(reason: string): { base: string; severity: 'error' | 'warning' | 'report' } {
  for (const sev of ['error', 'warning', 'report'] as const) {
    if (reason.endsWith(`-${sev}`)) return { base: reason.slice(0, -sev.length - 1), severity: sev };
  }
  // RFC 8011 §5.4.12: a reason without a suffix MUST be taken as an error.
  return { base: reason, severity: 'error' };
}

/**
 * Maps IPP printer-state / printer-state-reasons to a printer error code.
 * A reason named in PRINTER_ERRORS counts with any suffix: it names a physical condition (no
 * paper, open cover), and printers pick the suffix from their own state rather than from the
 * condition (ippeveprinter says media-empty-report while idle, -warning while printing,
 * -error when stopped); the paper is out either way. Any other reason counts only as -error
 * or unsuffixed, giving `other`; so does printer-state stopped without a reason.
 */
export function printerErrorCode(
  state: 'idle' | 'processing' | 'stopped' | undefined,
  reasons: readonly string[],
): number {
  const parts = reasons.filter((r) => r !== 'none').map(splitReason);
  for (const entry of PRINTER_ERRORS) {
    if (entry.code !== 0 && parts.some((p) => entry.reasons.some((r) => r === p.base))) return entry.code;
  }
  if (parts.some((p) => p.severity === 'error') || state === 'stopped') return PrinterError.other;
  return PrinterError.none;
}
