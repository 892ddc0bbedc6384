// Faults the simulated devices can be switched into. A printer fault is an IPP
// printer-state-reason, so the simulator reports the same error_code a real printer in that
// state would (protocol/printer-errors.ts, docs/errors.md "Printer error codes").
import { printerErrorCode } from '@boxhub/protocol/printer-errors.ts';

export const simPrinterFaults = ['media-empty', 'media-jam', 'cover-open', 'marker-supply-empty', 'offline'] as const;
export type SimPrinterFault = (typeof simPrinterFaults)[number];

export function printerErrorFor(f: SimPrinterFault): number {
  return printerErrorCode('stopped', [`${f}-error`]);
}

export const simScannerFaults = ['jammed', 'cover-open', 'no-docs'] as const;
export type SimScannerFault = (typeof simScannerFaults)[number];
