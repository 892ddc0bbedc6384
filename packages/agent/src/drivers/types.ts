// Small driver interfaces the agent orchestrates (PAPPL-style). A driver is chosen by the
// URI scheme of its configuration (see registry.ts): sim:, ipp:/ipps:, and later escl:, sane:.
import type { PrinterStatus, ScannerStatus } from '@boxhub/protocol';

export type MaintenanceOp = 'head_clean' | 'power_ink_flush' | 'nozzle_check';

/** Raised by a driver for an operation the device cannot do; the agent acks `not_supported`. */
export class NotSupportedError extends Error {
  constructor(message: string) { super(message); this.name = 'NotSupportedError'; }
}

export interface PrinterDriver {
  readonly uri: string;
  /** Reads the printer's current status. Never throws for an absent printer: connected=false. */
  status(signal?: AbortSignal): Promise<PrinterStatus>;
  /** Runs a maintenance operation; NotSupportedError when the printer cannot. */
  maintenance(op: MaintenanceOp, signal?: AbortSignal): Promise<void>;
  /** Optional push of changes (the simulator); others are polled by the agent. Returns unsubscribe. */
  watch?(listener: () => void): () => void;
  close(): Promise<void>;
}

export interface ScannerDriver {
  readonly uri: string;
  status(signal?: AbortSignal): Promise<ScannerStatus>;
  watch?(listener: () => void): () => void;
  close(): Promise<void>;
}

/** Status of a driver whose device is missing or unreachable. */
export const disconnectedPrinter: PrinterStatus = { connected: false, supported: false, error_code: 0 };
export const disconnectedScanner: ScannerStatus = { connected: false, supported: false };
