// The box's print queue (docs/printing.md, "On the box"). Printers often take one job at a time,
// so the box keeps its own queue per printer and prints tasks one after another in the order
// the server created them. Each task: download (a signed URL, refreshed when it expires), check
// the MD5 and size, then hand it to the printer and follow it to its end. A task is printed at
// most once: before the file goes to the printer the journal records that it is being handed
// over, and once the printer has accepted it, the printer's job reference; after a restart a
// task in either phase is never printed again: its job is found on the printer and followed,
// or it ends as interrupted. Cancel ends every task the box holds and empties the queue.
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  messageOf,
  type PrintCancelParams as PrintCancel,
  PrintError,
  printErrorForPrinter,
  type PrintFinishedData,
  type PrintStartParams as PrintStart,
} from '@boxhub/protocol';
import { PrintRejectedError, type PrinterDriver, type PrintOutcome } from '../drivers/types.ts';
import { Backoff } from '../timing/backoff.ts';
import type { BoxRequests } from '../link/requests.ts';
import { RequestRefusedError } from '../link/requests.ts';
import type { Journal, JournalEntry } from '../store/journal.ts';
import type { Outbox } from '../store/outbox.ts';
import type { JobAck } from './job-ack.ts';
import type { E2eKeyPair } from '@boxhub/protocol/e2e.ts';
import { printFileKey, printPages } from './print-encrypted.ts';
import { getFile } from '../transfer/get-file.ts';
import { retry } from '../transfer/retry.ts';

export interface PrintJobData {
  params: PrintStart;
  /** queued → downloaded → handing (the printer may have it) → printing (it has: ref) → done */
  phase: 'queued' | 'downloaded' | 'handing' | 'printing' | 'done';
  file?: string;
  /** The printer's reference of the job (IPP: job id), once it accepted it. */
  ref?: string;
  /** The print task's `pages` (docs/api.md, "Print task") counted on the box: an encrypted file's,
   *  once decrypted (the server could not). */
  pages?: number;
}

export interface PrintQueueDeps {
  printer: PrinterDriver;
  journal: Journal;
  outbox: Outbox;
  requests: BoxRequests;
  /** Where downloaded files wait: <dir>/<task>.<format> */
  dir: string;
  boot: string;
  now: () => number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  changed: () => void;
  /** A task's final event is in the outbox (its acknowledgement may have come already). */
  ended: (task: string) => Promise<void>;
  /** Largest file the box takes (a direct file_url). */
  maxFileBytes?: number;
  backoff?: { baseMs: number; maxMs: number };
  /** A URL a direct print may fetch: public addresses only, unless the box allows more. */
  directAllowed?: (url: string) => Promise<string | undefined>;
  /** This box's uuid: the `info` of print files encrypted to it (docs/encryption.md). */
  deviceUuid?: string;
  /** The box's key pair for encrypted print files. */
  boxKey?: () => E2eKeyPair | undefined;
}

class Cancelled extends Error {}

/** print.progress at most this often (docs/box-protocol.md): the count between two is not sent. */
export const PROGRESS_EVERY_MS = 1000;

export class PrintQueue {
  private readonly d: PrintQueueDeps;
  private running: { task: string; ac: AbortController } | undefined;
  private wake: (() => void) | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  /** Tasks cancelled before their print.start arrived (a cancel racing a create). */
  private readonly tombstones = new Set<string>();
  /** Tasks whose print.start is being taken (between its checks and its journal entry): a cancel
   *  of every task meets them here, not yet in the journal. */
  private readonly taking = new Set<string>();
  /** print.progress events being written: one after the other (the outbox numbers each task's
   *  events as they are appended), and all before the task's print.finished. */
  private progressing: Promise<void> = Promise.resolve();
  /** When the last print.progress was written: at most one per PROGRESS_EVERY_MS, since a
   *  task's events go to the server one at a time and each waits for its acknowledgement. */
  private progressAt = -Infinity;

  constructor(d: PrintQueueDeps) {
    this.d = d;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** The agent is stopping. A download in progress is abandoned (done again after the restart);
   *  a job the printer has is left to print: the restart follows it instead of cancelling it. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    const r = this.running;
    if (!r) {
      await this.loop;
      return;
    }
    const phase = this.d.journal.get<PrintJobData>(r.task)?.data.phase;
    if (phase === 'queued' || phase === 'downloaded') {
      r.ac.abort(new Error('agent stopping'));
      await this.loop;
    }
  }

  /** print.start: journal first, then the ack (a task the box took survives a power cut). */
  async take(p: PrintStart): Promise<JobAck> {
    const { task } = p;
    const refusal: JobAck = { ok: false, reason: 'failed', message: `print task ${task} was cancelled` };
    if (this.tombstones.has(task)) return refusal;
    if (this.d.journal.get(task)) return { ok: true, data: { boot: this.d.boot } };
    this.taking.add(task);
    try {
      const status = await this.d.printer.status().catch(() => undefined);
      if (!status?.connected) return { ok: false, reason: 'failed', message: 'the printer is not connected' };
      // A cancel that came while the printer was asked: this task is one it ended.
      if (this.tombstones.has(task)) return refusal;
      const entry: JournalEntry<PrintJobData> = {
        task,
        kind: 'print',
        state: 'queued',
        boot: this.d.boot,
        acceptedAt: this.d.now(),
        data: { params: p, phase: 'queued' },
      };
      await this.d.journal.put(entry);
      // Or while the entry was written: it goes again (nothing was printed or said of it).
      if (this.tombstones.has(task)) {
        await this.d.journal.remove(task);
        return refusal;
      }
    } finally {
      this.taking.delete(task);
    }
    this.d.changed();
    this.wake?.();
    return { ok: true, data: { boot: this.d.boot } };
  }

  /** print.cancel: the listed tasks (with `all`, every task the box holds) end cancelled; the
   *  listed ones it does not hold yet are refused if they come later. */
  async cancel(p: PrintCancel): Promise<JobAck> {
    for (const t of p.tasks) if (!this.d.journal.get(t)) this.tombstones.add(t);
    if (p.all) for (const t of this.taking) this.tombstones.add(t);
    if (this.tombstones.size > 10_000) this.tombstones.clear();
    const listed = new Set(p.tasks);
    for (const e of this.entries()) {
      if (e.data.phase === 'done' || (!p.all && !listed.has(e.task))) continue;
      if (this.running?.task === e.task) {
        this.running.ac.abort(new Cancelled('cancelled'));
        continue;
      }
      await this.finish(e, {
        outcome: 'canceled',
        error_code: PrintError.cancelled,
        message: 'cancelled before printing',
      });
    }
    return { ok: true };
  }

  private entries(): JournalEntry<PrintJobData>[] {
    return this.d.journal.all().filter((e) => e.kind === 'print') as JournalEntry<PrintJobData>[];
  }

  /** The next task to print: creation order (a device's print tasks print in turn; docs/printing.md). */
  private next(): JournalEntry<PrintJobData> | undefined {
    return this.entries()
      .filter((e) => e.data.phase !== 'done')
      .sort((a, b) => a.data.params.created_at - b.data.params.created_at || a.acceptedAt - b.acceptedAt)[0];
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const e = this.next();
      if (!e) {
        await new Promise<void>((r) => {
          this.wake = r;
        });
        this.wake = undefined;
        continue;
      }
      const ac = new AbortController();
      this.running = { task: e.task, ac };
      try {
        await this.print(e, ac.signal);
      } catch (err) {
        if (this.stopped) break;
        this.d.log('print task failed', { task: e.task, error: messageOf(err) });
        await this.finish(e, {
          outcome: 'failed',
          error_code: PrintError.box_error,
          message: messageOf(err).slice(0, 500),
        }).catch(() => undefined);
      } finally {
        this.running = undefined;
      }
    }
  }

  private async print(e: JournalEntry<PrintJobData>, signal: AbortSignal): Promise<void> {
    const { params } = e.data;
    const hooks = {
      signal,
      // Sides done, for the task's history (docs/tasks.md, "History").
      progress: (pr: { impressionsCompleted?: number }) => {
        const n = pr.impressionsCompleted;
        const now = this.d.now();
        if (n === undefined || now - this.progressAt < PROGRESS_EVERY_MS) return;
        this.progressAt = now;
        this.progressing = this.progressing
          .then(() => this.d.outbox.append(e.task, 'print.progress', { impressions_completed: n }))
          .then(
            () => undefined,
            () => undefined,
          );
      },
      // `pages` the server could not count (an encrypted file, or a direct one it never
      // fetched): selected pages × copies of the document the box prepared.
      prepared: (doc: { sourcePages: number }) => {
        if (params.pages === undefined) e.data = { ...e.data, pages: printPages(doc.sourcePages, params.options) };
      },
      submitted: async (ref: string) => {
        e.data = { ...e.data, phase: 'printing', ref };
        e.state = 'running';
        await this.d.journal.put(e);
        await this.d.outbox.append(e.task, 'print.started', { pages: params.pages ?? e.data.pages ?? 0 });
        this.d.changed();
      },
    };
    // After a restart: never print again what the printer may have; follow it instead.
    if (e.data.phase === 'handing' || e.data.phase === 'printing') {
      const ref = e.data.ref ?? (await this.d.printer.find(e.task, signal));
      const outcome = ref ? await this.d.printer.follow(ref, hooks) : undefined;
      if (!outcome) {
        await this.finish(e, {
          outcome: 'failed',
          error_code: PrintError.interrupted,
          message:
            'the box restarted after handing the job to the printer, and the printer no longer knows it; it is not printed again',
        });
        return;
      }
      await this.finish(e, this.result(outcome, signal, e.data.params.options.strict));
      return;
    }
    if (e.data.phase === 'queued') {
      const got = await this.download(e, signal);
      if (!got) return;
    }
    if (signal.aborted) throw signal.reason;
    // download() set it with the phase 'downloaded', and a journal entry keeps it from then on.
    const { file } = e.data;
    if (file === undefined) throw new Error(`print task ${e.task} is ${e.data.phase} but has no downloaded file`);
    e.data = { ...e.data, phase: 'handing' };
    e.state = 'running';
    await this.d.journal.put(e);
    this.d.changed();
    let outcome: PrintOutcome;
    try {
      outcome = await this.d.printer.print(
        { task: e.task, file, format: params.file.format, options: params.options },
        hooks,
      );
    } catch (err) {
      if (err instanceof PrintRejectedError) {
        await this.finish(e, {
          outcome: 'failed',
          error_code: err.name === 'PrintDocumentError' ? PrintError.document_invalid : PrintError.printer_rejected,
          message: err.message.slice(0, 500),
        });
        return;
      }
      if (signal.aborted && signal.reason instanceof Cancelled) {
        await this.finish(e, { outcome: 'canceled', error_code: PrintError.cancelled });
        return;
      }
      // The printer could not be reached: it may or may not have the job. Never resent blindly.
      const ref = await this.d.printer.find(e.task).catch(() => undefined);
      const followed = ref ? await this.d.printer.follow(ref, hooks).catch(() => undefined) : undefined;
      await this.finish(
        e,
        followed
          ? this.result(followed, signal, params.options.strict)
          : { outcome: 'failed', error_code: PrintError.printer_not_connected, message: messageOf(err).slice(0, 500) },
      );
      return;
    }
    await this.finish(e, this.result(outcome, signal, params.options.strict));
  }

  private result(o: PrintOutcome, signal: AbortSignal, strict: boolean): PrintFinishedData {
    const printed = strict && o.impressionsCompleted !== undefined ? { printed_pages: o.impressionsCompleted } : {};
    if (o.state === 'completed') return { outcome: 'completed', error_code: 0, ...printed };
    if (o.state === 'canceled') {
      const ours = signal.aborted && signal.reason instanceof Cancelled;
      return {
        outcome: 'canceled',
        error_code: ours ? PrintError.cancelled : PrintError.cancelled_at_printer,
        ...printed,
        ...(o.message ? { message: o.message.slice(0, 500) } : {}),
      };
    }
    return {
      outcome: 'failed',
      error_code: printErrorForPrinter(o.printerError),
      ...printed,
      ...(o.message ? { message: o.message.slice(0, 500) } : {}),
    };
  }

  /** Downloads and checks the file; false when the task ended instead (failed or cancelled). */
  private async download(e: JournalEntry<PrintJobData>, signal: AbortSignal): Promise<boolean> {
    const f = e.data.params.file;
    await mkdir(this.d.dir, { recursive: true, mode: 0o700 });
    const path = join(this.d.dir, `${e.task}.${f.format}`);
    // An encrypted file is decrypted as it downloads into `path.part`, which becomes `path` only
    // when its MD5 and its GCM tag have verified (docs/encryption.md).
    let key: Buffer | undefined;
    if (f.cipher) {
      const k = await printFileKey(f.cipher, this.d.deviceUuid ?? '', this.d.boxKey?.());
      if (!k.ok) {
        await this.finish(e, {
          outcome: 'failed',
          error_code: PrintError.decrypt_failed,
          message: k.message.slice(0, 500),
        });
        return false;
      }
      key = k.key;
    }
    const target = key ? `${path}.part` : path;
    const backoff = new Backoff(this.d.backoff ?? { baseMs: 1000, maxMs: 30_000 });
    let url = f.url;
    let expires = f.url_expires_at;
    const t0 = this.d.now();
    if (f.direct && this.d.directAllowed) {
      const problem = await this.d.directAllowed(url);
      if (problem) {
        await this.finish(e, {
          outcome: 'failed',
          error_code: PrintError.download_failed,
          message: `file_url: ${problem}`,
        });
        return false;
      }
    }
    return retry<boolean>({
      backoff,
      signal,
      aborted: async () => {
        if (signal.reason instanceof Cancelled) {
          await this.finish(e, { outcome: 'canceled', error_code: PrintError.cancelled });
          return false;
        }
        throw signal.reason;
      },
      attempt: async (attempt) => {
        if (!f.direct && expires !== undefined && expires - 30_000 < this.d.now()) {
          try {
            const fresh = await this.d.requests.ask('download.url', { task: e.task });
            url = String(fresh.url);
            expires = Number(fresh.expires_at);
          } catch (err) {
            if (err instanceof RequestRefusedError) {
              await this.finish(e, { outcome: 'failed', error_code: PrintError.download_failed, message: err.message });
              return { done: false };
            }
            return { again: messageOf(err) };
          }
        }
        const r = await getFile(url, target, this.d.maxFileBytes ?? 256 * 1024 * 1024, signal, key);
        const checked = r.ok || r.tag;
        if (checked) {
          if ((f.size !== undefined && r.size !== f.size) || (f.md5 !== undefined && r.md5 !== f.md5)) {
            await rm(target, { force: true });
            await this.finish(e, {
              outcome: 'failed',
              error_code: PrintError.checksum_mismatch,
              message: `downloaded ${r.size} bytes with MD5 ${r.md5}; the task names ${f.size ?? '?'} bytes with MD5 ${f.md5 ?? '?'}`,
            });
            return { done: false };
          }
          if (!r.ok) {
            // The bytes are the task's (the MD5 above is of the encrypted file) but fail their GCM
            // tag: altered before the MD5 was taken, or the cipher belongs to another file.
            await rm(target, { force: true });
            await this.finish(e, {
              outcome: 'failed',
              error_code: PrintError.decrypt_failed,
              message: `${r.error}; nothing was printed`,
            });
            return { done: false };
          }
          if (key) await rename(target, path);
          e.data = { ...e.data, phase: 'downloaded', file: path };
          await this.d.journal.put(e);
          await this.d.outbox.append(e.task, 'print.downloaded', {
            download_spent_ms: this.d.now() - t0,
            size: r.size,
          });
          return { done: true };
        }
        // 403 on our store: the URL expired; ask for a fresh one. Other refusals are final.
        if (r.status === 403 && !f.direct) {
          expires = 0;
          return { now: true };
        }
        if (!r.retry || attempt >= 20) {
          await rm(target, { force: true });
          await this.finish(e, { outcome: 'failed', error_code: PrintError.download_failed, message: r.error });
          return { done: false };
        }
        return { again: r.error };
      },
    });
  }

  private async finish(e: JournalEntry<PrintJobData>, data: PrintFinishedData): Promise<void> {
    if (e.data.phase === 'done') return;
    await this.progressing;
    await this.d.outbox.append(e.task, 'print.finished', data);
    e.data = { ...e.data, phase: 'done' };
    e.state = 'ending';
    await this.d.journal.put(e);
    if (e.data.file) await rm(e.data.file, { force: true });
    this.d.changed();
    await this.d.ended(e.task);
  }
}
