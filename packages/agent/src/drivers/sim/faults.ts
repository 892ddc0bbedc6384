// Faults the simulated devices can be switched into. A printer fault is an IPP
// printer-state-reason, so the simulator reports the same error_code a real printer in that
// state would (protocol/printer-errors.ts, docs/errors.md "Printer error codes").
import { printerErrorCode } from '@boxhub/protocol/printer-errors.ts';

export const simPrinterFaults = ['media-empty', 'media-jam', 'cover-open', 'marker-supply-empty', 'offline'] as const;
export type SimPrinterFault = (typeof simPrinterFaults)[number];

export function printerErrorFor(f: SimPrinterFault): number {
  return printerErrorCode('stopped', [`${f}-error`]);
}

/** Scanner faults the simulator can be switched into; an empty feeder is no fault but the
 *  absence of paper (`adf_loaded: false`). */
export const simScannerFaults = ['jammed', 'cover-open'] as const;
export type SimScannerFault = (typeof simScannerFaults)[number];

export const isSimPrinterFault = (v: string): v is SimPrinterFault => simPrinterFaults.some((f) => f === v);
export const isSimScannerFault = (v: string): v is SimScannerFault => simScannerFaults.some((f) => f === v);

/** The scanner status error_code of a fault, as the box reports it in its state
 *  (ScannerStatus.error_code, internal to the box protocol: the API's scanner object has none). */
export const SCANNER_STATUS_ERRORS: Readonly<Record<SimScannerFault, number>> = Object.freeze({
  jammed: 2001,
  'cover-open': 2002,
});
