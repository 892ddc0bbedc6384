// The box's scan runner (docs/box-protocol.md, "Jobs"), beside the print queue: one scan at a
// time (the scanner is one device). It takes a scan task into the journal before answering,
// runs it (scan-job.ts) with its stop, and after a restart resumes what the journal holds.
import type { ScanStartParams, ScanStopParams } from '@boxhub/protocol';
import type { ScannerDriver } from '../drivers/types.ts';
import type { BoxRequests } from '../link/requests.ts';
import type { Journal, JournalEntry } from '../store/journal.ts';
import type { Outbox } from '../store/outbox.ts';
import type { JobAck } from './job-ack.ts';
import { ScanJob, type ScanJobData, type ScanJobDeps } from './scan-job.ts';
import { messageOf } from '@boxhub/protocol/caught.ts';

export interface ScanRunnerDeps {
  boot: string;
  scanner: ScannerDriver;
  journal: Journal;
  outbox: Outbox;
  requests: BoxRequests;
  /** Where scans keep their files: <dir>/<task>/ */
  dir: string;
  now: () => number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  changed: () => void;
  /** A scan has ended (its final event is in the outbox; its acknowledgement may have come already). */
  ended: (task: string) => Promise<void>;
  backoff?: ScanJobDeps['backoff'];
  itemLimits?: ScanJobDeps['itemLimits'];
  boxUuid: string;
  userAgent: string;
  direct?: ScanJobDeps['direct'];
}

export class ScanRunner {
  private readonly d: ScanRunnerDeps;
  private readonly scans = new Map<string, ScanJob>();
  /** Clean-ups of finished scans under way (the agent's close waits for them). */
  private readonly cleanups = new Set<Promise<void>>();

  constructor(d: ScanRunnerDeps) {
    this.d = d;
  }

  /** Resumes every scan the journal holds (after a restart). */
  resume(): void {
    for (const e of this.d.journal.all()) {
      if (e.kind === 'scan') this.run(e as JournalEntry<ScanJobData>, true);
    }
  }

  /** scan.start: journal first, then the ack (a task the box took survives a power cut). */
  async take(p: ScanStartParams): Promise<JobAck> {
    const { task } = p;
    // A repeat of a task already taken (a lost ack, a resent command): taken, once.
    if (this.d.journal.get(task)) return { ok: true, data: { boot: this.d.boot } };
    // A scan that was just stopped is still letting go of the scanner: wait for it (briefly).
    for (const j of this.scans.values()) if (j.stopping) await settles(j.done, 5000);
    const running = [...this.scans.values()].find((j) => this.d.journal.get(j.task)?.state === 'running');
    if (running) return { ok: false, reason: 'busy', message: `the scanner is busy with scan ${running.task}` };
    const status = await this.d.scanner.status().catch(() => undefined);
    if (!status?.connected) return { ok: false, reason: 'failed', message: 'the scanner is not connected' };
    const entry: JournalEntry<ScanJobData> = {
      task,
      kind: 'scan',
      state: 'running',
      boot: this.d.boot,
      acceptedAt: this.d.now(),
      data: { params: p, items: [], sheets: 0 },
    };
    await this.d.journal.put(entry);
    this.run(entry, false);
    this.d.changed();
    return { ok: true, data: { boot: this.d.boot } };
  }

  /** scan.stop: answered once the scanner has stopped (or after a few seconds): "stops immediately". */
  async stop(p: ScanStopParams): Promise<JobAck> {
    const job = this.scans.get(p.task);
    if (job) {
      job.stop();
      await settles(job.done, 2000);
    }
    return { ok: true };
  }

  /** Events the server acknowledged: the files of the items they reported can go. */
  async acked(ids: ReadonlySet<string>): Promise<void> {
    for (const job of this.scans.values()) await job.acked(ids);
  }

  /** A scan whose every event the server has: what is left of it on disk goes. */
  async forget(task: string): Promise<void> {
    await this.scans.get(task)?.cleanUp();
    this.scans.delete(task);
  }

  /** The agent is stopping: every scan halts (the journal keeps them for the next start). */
  async halt(): Promise<void> {
    for (const j of this.scans.values()) j.halt();
    await Promise.all([...this.scans.values()].map((j) => j.done));
  }

  /** Waits for the clean-ups of finished scans under way. */
  async settled(): Promise<void> {
    await Promise.all([...this.cleanups]);
  }

  private run(entry: JournalEntry<ScanJobData>, resume: boolean): void {
    const job = new ScanJob(
      {
        scanner: this.d.scanner,
        journal: this.d.journal,
        outbox: this.d.outbox,
        requests: this.d.requests,
        dir: this.d.dir,
        now: this.d.now,
        log: this.d.log,
        ...(this.d.backoff ? { backoff: this.d.backoff } : {}),
        ...(this.d.itemLimits ? { itemLimits: this.d.itemLimits } : {}),
        boxUuid: this.d.boxUuid,
        userAgent: this.d.userAgent,
        ...(this.d.direct ? { direct: this.d.direct } : {}),
      },
      entry,
      resume,
    );
    this.scans.set(entry.task, job);
    // Cleaning up is best effort (a disk error must not take the agent down); what stays is
    // taken up at the next acknowledgement or start.
    const cleanup = job.done
      .then(() => {
        this.d.changed();
        return this.d.ended(entry.task);
      })
      .catch((e: unknown) => this.d.log('finished scan not cleaned up', { task: entry.task, error: messageOf(e) }))
      .finally(() => this.cleanups.delete(cleanup));
    this.cleanups.add(cleanup);
  }
}

/** Waits for `p` at most `ms`. */
function settles(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    void p.finally(() => {
      clearTimeout(t);
      resolve();
    });
  });
}
