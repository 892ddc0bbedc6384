// Small driver interfaces the agent orchestrates (PAPPL-style). A driver is chosen by the
// URI scheme of its configuration (see registry.ts): sim:, ipp:/ipps:, and later escl:, sane:.
import type { PrinterCapability, PrinterStatus, PrintJobOptions, ScannerStatus } from '@boxhub/protocol';

export type MaintenanceOp = 'head_clean' | 'power_ink_flush' | 'nozzle_check';

/** Raised by a driver for an operation the device cannot do; the agent acks `not_supported`. */
export class NotSupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotSupportedError';
  }
}

// ---------------------------------------------------------------------------------------------
// Printing (docs/printing.md). The agent's print queue (jobs/print-queue.ts) downloads and
// checks the file, records durably that it hands the task to the printer, then calls print();
// after a restart it calls follow() for a task it had handed over instead of printing it again
// (at most once).

/** A document ready to print: downloaded, checksum verified, decrypted when it was encrypted. */
export interface PrintRequest {
  /** The print task uuid: the IPP job-name, so the job can be found again after a restart. */
  task: string;
  /** Path of the document on the box's disk. */
  file: string;
  format: 'pdf' | 'jpg';
  /** Options as the server resolved them (SVC constants); the driver maps them to the device. */
  options: PrintJobOptions;
}

export interface PrintProgress {
  /** Sides printed so far, when the printer reports it. */
  impressionsCompleted?: number;
}

export interface PrintOutcome {
  /** completed; canceled (by cancel, the signal); aborted (the printer gave up: jam, error, ...). */
  state: 'completed' | 'canceled' | 'aborted';
  /** The printer's final job-impressions-completed; undefined when it reports none. */
  impressionsCompleted?: number;
  /** Printer error code (protocol/printer-errors.ts) behind an aborted job, and its words. */
  printerError?: number;
  message?: string;
}

export interface PrintHooks {
  /** Aborting cancels the job on the printer; print() then resolves with state canceled. */
  signal: AbortSignal;
  /** Called once the printer has accepted the job, with a reference follow() understands
   *  (IPP: the job id). The driver waits for the returned promise before going on, so the
   *  reference is on the box's disk before anything else can happen. */
  submitted(ref: string): Promise<void>;
  progress?(p: PrintProgress): void;
  /** Called once the document is prepared, before it goes to the printer, with the pages of
   *  the file as downloaded (the queue counts `pages` from it for an encrypted file). */
  prepared?(doc: { sourcePages: number }): void;
}

/** A print the printer refused outright (bad option, unsupported format): nothing was printed. */
export class PrintRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrintRejectedError';
  }
}

export interface PrinterDriver {
  readonly uri: string;
  /** Reads the printer's current status. Never throws for an absent printer: connected=false. */
  status(signal?: AbortSignal): Promise<PrinterStatus>;
  /** The Printer capability tree (docs/api.md); null when the box cannot drive this printer (API 30302). */
  capability(signal?: AbortSignal): Promise<PrinterCapability | null>;
  /** Prints one job and resolves when it has ended. Throws PrintRejectedError when the printer
   *  refuses it before printing anything, other errors when it cannot be reached. */
  print(req: PrintRequest, hooks: PrintHooks): Promise<PrintOutcome>;
  /** Follows a job submitted before a restart to its end (`ref` from submitted()). Resolves
   *  undefined when the printer no longer knows the job. */
  follow(ref: string, hooks: Omit<PrintHooks, 'submitted'>): Promise<PrintOutcome | undefined>;
  /** Looks for a job of this task the printer holds (by job-name), for a crash between the
   *  printer accepting a job and submitted() being recorded. */
  find(task: string, signal?: AbortSignal): Promise<string | undefined>;
  /** Runs a maintenance operation; NotSupportedError when the printer cannot. */
  maintenance(op: MaintenanceOp, signal?: AbortSignal): Promise<void>;
  /** Optional push of changes (the simulator); others are polled by the agent. Returns unsubscribe. */
  watch?(listener: () => void): () => void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Scanning (docs/scanning.md). The agent's scan job (scan/) turns pages into PDF items.

export interface ScanRequest {
  duplex: boolean;
  /** dpi; one of the resolutions status() reports. */
  resolution: number;
  color: 'color' | 'grayscale';
  /** JPEG quality 1-100 the job wants: a driver whose device makes JPEG asks for it, so the
   *  page can be passed through unchanged. */
  jpegQuality: number;
  /** The scan task the pages are for (a simulated scanner's log names it). */
  task?: string;
}

/** One scanned side. Drivers deliver pages as they come, never the whole stack at once. */
export interface ScannedPage {
  /** Sheet of this scan() call, from 1; front and back of one sheet share it. */
  sheet: number;
  front: boolean;
  dpi: number;
  width: number;
  height: number;
  /** JPEG as the device made it (quality: what was asked for, when the device honours it),
   *  or uncompressed 8-bit pixels (1 channel grey, 3 channels RGB), or PNG. */
  image:
    | { format: 'jpeg'; data: Buffer; quality?: number }
    | { format: 'raw'; data: Buffer; channels: 1 | 3 }
    | { format: 'png'; data: Buffer };
}

/** Scanner faults a scan job reports as its error code (docs/errors.md, "Scan error codes"). */
export type ScanFaultKind = 'jammed' | 'misfeed' | 'cover-open' | 'io' | 'disconnected' | 'lost' | 'unavailable';
export class ScanFault extends Error {
  readonly kind: ScanFaultKind;
  constructor(kind: ScanFaultKind, message: string) {
    super(message);
    this.name = 'ScanFault';
    this.kind = kind;
  }
}

export interface ScannerDriver {
  readonly uri: string;
  status(signal?: AbortSignal): Promise<ScannerStatus>;
  /** Scans what is in the feeder, one page at a time, until it is empty. Pages delivered before
   *  a fault stand; the fault is thrown as ScanFault. Aborting the signal stops at once. */
  scan(req: ScanRequest, signal: AbortSignal): AsyncIterable<ScannedPage>;
  /** Continuous mode: resolves true once paper is in the feeder again, false after `timeoutMs`
   *  (0 = wait until the signal aborts). A driver that cannot sense paper tries a scan now and
   *  then instead and says so in its own comment. */
  waitForPaper(signal: AbortSignal, timeoutMs: number): Promise<boolean>;
  watch?(listener: () => void): () => void;
  close(): Promise<void>;
}

/** Status of a driver whose device is missing or unreachable. */
export const disconnectedPrinter: PrinterStatus = { connected: false, supported: false, error_code: 0 };
export const disconnectedScanner: ScannerStatus = { connected: false, supported: false };
