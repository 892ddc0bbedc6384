// Print error codes: the print task's `error_code` in /api/print/info and the print callbacks
// (boxhub's own codes). 0 is success. Documented in
// docs/errors.md, "Print error codes"; a test keeps the two in step.
//
// Ranges: 40xx the file (download, checksum, document), 41xx the printer, 42xx the task's life
// (cancel, expiry, restarts), 43xx the printer's own error while printing: 4300 + the printer
// error code (printer-errors.ts), so 4305 is "out of paper" and 4304 "paper jam".
import { PRINTER_ERRORS } from './printer-errors.ts';

export interface PrintErrorEntry {
  readonly code: number;
  readonly name: string;
  readonly meaning: string;
}

const TASK_ERRORS = [
  { code: 0, name: 'none', meaning: 'Printed (or, for a task still running, no error so far)' },
  {
    code: 4001,
    name: 'download_failed',
    meaning: 'The box could not download the file (HTTP error, timeout, the URL expired and no fresh one came)',
  },
  {
    code: 4002,
    name: 'checksum_mismatch',
    meaning: 'The downloaded file does not have the MD5 or size the task names',
  },
  {
    code: 4003,
    name: 'decrypt_failed',
    meaning:
      "The encrypted file could not be decrypted on the box: its cipher does not open with the box's key for this device (another box's key, a damaged cipher), or the file fails its GCM tag (altered bytes); nothing was printed",
  },
  {
    code: 4004,
    name: 'document_invalid',
    meaning:
      'The box could not prepare the document (damaged, encrypted, over its limits, page range beyond the last page)',
  },
  { code: 4005, name: 'storage_full', meaning: 'The box has no room to store the file' },
  {
    code: 4101,
    name: 'printer_not_connected',
    meaning: "No printer answered when the task's turn came, or it went away while printing",
  },
  { code: 4102, name: 'printer_unsupported', meaning: 'The printer cannot print this document format' },
  {
    code: 4103,
    name: 'printer_rejected',
    meaning:
      'The printer refused the job before printing anything (an option or value it does not support); the message names it',
  },
  { code: 4104, name: 'printer_aborted', meaning: 'The printer aborted the job without naming a reason the box knows' },
  { code: 4201, name: 'cancelled', meaning: 'Cancelled by the application (POST /api/print/cancel)' },
  {
    code: 4202,
    name: 'cancelled_at_printer',
    meaning: 'Cancelled at the printer (its panel or another client), not through the API',
  },
  { code: 4203, name: 'expired', meaning: 'The task reached expires_at before it was printed' },
  {
    code: 4204,
    name: 'interrupted',
    meaning:
      'The box restarted after handing the job to the printer, and the printer no longer knows the job: how much printed is unknown; it is not printed again',
  },
  {
    code: 4205,
    name: 'box_error',
    meaning: 'The box failed unexpectedly while handling the task; the message says how',
  },
  {
    code: 4206,
    name: 'unbound',
    meaning:
      'The application unbound the box before the task ended: the task ended with the binding and the box was told to cancel it',
  },
] as const satisfies readonly PrintErrorEntry[];

/** Every print error code: the task codes above, then 4300 + each printer error code from 2 on. */
export const PRINT_ERRORS: readonly PrintErrorEntry[] = [
  ...TASK_ERRORS,
  ...PRINTER_ERRORS.filter((e) => e.code >= 2).map((e) => ({
    code: 4300 + e.code,
    name: `printer_${e.name}`,
    meaning: `The printer stopped the job: ${e.meaning.charAt(0).toLowerCase()}${e.meaning.slice(1)}`,
  })),
];

export type PrintErrorName = (typeof TASK_ERRORS)[number]['name'];
/** Task error codes by name (the printer's own reasons: printErrorForPrinter). */
export const PrintError = Object.fromEntries(TASK_ERRORS.map((e) => [e.name, e.code])) as {
  readonly [K in PrintErrorName]: number;
};

/** The print error code for a job the printer ended because of printer error `printerError`
 *  (printer-errors.ts); 0 or 1 (none, unreachable) have no printer reason: printer_aborted. */
export function printErrorForPrinter(printerError: number | undefined): number {
  if (printerError === undefined || printerError < 2) return PrintError.printer_aborted;
  const code = 4300 + printerError;
  return PRINT_ERRORS.some((e) => e.code === code) ? code : PrintError.printer_aborted;
}

export function printErrorName(code: number): string | undefined {
  return PRINT_ERRORS.find((e) => e.code === code)?.name;
}
