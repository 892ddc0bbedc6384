// Normalised device state reasons: what the Device resource's `printer.state_reasons` and
// `scanner.state_reasons` say, one vocabulary whatever the device speaks (IPP
// printer-state-reasons, SANE status, eSCL scanner states). Computed by the server from what the
// box reports (BoxState), so every agent version gets them. Documented in
// docs/printers-and-scanners.md, "Normalised state reasons"; a test keeps the two in step.
import { splitReason } from './printer-errors.ts';
import type { PrinterStatus, ScannerStatus } from './box-messages.ts';

export interface StateReasonEntry {
  readonly name: string;
  readonly meaning: string;
  /** IPP printer-state-reasons base keywords (any suffix counts). */
  readonly ipp: readonly string[];
  /** SANE status names the box reports for its scanner (the last scan's end). */
  readonly sane: readonly string[];
  /** eSCL ScannerStatus `State` / `AdfState` values. */
  readonly escl: readonly string[];
}

/** In the order they are listed in the Device resource. */
export const STATE_REASONS = [
  {
    name: 'offline',
    meaning: 'The box cannot reach the device, or the device says it is offline or shutting down',
    ipp: ['offline', 'shutdown', 'timed-out', 'connecting-to-device'],
    sane: [],
    escl: [],
  },
  { name: 'paused', meaning: 'Paused by its operator', ipp: ['paused', 'moving-to-paused'], sane: [], escl: [] },
  {
    name: 'cover_open',
    meaning: 'A cover, door, hatch or interlock is open',
    ipp: ['cover-open', 'door-open', 'interlock-open'],
    sane: ['SANE_STATUS_COVER_OPEN'],
    escl: ['ScannerAdfDoorOpen', 'ScannerAdfHatchOpen'],
  },
  {
    name: 'media_jam',
    meaning: "Paper jam (a misfeed or double feed on a scanner's feeder)",
    ipp: ['media-jam', 'input-tray-jam', 'output-tray-jam'],
    sane: ['SANE_STATUS_JAMMED'],
    escl: [
      'ScannerAdfJam',
      'ScannerAdfMispick',
      'ScannerAdfMultipickDetected',
      'ScannerAdfDuplexPageTooShort',
      'ScannerAdfDuplexPageTooLong',
    ],
  },
  {
    name: 'media_empty',
    meaning: 'Out of paper, or the input tray is missing',
    ipp: ['media-empty', 'media-needed', 'input-tray-missing'],
    sane: [],
    escl: [],
  },
  { name: 'media_low', meaning: 'Paper is running low', ipp: ['media-low'], sane: [], escl: [] },
  {
    name: 'toner_empty',
    meaning: "Out of toner (a laser printer's marker supply is empty)",
    ipp: ['toner-empty'],
    sane: [],
    escl: [],
  },
  { name: 'toner_low', meaning: 'Toner is running low', ipp: ['toner-low'], sane: [], escl: [] },
  {
    name: 'ink_empty',
    meaning: "Out of ink (an inkjet printer's marker supply is empty)",
    ipp: ['ink-empty'],
    sane: [],
    escl: [],
  },
  { name: 'ink_low', meaning: 'Ink is running low', ipp: ['ink-low'], sane: [], escl: [] },
  {
    name: 'marker_supply_empty',
    meaning: 'A marker supply is empty, on a printer that does not say whether it uses ink or toner',
    ipp: ['marker-supply-empty'],
    sane: [],
    escl: [],
  },
  {
    name: 'marker_supply_low',
    meaning: 'A marker supply is low, on a printer that does not say whether it uses ink or toner',
    ipp: ['marker-supply-low'],
    sane: [],
    escl: [],
  },
  {
    name: 'marker_waste_full',
    meaning: 'The ink waste tank (maintenance box) is full or almost full',
    ipp: ['marker-waste-full', 'marker-waste-almost-full'],
    sane: [],
    escl: [],
  },
  {
    name: 'output_full',
    meaning: 'The output tray is full or missing',
    ipp: ['output-area-full', 'output-tray-missing'],
    sane: [],
    escl: [],
  },
  {
    name: 'media_mismatch',
    meaning: 'The loaded paper does not match what the job asks for',
    ipp: ['media-size-mismatch', 'media-type-mismatch'],
    sane: [],
    escl: [],
  },
  {
    name: 'busy',
    meaning: 'The scanner is in use by something else (scanner error_code 2004)',
    ipp: [],
    sane: [],
    escl: [],
  },
  {
    name: 'error',
    meaning:
      'Another error the device reports: an IPP -error (or unsuffixed) reason without a row above, printer-state stopped without one, scanner error_code 2003, or a scanner stopped without a reason',
    ipp: [],
    sane: [],
    escl: [],
  },
] as const satisfies readonly StateReasonEntry[];

/** The names, in table order (a test checks they are the table's). */
export const STATE_REASON_NAMES = [
  'offline',
  'paused',
  'cover_open',
  'media_jam',
  'media_empty',
  'media_low',
  'toner_empty',
  'toner_low',
  'ink_empty',
  'ink_low',
  'marker_supply_empty',
  'marker_supply_low',
  'marker_waste_full',
  'output_full',
  'media_mismatch',
  'busy',
  'error',
] as const satisfies readonly (typeof STATE_REASONS)[number]['name'][];
export type StateReason = (typeof STATE_REASON_NAMES)[number];

const byIpp = new Map<string, StateReason>(STATE_REASONS.flatMap((r) => r.ipp.map((k) => [k, r.name] as const)));
const byScanner = new Map<string, StateReason>(
  STATE_REASONS.flatMap((r) => [...r.sane, ...r.escl].map((k) => [k, r.name] as const)),
);
const sorted = (s: Set<StateReason>): StateReason[] =>
  [...s].sort((a, b) => STATE_REASON_NAMES.indexOf(a) - STATE_REASON_NAMES.indexOf(b));

/**
 * A printer's normalised reasons. Not connected → offline. Each IPP reason of the table counts
 * with any suffix (-error, -warning, -report: the same rule as printer.error_code). IPP's
 * generic marker-supply-low/-empty become ink_ or toner_ when the printer says which it uses
 * (`kind`). Any other reason that is an error (-error or unsuffixed, RFC 8011 §5.4.12), or
 * printer-state stopped without a reason of the table, → error.
 */
export function printerStateReasons(
  p: Pick<PrinterStatus, 'connected' | 'state' | 'state_reasons' | 'kind'>,
): StateReason[] {
  if (!p.connected) return ['offline'];
  const out = new Set<StateReason>();
  let otherError = false;
  for (const raw of p.state_reasons ?? []) {
    if (raw === 'none') continue;
    const { base, severity } = splitReason(raw);
    let r = byIpp.get(base);
    if ((r === 'marker_supply_low' || r === 'marker_supply_empty') && (p.kind === 'inkjet' || p.kind === 'laser')) {
      r = `${p.kind === 'inkjet' ? 'ink' : 'toner'}_${r === 'marker_supply_low' ? 'low' : 'empty'}`;
    }
    if (r) out.add(r);
    else if (severity === 'error') otherError = true;
  }
  if (otherError || (p.state === 'stopped' && out.size === 0)) out.add('error');
  return sorted(out);
}

/** Scanner error codes the box reports (protocol/scan-errors.ts) and the reason each means. */
const SCANNER_CODES: Record<number, StateReason> = {
  2001: 'media_jam',
  2002: 'cover_open',
  2003: 'error',
  2004: 'busy',
  2005: 'media_jam',
  2006: 'offline',
  2007: 'error',
};

/**
 * A scanner's normalised reasons. Not connected → offline. Its raw reasons (SANE status names,
 * eSCL State/AdfState values) by the table; its error_code (2001 jammed, 2002 cover open, 2003
 * error, 2004 busy, 2005 misfeed → media_jam, 2006 disconnected → offline, 2007 job lost → error); state stopped with nothing else → error. An empty feeder is no reason: it
 * is a scanner's normal idle state (`adf_loaded` says it).
 */
export function scannerStateReasons(
  s: Pick<ScannerStatus, 'connected' | 'state' | 'error_code'> & { state_reasons?: readonly string[] | undefined },
): StateReason[] {
  if (!s.connected) return ['offline'];
  const out = new Set<StateReason>();
  for (const raw of s.state_reasons ?? []) {
    const r = byScanner.get(raw);
    if (r) out.add(r);
  }
  const coded = s.error_code ? SCANNER_CODES[s.error_code] : undefined;
  if (coded) out.add(coded);
  if (s.state === 'stopped' && out.size === 0) out.add('error');
  return sorted(out);
}
