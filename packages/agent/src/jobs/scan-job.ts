// One scan task on the box (docs/scanning.md, "On the box"): the scanner delivers pages one at a
// time, each reported to the server as it comes (scan.progress); blank pages are dropped when
// asked; pages become JPEG and are written into a PDF item on disk (items cut by the task's item
// rule as the stack scans, never across batches of paper); each item is uploaded to
// a URL the server signs for that item only, and then reported as a durable event. Scanning
// and uploading run side by side, items in order. Every step is in the journal, so a box that
// restarts mid-scan still uploads and reports the items it had made, then reports the scan
// interrupted; an item's file is deleted only once the server has recorded it.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { messageOf, ScanError, type ScanPageInfo, type ScanStartParams } from '@boxhub/protocol';
import { e2eInfo, FileSealer, newContentKey, wrapContentKey } from '@boxhub/protocol/e2e.ts';
import type { ScannerDriver, ScanRequest } from '../drivers/types.ts';
import { ScanFault } from '../drivers/types.ts';
import { RequestRefusedError, type BoxRequests } from '../link/requests.ts';
import { Backoff } from '../timing/backoff.ts';
import { pause } from '../timing/pause.ts';
import { assembleItems, ITEM_RULE, type ItemLimits } from '../scan/index.ts';
import { ScanProgressReporter } from './scan-progress.ts';
import type { KeptPage } from '../scan/assemble.ts';
import { putFile } from '../transfer/put-file.ts';
import { retry, retryableStatus } from '../transfer/retry.ts';
import {
  DirectSender,
  newDirectState,
  type DirectFailure,
  type DirectRetry,
  type DirectState,
} from '../scan/direct/sender.ts';
import type { Journal, JournalEntry } from '../store/journal.ts';
import type { Outbox } from '../store/outbox.ts';

export interface ItemRecord {
  item_id: number;
  file: string;
  pages: ScanPageInfo[];
  size: number;
  md5: string;
  scanned_at: number;
  state: 'written' | 'uploaded' | 'reported';
  upload_spent_ms?: number;
  /** The item's cipher, when the scan is encrypted: kept with the item, so an item finished
   *  before a restart is still delivered with it (the content key itself is never stored). */
  cipher?: string;
  /** Id of the scan.item event, to delete the file once the server has it. */
  event?: string;
}

export interface ScanJobData {
  params: ScanStartParams;
  items: ItemRecord[];
  /** Sheets fed so far (paper numbers continue across batches of paper). */
  sheets: number;
  /** Sides kept and skipped as blank so far (scan.progress). */
  kept?: number;
  skipped?: number;
  /** Direct transfer (docs/direct-transfer.md): pages and batches not yet acknowledged. */
  direct?: DirectState;
  /** Set once scan.finished is in the outbox. */
  finished?: { error_code: number; message?: string };
}

export interface ScanJobDeps {
  scanner: ScannerDriver;
  /** Item caps (scan/item-rule.ts ITEM_LIMITS by default). */
  itemLimits?: ItemLimits;
  journal: Journal;
  outbox: Outbox;
  requests: BoxRequests;
  /** Where items are written: <dir>/<task>/<item>.pdf */
  dir: string;
  now: () => number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  /** Upload retry delays (tests shorten them). */
  backoff?: { baseMs: number; maxMs: number };
  /** The box's uuid (client_uuid in direct-transfer manifests) and User-Agent. */
  boxUuid: string;
  userAgent: string;
  /** Direct transfer's retry policy and extra trusted CAs (tests). */
  direct?: { retry?: Partial<DirectRetry>; ca?: string | string[]; timeoutMs?: number; stopGraceMs?: number };
}

/** The item could not be encrypted (the task's public key is unusable): nothing is uploaded. */
class EncryptFailure extends Error {}

const FAULT_CODES: Record<ScanFault['kind'], number> = {
  jammed: ScanError.jammed,
  misfeed: ScanError.misfeed,
  'cover-open': ScanError.cover_open,
  io: ScanError.scanner_error,
  disconnected: ScanError.scanner_disconnected,
  lost: ScanError.job_lost,
  unavailable: ScanError.scanner_unavailable,
};

export class ScanJob {
  readonly task: string;
  private readonly d: ScanJobDeps;
  private entry: JournalEntry<ScanJobData>;
  /** Stop: the server ended the task. Scanning, assembling and uploading stop; the open item is dropped. */
  private readonly ac = new AbortController();
  /** Halt: the agent shuts down. The scanner stops; the open item is finished for the restart. */
  private readonly haltAc = new AbortController();
  private uploads: Promise<void> = Promise.resolve();
  private uploadFailure: { error_code: number; message: string } | undefined;
  private directFailure: DirectFailure | undefined;
  /** Sends pages to the task's direct_addr, when it has one. */
  private readonly direct: DirectSender | undefined;
  /** Tells the server each page as it comes (docs/scanning.md, "Progress"). */
  private readonly progress: ScanProgressReporter;
  /** Serialises journal writes: scanning and uploading both update the entry. */
  private saving: Promise<void> = Promise.resolve();
  readonly done: Promise<void>;

  constructor(d: ScanJobDeps, entry: JournalEntry<ScanJobData>, resume: boolean) {
    this.d = d;
    this.entry = entry;
    this.task = entry.task;
    this.progress = new ScanProgressReporter({ send: (p) => d.requests.ask('scan.progress', p, 5000) });
    const direct = entry.data.params.options.direct;
    if (direct) {
      entry.data.direct ??= newDirectState();
      this.direct = new DirectSender({
        task: this.task,
        boxUuid: d.boxUuid,
        options: direct,
        dir: join(d.dir, this.task, 'direct'),
        state: entry.data.direct,
        save: () => this.save(),
        now: d.now,
        log: d.log,
        userAgent: d.userAgent,
        ...(entry.data.params.options.encrypt ? { encryptTo: entry.data.params.options.encrypt.public_key } : {}),
        ...(d.direct?.retry ? { retry: d.direct.retry } : {}),
        ...(d.direct?.stopGraceMs ? { stopGraceMs: d.direct.stopGraceMs } : {}),
        http: {
          ...(d.direct?.ca ? { ca: d.direct.ca } : {}),
          ...(d.direct?.timeoutMs ? { timeoutMs: d.direct.timeoutMs } : {}),
        },
        onFailure: (f) => {
          this.directFailure ??= f;
          // The receiver will not take more: there is no point feeding more paper.
          this.ac.abort(new Error(f.message));
        },
      });
    }
    this.done = (resume ? this.resume() : this.run()).catch((e: unknown) => this.failed(e));
  }

  private halting = false;

  /** Stop (the server ended the task): scanning and uploading stop at once, and the end is reported. */
  stop(): void {
    this.progress.close();
    this.direct?.stop();
    this.ac.abort(new Error('stopped'));
  }

  /** Stopped (or halted) and winding down: the scanner is being released. */
  get stopping(): boolean {
    return this.ac.signal.aborted;
  }

  /** The agent is shutting down: stop at once but report nothing, so the next start resumes
   *  the job from the journal (its items are still delivered; the scan is reported interrupted). */
  halt(): void {
    this.halting = true;
    this.progress.close();
    this.haltAc.abort(new Error('agent stopping'));
    this.direct?.halt();
    this.ac.abort(new Error('agent stopping'));
  }

  /** The file of an item whose scan.item event the server acknowledged can go. */
  async acked(eventIds: ReadonlySet<string>): Promise<void> {
    for (const item of this.entry.data.items) {
      if (item.event && eventIds.has(item.event)) await rm(item.file, { force: true });
    }
  }

  private async run(): Promise<void> {
    const o = this.entry.data.params.options;
    const signal = this.ac.signal;
    let fault: { error_code: number; message: string } | undefined;
    // Continuous mode's deadline (docs/printers-and-scanners.md, "For the job runner"): it starts
    // with the first wait after paper was fed and only paper restarts it. A device that cannot
    // sense paper answers every poll with "try", and a try that feeds nothing must not restart
    // the wait, or the task never ends by itself.
    const waitMs = o.continuous_wait * 1000;
    let deadline: number | undefined;
    try {
      for (let batch = 0; ; batch++) {
        if (batch > 0) {
          // Continuous mode (docs/api.md, "Scan task"): wait for more paper; 0 waits until stop.
          let wait = waitMs;
          if (waitMs > 0) {
            deadline ??= this.d.now() + waitMs;
            wait = deadline - this.d.now();
            if (wait <= 0) break;
          }
          const more = await this.d.scanner.waitForPaper(signal, wait);
          this.d.log('continuous scan: waited for paper', {
            task: this.task,
            batch,
            wait_ms: wait,
            more,
            stopped: signal.aborted,
          });
          if (!more || signal.aborted) break;
        }
        const sheetsBefore = this.entry.data.sheets;
        await this.batch(signal);
        if (o.continuous)
          this.d.log('continuous scan: batch done', {
            task: this.task,
            batch,
            sheets: this.entry.data.sheets - sheetsBefore,
          });
        if (this.entry.data.sheets > sheetsBefore) deadline = undefined;
        if (!o.continuous || signal.aborted || this.uploadFailure || this.directFailure) break;
      }
    } catch (e) {
      if (!signal.aborted) {
        fault =
          e instanceof ScanFault
            ? { error_code: FAULT_CODES[e.kind], message: e.message }
            : e instanceof EncryptFailure
              ? { error_code: ScanError.encrypt_failed, message: e.message }
              : { error_code: ScanError.scanner_error, message: messageOf(e) };
        this.d.log('scan ended by a scanner fault', { task: this.task, ...fault });
      }
    }
    await this.uploads;
    // The last counts reach the server before the end does (the end closes the task to them).
    await this.progress.flushed();
    this.progress.close();
    if (this.halting) return;
    const result = await this.endDirect(
      fault ?? this.uploadFailure ?? this.directFailure ?? { error_code: ScanError.none },
    );
    if (this.halting) return;
    await this.end(result);
  }

  /** Direct transfer: every batch delivered and scan.end sent before the server hears of the
   *  end; a transfer given up on is the scan's error when it had none. */
  private async endDirect(result: {
    error_code: number;
    message?: string;
  }): Promise<{ error_code: number; message?: string }> {
    if (!this.direct) return result;
    const failed = await this.direct.finish(result.error_code);
    await this.direct.close();
    return result.error_code === 0 && failed ? failed : result;
  }

  /** One batch of paper: pages until the feeder is empty, in items of at most the caps
   *  (scan/assemble.ts). Paper numbers continue across batches. */
  private async batch(signal: AbortSignal): Promise<void> {
    const o = this.entry.data.params.options;
    const first = this.entry.data.sheets;
    const req: ScanRequest = {
      duplex: o.duplex,
      resolution: o.resolution,
      color: o.color,
      jpegQuality: o.quality,
      task: this.task,
    };
    const dir = join(this.d.dir, this.task);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // The scanner stops on a stop or a halt; the assembly only on a stop, so that on a halt the
    // open item is finished (for the restart) rather than dropped.
    const pages = this.d.scanner.scan(req, AbortSignal.any([signal, this.haltAc.signal]));
    const { direct } = this;
    const { encrypt } = o;
    for await (const item of assembleItems(pages, {
      dir,
      request: req,
      blankPageSkip: o.blank_page_skip,
      signal: this.stopSignal(),
      firstItem: this.entry.data.items.length + 1,
      fileName: (n) => `${n}.pdf`,
      now: this.d.now,
      ...(this.d.itemLimits ? { limits: this.d.itemLimits } : {}),
      itemRule: { pages: o.item_pages ?? ITEM_RULE.pages, seconds: o.item_seconds ?? ITEM_RULE.seconds },
      onPage: (p) => {
        const data = this.entry.data;
        data.sheets = Math.max(data.sheets, first + p.sheet);
        if (p.kept) data.kept = (data.kept ?? 0) + 1;
        else data.skipped = (data.skipped ?? 0) + 1;
        if (!signal.aborted)
          this.progress.report({
            task: this.task,
            pages: data.kept ?? 0,
            skipped: data.skipped ?? 0,
            at: this.d.now(),
          });
      },
      ...(direct
        ? {
            onKeep: (p: KeptPage) => {
              const paper = first + p.sheet;
              return direct.add(p.jpeg, {
                item_id: p.item,
                paper_number: paper,
                page_number: (paper - 1) * 2 + (p.front ? 1 : 2),
                front: p.front,
                width: p.width,
                height: p.height,
                dpi: p.dpi,
              });
            },
          }
        : {}),
      ...(encrypt ? { seal: (item: number) => this.sealer(encrypt.public_key, item) } : {}),
    })) {
      const record: ItemRecord = {
        item_id: item.item,
        file: item.path,
        size: item.size,
        md5: item.md5,
        scanned_at: item.scannedAt,
        state: 'written',
        ...(item.cipher ? { cipher: item.cipher } : {}),
        // Recognition pages[] (docs/api.md): page_number counts sides, two per sheet (the second sheet's
        // first side is 3).
        pages: item.sides.map((side) => {
          const paper = first + side.sheet;
          return { paper_number: paper, page_number: (paper - 1) * 2 + (side.front ? 1 : 2), front: side.front };
        }),
      };
      this.entry.data.items.push(record);
      await this.save();
      this.queueUpload(record);
    }
    // The end of a batch of paper ends a direct batch too (fewer pages than page_size).
    await this.direct?.cut();
  }

  /** An item's encryption (docs/encryption.md): a fresh content key sealed to the task's key,
   *  for this task and item only. */
  private async sealer(publicKey: string, item: number): Promise<{ sealer: FileSealer; cipher: string }> {
    const key = newContentKey();
    try {
      return {
        sealer: new FileSealer(key),
        cipher: await wrapContentKey(publicKey, e2eInfo.scan(this.task, item), key),
      };
    } catch (e) {
      throw new EncryptFailure(`item ${item} could not be encrypted to the task's public key: ${messageOf(e)}`);
    }
  }

  /** The stop alone (not the halt): what the assembly listens to. */
  private stopSignal(): AbortSignal {
    const ac = new AbortController();
    this.ac.signal.addEventListener(
      'abort',
      () => {
        if (!this.halting) ac.abort(this.ac.signal.reason);
      },
      { once: true },
    );
    return ac.signal;
  }

  private queueUpload(item: ItemRecord): void {
    this.uploads = this.uploads
      .then(() => this.deliver(item))
      .catch((e: unknown) => {
        if (this.ac.signal.aborted) return;
        this.uploadFailure ??= { error_code: ScanError.upload_failed, message: messageOf(e) };
        // A refused item ends the scan: there is no point feeding more paper.
        this.ac.abort(e);
      });
  }

  /** Uploads an item (until it succeeds, the server refuses it, or the job is stopped), then reports it. */
  private async deliver(item: ItemRecord): Promise<void> {
    const signal = this.ac.signal;
    // direct_mode 1: the pages went to direct_addr; the item is reported without a file.
    const pagesOnly = this.entry.data.params.options.direct?.mode === 1;
    if (item.state === 'written' && pagesOnly) {
      await rm(item.file, { force: true });
      item.state = 'uploaded';
    }
    if (item.state === 'written') {
      const uploaded = await retry<boolean>({
        backoff: new Backoff(this.d.backoff ?? { baseMs: 1000, maxMs: 60_000 }),
        signal,
        aborted: () => false,
        attempt: async () => {
          let grant: Record<string, unknown>;
          try {
            grant = await this.d.requests.ask('upload.url', {
              task: this.task,
              item_id: item.item_id,
              size: item.size,
              md5: item.md5,
            });
          } catch (e) {
            if (e instanceof RequestRefusedError)
              throw new Error(`the server refused item ${item.item_id}: ${e.message}`);
            return { again: messageOf(e) };
          }
          const t0 = this.d.now();
          let status: number;
          let answer = '';
          try {
            const r = await putFile(String(grant.url), item.file, {
              headers: grant.headers as Record<string, string>,
              signal,
            });
            status = r.status;
            answer = r.body.slice(0, 300).trim();
          } catch (e) {
            if (signal.aborted) return { done: false };
            this.d.log('item upload failed; retrying', { task: this.task, item: item.item_id, error: messageOf(e) });
            return { again: messageOf(e) };
          }
          if (status >= 200 && status < 300) {
            item.upload_spent_ms = this.d.now() - t0;
            return { done: true };
          }
          // 403: the URL expired while waiting; ask for a new one. 408, 429, 5xx: try again.
          // Other 4xx: the server refuses these bytes, and will again.
          if (status !== 403 && !retryableStatus(status))
            throw new Error(`upload of item ${item.item_id} refused: HTTP ${status}${answer ? `: ${answer}` : ''}`);
          this.d.log('item upload failed; retrying', { task: this.task, item: item.item_id, error: `HTTP ${status}` });
          return { again: `HTTP ${status}` };
        },
      });
      if (!uploaded) return;
      item.state = 'uploaded';
      await this.save();
    }
    if (item.state === 'uploaded' && !signal.aborted) {
      const e = await this.d.outbox.append(this.task, 'scan.item', {
        item_id: item.item_id,
        pages: item.pages,
        scanned_at: item.scanned_at,
        ...(pagesOnly
          ? {}
          : {
              upload: {
                md5: item.md5,
                size: item.size,
                upload_spent_ms: item.upload_spent_ms ?? 0,
                ...(item.cipher ? { cipher: item.cipher } : {}),
              },
            }),
      });
      item.event = e.id;
      item.state = 'reported';
      await this.save();
    }
  }

  /** After a restart: the items made before it are still delivered, then the scan is reported interrupted. */
  private async resume(): Promise<void> {
    if (!this.entry.data.finished) {
      for (const item of this.entry.data.items) if (item.state !== 'reported') this.queueUpload(item);
      await this.uploads;
      if (this.halting) return;
      const result = await this.endDirect(
        this.uploadFailure ?? { error_code: ScanError.interrupted, message: 'the box restarted during the scan' },
      );
      if (this.halting) return;
      await this.end(result);
    }
  }

  /**
   * The job failed where no scanner fault is caught: its end could not be written (the box's
   * disk is full), say. The task must still end, or the server waits for it until it expires
   * (docs/chaos.md): the end is written as soon as it can be, tried again with backoff, with
   * the failure as a scanner error (2003). A halt leaves it to the next start, which resumes.
   */
  private async failed(e: unknown): Promise<void> {
    const message = `the box could not go on with the scan: ${messageOf(e)}`;
    this.d.log('scan job failed', { task: this.task, error: messageOf(e) });
    const backoff = new Backoff(this.d.backoff ?? { baseMs: 1000, maxMs: 30_000 });
    while (!this.halting && !this.entry.data.finished) {
      try {
        await this.end({ error_code: ScanError.scanner_error, message });
        return;
      } catch (again) {
        this.d.log('scan end not written yet; trying again', { task: this.task, error: messageOf(again) });
        await pause(backoff.next(), this.haltAc.signal);
      }
    }
  }

  private async end(result: { error_code: number; message?: string }): Promise<void> {
    if (this.entry.data.finished) return;
    const items = this.entry.data.items.filter((i) => i.state === 'reported');
    await this.d.outbox.append(this.task, 'scan.finished', {
      error_code: result.error_code,
      ...(result.message ? { message: result.message.slice(0, 500) } : {}),
      items: items.length,
      pages: items.reduce((n, i) => n + i.pages.length, 0),
    });
    this.entry = {
      ...this.entry,
      state: 'ending',
      data: {
        ...this.entry.data,
        finished: { error_code: result.error_code, ...(result.message ? { message: result.message } : {}) },
      },
    };
    await this.save();
  }

  private save(): Promise<void> {
    // A failed write (a full disk) fails its caller; the next save writes the entry afresh.
    this.saving = this.saving.catch(() => undefined).then(() => this.d.journal.put(this.entry));
    return this.saving;
  }

  /** Deletes what is left of the job on disk (once the server has everything). */
  async cleanUp(): Promise<void> {
    await rm(join(this.d.dir, this.task), { recursive: true, force: true });
  }
}
