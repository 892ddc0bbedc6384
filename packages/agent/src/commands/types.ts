import type { Ack, Command } from '@boxhub/protocol';
import type { Buzzer } from '../host/buzzer.ts';
import type { PrinterDriver, ScannerDriver } from '../drivers/types.ts';
import type { PrintQueue } from '../jobs/print-queue.ts';
import type { ScanRunner } from '../jobs/scan-runner.ts';
import type { Updater } from '../update/updater.ts';

/** What a command handler may use. */
export interface CommandContext {
  printer: PrinterDriver;
  scanner: ScannerDriver;
  buzzer: Buzzer;
  /** Reboots the box after the ack has gone out. */
  reboot(): Promise<void>;
  /** Runs work after the ack was sent (long operations acknowledge on start). */
  later(work: () => Promise<void>): void;
  /** Agent updates (docs/updates.md). */
  updater?: Updater | undefined;
  /** The job runners: scans and prints. */
  jobs: { scans: ScanRunner; prints: PrintQueue };
}

export type AckBody = Omit<Ack, 'v' | 'id'>;
export type CommandHandler = (cmd: Command, ctx: CommandContext) => Promise<AckBody>;
