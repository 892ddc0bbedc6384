// The box's job runner (docs/box-protocol.md, "Jobs"): takes job commands, keeps each job in
// the journal from the moment it is accepted until the server has acknowledged its last event,
// runs it with a cancel signal, and after a restart resumes what the journal holds. One scan at
// a time (the scanner is one device); print tasks queue per printer (print/).
import { join } from 'node:path';
import {
  parseJson, ScanStartParams, ScanStopParams, type BoxJobState, type Command,
} from '@boxhub/protocol';
import type { E2eKeyPair } from '@boxhub/protocol/e2e.ts';
import type { PrinterDriver, ScannerDriver } from '../drivers/types.ts';
import type { JobAck } from './job-ack.ts';
import { PrintQueue } from './print-queue.ts';
import type { BoxRequests } from '../link/requests.ts';
import type { Journal, JournalEntry } from '../store/journal.ts';
import type { Outbox } from '../store/outbox.ts';
import { ScanJob, type ScanJobData, type ScanJobDeps } from './scan-job.ts';

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
  private readonly scans = new Map<string, ScanJob>();
  /** Clean-ups of finished scans under way (close() waits for them). */
  private readonly cleanups = new Set<Promise<void>>();
  readonly prints: PrintQueue;

  constructor(d: BoxJobsDeps) {
    this.d = { now: Date.now, ...d };
    this.prints = new PrintQueue({
      printer: d.printer, journal: d.journal, outbox: d.outbox, requests: d.requests, dir: join(d.stateDir, 'prints'),
      boot: d.boot, now: this.d.now, log: d.log, changed: d.changed, ended: (task) => this.maybeDone(task),
      ...(d.uploadBackoff ? { backoff: d.uploadBackoff } : {}),
      ...(d.deviceUuid ? { deviceUuid: d.deviceUuid } : {}), ...(d.boxKey ? { boxKey: d.boxKey } : {}),
    });
    d.outbox.onAcked((ids) => {
      const cleanup = this.onAcked(ids).catch((e: unknown) => d.log('acknowledged events not cleaned up', { error: (e as Error).message }))
        .finally(() => this.cleanups.delete(cleanup));
      this.cleanups.add(cleanup);
    });
  }

  /** Resumes every job the journal holds (after a restart). */
  async resume(): Promise<void> {
    for (const e of this.d.journal.all()) {
      if (e.kind === 'scan') this.startScan(e as JournalEntry<ScanJobData>, true);
    }
    // A job whose last event was acknowledged just before the restart is done already.
    for (const e of this.d.journal.all()) await this.maybeDone(e.task);
    this.prints.start();
  }

  states(): BoxJobState[] { return this.d.journal.states(); }

  /** Job commands; undefined for a command this runner does not handle. */
  async command(cmd: Command): Promise<JobAck | undefined> {
    switch (cmd.type) {
      case 'scan.start': return this.scanStart(cmd);
      case 'scan.stop': return this.scanStop(cmd);
      case 'print.start': return this.prints.take(cmd.params);
      case 'print.cancel': return this.prints.cancel(cmd.params);
      default: return undefined;
    }
  }

  private async scanStart(cmd: Command): Promise<JobAck> {
    const p = parseJson(ScanStartParams, JSON.stringify(cmd.params));
    if (!p.ok) return { ok: false, reason: 'invalid', message: `scan.start params ${p.error}` };
    const { task } = p.value;
    // A repeat of a task already taken (a lost ack, a resent command): taken, once.
    if (this.d.journal.get(task)) return { ok: true, data: { boot: this.d.boot } };
    // A scan that was just stopped is still letting go of the scanner: wait for it (briefly).
    for (const j of this.scans.values()) if (j.stopping) await settles(j.done, 5000);
    const running = [...this.scans.values()].find((j) => this.d.journal.get(j.task)?.state === 'running');
    if (running) return { ok: false, reason: 'busy', message: `the scanner is busy with scan ${running.task}` };
    const status = await this.d.scanner.status().catch(() => undefined);
    if (!status?.connected) return { ok: false, reason: 'failed', message: 'the scanner is not connected' };
    const entry: JournalEntry<ScanJobData> = {
      task, kind: 'scan', state: 'running', boot: this.d.boot, acceptedAt: this.d.now(),
      data: { params: p.value, items: [], sheets: 0 },
    };
    // In the journal before the ack: a task the box said it took survives a power cut.
    await this.d.journal.put(entry);
    this.startScan(entry, false);
    this.d.changed();
    return { ok: true, data: { boot: this.d.boot } };
  }

  private async scanStop(cmd: Command): Promise<JobAck> {
    const p = parseJson(ScanStopParams, JSON.stringify(cmd.params));
    if (!p.ok) return { ok: false, reason: 'invalid', message: `scan.stop params ${p.error}` };
    const job = this.scans.get(p.value.task);
    if (job) {
      job.stop();
      // Answered once the scanner has stopped (or after a few seconds): "stops immediately".
      await settles(job.done, 2000);
    }
    return { ok: true };
  }

  private startScan(entry: JournalEntry<ScanJobData>, resume: boolean): void {
    const job = new ScanJob({
      scanner: this.d.scanner, journal: this.d.journal, outbox: this.d.outbox, requests: this.d.requests,
      dir: join(this.d.stateDir, 'scans'), now: this.d.now, log: this.d.log,
      ...(this.d.uploadBackoff ? { backoff: this.d.uploadBackoff } : {}),
      ...(this.d.itemLimits ? { itemLimits: this.d.itemLimits } : {}),
      boxUuid: this.d.boxUuid, userAgent: this.d.userAgent, ...(this.d.direct ? { direct: this.d.direct } : {}),
    }, entry, resume);
    this.scans.set(entry.task, job);
    // Cleaning up is best effort (a disk error must not take the agent down); what stays is
    // taken up at the next acknowledgement or start.
    const cleanup = job.done.then(() => { this.d.changed(); return this.maybeDone(entry.task); })
      .catch((e: unknown) => this.d.log('finished scan not cleaned up', { task: entry.task, error: (e as Error).message }))
      .finally(() => this.cleanups.delete(cleanup));
    this.cleanups.add(cleanup);
  }

  private async onAcked(ids: string[]): Promise<void> {
    const set = new Set(ids);
    for (const job of this.scans.values()) await job.acked(set);
    for (const e of this.d.journal.all()) await this.maybeDone(e.task);
  }

  /** A job that has ended and whose every event the server has: gone from the box. */
  private async maybeDone(task: string): Promise<void> {
    const e = this.d.journal.get(task);
    if (e?.state !== 'ending' || this.d.outbox.pendingFor(task) > 0) return;
    await this.scans.get(task)?.cleanUp();
    this.scans.delete(task);
    await this.d.journal.remove(task);
    await this.d.outbox.forget(task);
    this.d.changed();
  }

  /** Stops every job (the agent is stopping); the journal keeps them for the next start. */
  async close(): Promise<void> {
    for (const j of this.scans.values()) j.halt();
    await Promise.all([...this.scans.values()].map((j) => j.done));
    await this.prints.stop();
    // A stopped agent touches its disk no more (the files may go next, as in a test's teardown).
    await Promise.all([...this.cleanups]);
  }
}

/** Waits for `p` at most `ms`. */
function settles(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    void p.finally(() => { clearTimeout(t); resolve(); });
  });
}
