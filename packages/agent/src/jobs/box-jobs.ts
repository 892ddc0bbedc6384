// The box's jobs (docs/box-protocol.md, "Jobs"): the scan runner and the print queue side by
// side, each taking its own job commands (commands/, one file per command). What is common is
// here: a job stays in the journal from the moment it is accepted until the server has
// acknowledged its last event, then its files go; after a restart both resume what the journal
// holds. One scan at a time (the scanner is one device); print tasks queue per printer.
import { join } from 'node:path';
import type { BoxJobState } from '@boxhub/protocol';
import type { E2eKeyPair } from '@boxhub/protocol/e2e.ts';
import type { PrinterDriver, ScannerDriver } from '../drivers/types.ts';
import { PrintQueue } from './print-queue.ts';
import type { BoxRequests } from '../link/requests.ts';
import type { Journal } from '../store/journal.ts';
import type { Outbox } from '../store/outbox.ts';
import type { ScanJobDeps } from './scan-job.ts';
import { ScanRunner } from './scan-runner.ts';
import { messageOf } from '@boxhub/protocol/caught.ts';

export interface BoxJobsDeps {
  boot: string;
  stateDir: string;
  journal: Journal;
  outbox: Outbox;
  requests: BoxRequests;
  scanner: ScannerDriver;
  printer: PrinterDriver;
  now?: () => number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  /** Called whenever the set of jobs or their states change (the box reports its state). */
  changed: () => void;
  uploadBackoff?: { baseMs: number; maxMs: number };
  /** Scan item caps (scan/item-rule.ts ITEM_LIMITS by default; tests make items small). */
  itemLimits?: ScanJobDeps['itemLimits'];
  /** The box's uuid and User-Agent (direct transfer). */
  boxUuid: string;
  userAgent: string;
  /** Direct transfer's retry policy and extra trusted CAs (tests). */
  direct?: ScanJobDeps['direct'];
  /** This box's uuid: the `info` of print files encrypted to it (docs/encryption.md). */
  deviceUuid?: string;
  /** The box's key pair for encrypted print files. */
  boxKey?: () => E2eKeyPair | undefined;
}

export class BoxJobs {
  private readonly d: BoxJobsDeps & { now: () => number };
  /** Clean-ups after acknowledgements under way (close() waits for them). */
  private readonly cleanups = new Set<Promise<void>>();
  readonly scans: ScanRunner;
  readonly prints: PrintQueue;

  constructor(d: BoxJobsDeps) {
    this.d = { now: Date.now, ...d };
    this.scans = new ScanRunner({
      boot: d.boot,
      scanner: d.scanner,
      journal: d.journal,
      outbox: d.outbox,
      requests: d.requests,
      dir: join(d.stateDir, 'scans'),
      now: this.d.now,
      log: d.log,
      changed: d.changed,
      ended: (task) => this.maybeDone(task),
      ...(d.uploadBackoff ? { backoff: d.uploadBackoff } : {}),
      ...(d.itemLimits ? { itemLimits: d.itemLimits } : {}),
      boxUuid: d.boxUuid,
      userAgent: d.userAgent,
      ...(d.direct ? { direct: d.direct } : {}),
    });
    this.prints = new PrintQueue({
      printer: d.printer,
      journal: d.journal,
      outbox: d.outbox,
      requests: d.requests,
      dir: join(d.stateDir, 'prints'),
      boot: d.boot,
      now: this.d.now,
      log: d.log,
      changed: d.changed,
      ended: (task) => this.maybeDone(task),
      ...(d.uploadBackoff ? { backoff: d.uploadBackoff } : {}),
      ...(d.deviceUuid ? { deviceUuid: d.deviceUuid } : {}),
      ...(d.boxKey ? { boxKey: d.boxKey } : {}),
    });
    d.outbox.onAcked((ids) => {
      const cleanup = this.onAcked(ids)
        .catch((e: unknown) => d.log('acknowledged events not cleaned up', { error: messageOf(e) }))
        .finally(() => this.cleanups.delete(cleanup));
      this.cleanups.add(cleanup);
    });
  }

  /** Resumes every job the journal holds (after a restart). */
  async resume(): Promise<void> {
    this.scans.resume();
    // A job whose last event was acknowledged just before the restart is done already.
    for (const e of this.d.journal.all()) await this.maybeDone(e.task);
    this.prints.start();
  }

  states(): BoxJobState[] {
    return this.d.journal.states();
  }

  private async onAcked(ids: string[]): Promise<void> {
    await this.scans.acked(new Set(ids));
    for (const e of this.d.journal.all()) await this.maybeDone(e.task);
  }

  /** A job that has ended and whose every event the server has: gone from the box. */
  private async maybeDone(task: string): Promise<void> {
    const e = this.d.journal.get(task);
    if (e?.state !== 'ending' || this.d.outbox.pendingFor(task) > 0) return;
    await this.scans.forget(task);
    await this.d.journal.remove(task);
    await this.d.outbox.forget(task);
    this.d.changed();
  }

  /** Stops every job (the agent is stopping); the journal keeps them for the next start. */
  async close(): Promise<void> {
    await this.scans.halt();
    await this.prints.stop();
    // A stopped agent touches its disk no more (the files may go next, as in a test's teardown).
    await Promise.all([...this.cleanups, this.scans.settled()]);
  }
}
