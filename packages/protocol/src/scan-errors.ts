// Scan error codes: scan info `error_code` and the scan.finish callback (boxhub's own codes, in
// docs/errors.md, "Scan error codes"). 20xx come from the scanner (the same numbers the box
// reports as scanner.error_code), 21xx from moving the data, 22xx from the task's life.
// Documented in docs/errors.md, "Scan error codes"; a test keeps the two in step.

export interface ScanErrorEntry {
  readonly code: number;
  readonly name: string;
  readonly meaning: string;
}

export const SCAN_ERRORS = [
  {
    code: 0,
    name: 'none',
    meaning:
      'The scan ended normally: the feeder ran empty (after the continuous wait, in continuous mode), or it was stopped with the box answering',
  },
  { code: 2001, name: 'jammed', meaning: 'Paper jam in the feeder; pages scanned before it are kept' },
  { code: 2002, name: 'cover_open', meaning: 'A cover or the feeder door is open' },
  { code: 2003, name: 'scanner_error', meaning: 'The scanner failed mid-scan (I/O error, disconnected)' },
  {
    code: 2004,
    name: 'scanner_unavailable',
    meaning: 'The scanner could not start scanning (not connected, busy, or it refused the settings)',
  },
  {
    code: 2005,
    name: 'misfeed',
    meaning:
      'The feeder failed to pick a sheet or took several at once (eSCL ScannerAdfMispick, ScannerAdfMultipickDetected); pages scanned before it are kept',
  },
  {
    code: 2006,
    name: 'scanner_disconnected',
    meaning:
      'The scanner went away mid-scan (cable pulled, switched off, network lost); pages scanned before it are kept',
  },
  {
    code: 2007,
    name: 'job_lost',
    meaning:
      'The scanner dropped the scan job before the feeder was empty (it timed the job out, or it was cancelled at the scanner); pages scanned before it are kept',
  },
  {
    code: 2101,
    name: 'upload_failed',
    meaning:
      'The box could not store an item: the server refused the upload (too large, or its checksum did not match what the box sent)',
  },
  {
    code: 2102,
    name: 'direct_transfer_failed',
    meaning:
      'The direct-transfer address refused a batch (any answer but 2xx, 408, 429 and 5xx, redirects included) or kept failing it for 10 minutes of retries (docs/direct-transfer.md)',
  },
  {
    code: 2103,
    name: 'encrypt_failed',
    meaning:
      "The box could not encrypt an item to the task's public key (docs/encryption.md); nothing unencrypted was uploaded",
  },
  {
    code: 2201,
    name: 'stopped_unreachable',
    meaning: 'Stopped while the box was offline or did not answer the stop: the task was ended on the server alone',
  },
  {
    code: 2202,
    name: 'box_lost',
    meaning: 'The box restarted and no longer knew the task (its disk was reset, or the task never reached it)',
  },
  { code: 2203, name: 'not_acknowledged', meaning: 'The box did not acknowledge the task in time when it was created' },
  { code: 2204, name: 'expired', meaning: 'The task reached expires_at while still scanning' },
  { code: 2205, name: 'interrupted', meaning: 'The box restarted mid-scan; items completed before are kept' },
  {
    code: 2206,
    name: 'unbound',
    meaning:
      'The application unbound the box while the task was active: the task ended with the binding (items completed before are kept) and the box was told to stop',
  },
] as const satisfies readonly ScanErrorEntry[];

export type ScanErrorName = (typeof SCAN_ERRORS)[number]['name'];
export const ScanError = Object.fromEntries(SCAN_ERRORS.map((e) => [e.name, e.code])) as {
  readonly [K in ScanErrorName]: number;
};
