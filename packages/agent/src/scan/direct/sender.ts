// The box's side of direct transfer (docs/direct-transfer.md, "What the box does"): pages are
// written to the box's disk as they are scanned and cut into batches of `page_size` (fewer at
// the end of a batch of paper); batches go out strictly in order, one request at a time, each
// retried until a 2xx with exponential backoff and full jitter (Retry-After honoured), for at
// most `giveUpMs` per batch; then `scan.end`. The state (pages not yet in a batch, batches not
// yet acknowledged, what was acknowledged) is in the job's journal entry, so a box that
// restarts sends the same batches again under the same webhook-id. A page's file is deleted
// once its batch is acknowledged.
import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type DirectTransfer, messageOf, ScanError } from '@boxhub/protocol';
import {
  partName,
  type DirectPageMeta,
  type EndManifest,
  type Manifest,
  type PagesManifest,
} from '@boxhub/protocol/direct-wire.ts';
import { e2eInfo, sealBuffer } from '@boxhub/protocol/e2e.ts';
import type { Dispatcher } from 'undici';
import { Backoff } from '../../timing/backoff.ts';
import { retry } from '../../transfer/retry.ts';
import { writeFileAtomic } from '../../store/atomic-file.ts';
import { attempt, directDispatcher, type DirectHttpOptions, type Outcome } from './http.ts';
import { buildRequest } from './wire.ts';

/** A page on the box's disk, waiting for its batch to be acknowledged: its manifest entry but
 *  for the part name and type, which its batch gives it. With an encrypted scan `cipher` is set
 *  (docs/encryption.md) and bytes and sha256 are those of the encrypted file. */
export interface DirectPage extends Omit<DirectPageMeta, 'part' | 'content_type'> {
  file: string;
}

export interface DirectBatch {
  batch: number;
  pages: DirectPage[];
}

/** Kept in the scan job's journal entry. */
export interface DirectState {
  /** Pages scanned and not yet in a batch. */
  open: DirectPage[];
  /** Batches made and not yet acknowledged, in order. */
  queued: DirectBatch[];
  /** Batches and pages the receiver acknowledged. */
  acked: { batches: number; pages: number };
  /** The last batch number given out, and the highest one sent at least once. */
  last: number;
  tried: number;
  /** Page files written (names them). */
  files: number;
  /** scan.end was acknowledged, or given up on. */
  ended?: boolean;
}

export const newDirectState = (): DirectState => ({
  open: [],
  queued: [],
  acked: { batches: 0, pages: 0 },
  last: 0,
  tried: 0,
  files: 0,
});

/** Retry policy (docs/direct-transfer.md): 1 s doubling to 60 s, at most 10 minutes a batch. */
export interface DirectRetry {
  baseMs: number;
  maxMs: number;
  giveUpMs: number;
}
export const DIRECT_RETRY: DirectRetry = { baseMs: 1000, maxMs: 60_000, giveUpMs: 10 * 60_000 };
const STOP_GRACE_MS = 5000;

export interface DirectSenderDeps {
  task: string;
  boxUuid: string;
  options: DirectTransfer;
  /** Where page files go: <dir>/<n>.jpg */
  dir: string;
  state: DirectState;
  /** Writes the journal entry that holds `state`. */
  save: () => Promise<void>;
  now: () => number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  userAgent: string;
  retry?: Partial<DirectRetry>;
  http?: Omit<DirectHttpOptions, 'h2c'>;
  /** After a stop, how long the attempt on the wire may still take, and the one scan.end
   *  attempt after a stop or a give-up (5 s): a receiver that hangs holds the box no longer. */
  stopGraceMs?: number;
  /** Called once when a batch is given up on (the scan must end with `failure`). */
  onFailure: (f: DirectFailure) => void;
  /** An encrypted scan: each page is encrypted to this public key before it touches the disk. */
  encryptTo?: string;
}

export interface DirectFailure {
  error_code: number;
  message: string;
}

export class DirectSender {
  private readonly d: DirectSenderDeps;
  private readonly retry: DirectRetry;
  private readonly dispatcher: Dispatcher;
  /** The agent stops: the attempt on the wire is abandoned; the journal keeps the rest. */
  private readonly haltAc = new AbortController();
  /** The scan was stopped: the attempt on the wire finishes, nothing else is sent but scan.end (once). */
  private readonly stopAc = new AbortController();
  /** A stop's grace is over: the attempt on the wire is abandoned too. */
  private readonly graceAc = new AbortController();
  private graceTimer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  failure: DirectFailure | undefined;

  constructor(d: DirectSenderDeps) {
    this.d = d;
    this.retry = { ...DIRECT_RETRY, ...d.retry };
    this.dispatcher = directDispatcher(d.options.addr, { ...d.http, ...(d.options.h2c ? { h2c: true } : {}) });
    // After a restart: the batches made before it go again, in order, under their own ids.
    for (const b of d.state.queued) this.queue(b);
  }

  private get s(): DirectState {
    return this.d.state;
  }

  /** A page as it is scanned: on the disk first, then into the open batch. */
  async add(jpeg: Buffer, meta: Omit<DirectPage, 'file' | 'bytes' | 'sha256'>): Promise<void> {
    if (this.stopAc.signal.aborted || this.failure) return;
    await mkdir(this.d.dir, { recursive: true, mode: 0o700 });
    const file = join(this.d.dir, `${++this.s.files}.jpg`);
    // Encrypted scans: the page leaves the box (and reaches its disk) only encrypted, with a
    // content key of its own bound to this scan and page (docs/encryption.md, "Direct transfer").
    const sealed = this.d.encryptTo
      ? await sealBuffer(this.d.encryptTo, e2eInfo.page(this.d.task, meta.page_number), jpeg)
      : undefined;
    const data = sealed ? sealed.file : jpeg;
    await writeFileAtomic(file, data);
    this.s.open.push({
      ...meta,
      file,
      bytes: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
      ...(sealed ? { cipher: sealed.cipher } : {}),
    });
    if (this.s.open.length >= this.d.options.page_size) await this.cut();
    else await this.d.save();
  }

  /** The end of a batch of paper (or of the scan): the pages so far make a batch. */
  async cut(): Promise<void> {
    if (this.s.open.length === 0) return;
    const b: DirectBatch = { batch: ++this.s.last, pages: this.s.open };
    this.s.open = [];
    this.s.queued.push(b);
    await this.d.save();
    this.queue(b);
  }

  /** The scan was stopped (the server ended the task). */
  stop(): void {
    if (this.stopAc.signal.aborted) return;
    this.stopAc.abort(new Error('stopped'));
    this.graceTimer = setTimeout(() => this.graceAc.abort(new Error('stopped')), this.d.stopGraceMs ?? STOP_GRACE_MS);
    this.graceTimer.unref();
  }

  /** The agent is stopping: leave everything in the journal for the next start. */
  halt(): void {
    this.haltAc.abort(new Error('agent stopping'));
  }

  /**
   * Every batch delivered, then scan.end with the scan's `errorCode`. Returns the failure that
   * ends the scan when a batch or the end was given up on. After a stop or a failure, scan.end
   * is tried once only (best effort) with the totals acknowledged so far.
   */
  async finish(errorCode: number): Promise<DirectFailure | undefined> {
    if (!this.haltAc.signal.aborted && !this.stopAc.signal.aborted && !this.failure) await this.cut();
    await this.chain;
    if (this.haltAc.signal.aborted || this.s.ended) return this.failure;
    const once = this.stopAc.signal.aborted || this.failure !== undefined;
    const end: EndManifest = {
      v: 1,
      type: 'scan.end',
      scan_uuid: this.d.task,
      client_uuid: this.d.boxUuid,
      batch: Math.max(this.s.tried, this.s.acked.batches) + 1,
      error_code: this.failure?.error_code ?? errorCode,
      totals: { ...this.s.acked },
    };
    try {
      const r = await this.send(end, [], once);
      if (r && !once) this.fail(`scan.end: ${r}`);
    } catch {
      /* halted */
    }
    if (!this.haltAc.signal.aborted) {
      this.s.ended = true;
      await this.d.save();
    }
    return this.failure;
  }

  async close(): Promise<void> {
    clearTimeout(this.graceTimer);
    await this.dispatcher.destroy().catch(() => undefined);
  }

  private queue(b: DirectBatch): void {
    this.chain = this.chain
      .then(() => this.deliver(b))
      .catch((e: unknown) => {
        if (!this.haltAc.signal.aborted)
          this.d.log('direct transfer failed', { task: this.d.task, error: messageOf(e) });
      });
  }

  private async deliver(b: DirectBatch): Promise<void> {
    if (this.haltAc.signal.aborted || this.stopAc.signal.aborted || this.failure) return;
    const manifest: PagesManifest = {
      v: 1,
      type: 'pages',
      scan_uuid: this.d.task,
      client_uuid: this.d.boxUuid,
      batch: b.batch,
      pages: b.pages.map((p, i) => ({
        part: partName(i),
        item_id: p.item_id,
        paper_number: p.paper_number,
        page_number: p.page_number,
        front: p.front,
        width: p.width,
        height: p.height,
        dpi: p.dpi,
        bytes: p.bytes,
        sha256: p.sha256,
        ...(p.cipher
          ? { content_type: 'application/octet-stream' as const, cipher: p.cipher }
          : { content_type: 'image/jpeg' as const }),
      })),
    };
    const problem = await this.send(
      manifest,
      b.pages.map((p) => p.file),
      false,
    );
    if (problem) {
      if (!this.stopAc.signal.aborted) this.fail(`batch ${b.batch}: ${problem}`);
      return;
    }
    this.s.queued.shift();
    this.s.acked = { batches: b.batch, pages: this.s.acked.pages + b.pages.length };
    await this.d.save();
    for (const p of b.pages) await rm(p.file, { force: true });
  }

  /**
   * Sends one request until a 2xx (undefined), a refusal, the give-up limit or, with `once`,
   * after one attempt (then what went wrong). A stop lets the attempt on the wire finish and
   * retries no more; a halt abandons it (throws).
   */
  private async send(manifest: Manifest, images: string[], once: boolean): Promise<string | undefined> {
    const t0 = this.d.now();
    this.s.tried = Math.max(this.s.tried, manifest.batch);
    const addr = this.d.options.addr;
    let last = '';
    return retry<string | undefined>({
      backoff: new Backoff({ baseMs: this.retry.baseMs, maxMs: this.retry.maxMs }),
      // The wait ends early on a halt or a stop; the next attempt then sees which.
      signal: AbortSignal.any([this.haltAc.signal, this.stopAc.signal]),
      attempt: async (n) => {
        if (n > 1) {
          this.haltAc.signal.throwIfAborted();
          if (this.stopAc.signal.aborted) return { done: `${addr}: ${last}` };
        }
        const req = buildRequest({
          manifest,
          images,
          secret: this.d.options.secret,
          timestamp: Math.floor(this.d.now() / 1000),
          userAgent: this.d.userAgent,
        });
        // The one attempt after a stop or a give-up is short; a stop's grace cuts the one on the wire.
        const cut = once ? AbortSignal.timeout(this.d.stopGraceMs ?? STOP_GRACE_MS) : this.graceAc.signal;
        let r: Outcome;
        try {
          r = await attempt(this.dispatcher, addr, req, AbortSignal.any([this.haltAc.signal, cut]), this.d.now);
        } catch (e) {
          if (this.haltAc.signal.aborted) throw e;
          return {
            done: `${addr}: no answer within the ${Math.round((this.d.stopGraceMs ?? STOP_GRACE_MS) / 1000)} s allowed after a stop or a failure`,
          };
        }
        if (r.kind === 'ok') return { done: undefined };
        if (r.kind === 'refused') return { done: `${addr} refused it: ${r.why}` };
        if (once || this.stopAc.signal.aborted) return { done: `${addr}: ${r.why}` };
        last = r.why;
        return { again: r.why, ...(r.retryAfterMs !== undefined ? { afterMs: r.retryAfterMs } : {}) };
      },
      delay: (backoffMs, afterMs) => Math.min(this.retry.maxMs, Math.max(backoffMs, afterMs ?? 0)),
      waiting: (why, n, delay) => {
        const waited = this.d.now() - t0;
        if (waited + delay > this.retry.giveUpMs) {
          return {
            done: `no 2xx from ${addr} after ${n} attempts in ${Math.round(waited / 1000)} s (the limit is ${Math.round(this.retry.giveUpMs / 1000)} s); last: ${why}`,
          };
        }
        this.d.log('direct transfer attempt failed; retrying', {
          task: this.d.task,
          batch: manifest.batch,
          attempt: n,
          in_ms: delay,
          error: why,
        });
        return undefined;
      },
    });
  }

  private fail(message: string): void {
    if (this.failure) return;
    this.failure = {
      error_code: ScanError.direct_transfer_failed,
      message: `direct transfer: ${message}`.slice(0, 500),
    };
    this.d.onFailure(this.failure);
  }
}
