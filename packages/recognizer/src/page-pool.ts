// Page recognition on worker threads: one sharp thread per worker and as many workers as
// cores gave 1.8x on two cores (docs/cards.md, "Library API"). Results may complete out of
// submission order; callers keep their own order (the assembler needs scan order).
// Close the pool when done: live workers keep the process running.
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { Layout } from './layout.ts';
import type { PageReading } from './page-recognizer.ts';

// Built (dist/, plain node) the worker is plain JavaScript; run from the TypeScript sources it
// starts through page-worker-boot.mjs, which registers tsx in the worker thread.
const WORKER_ENTRY = import.meta.url.endsWith('.ts') ? './page-worker-boot.mjs' : './page-worker.js';

export interface PagePoolOptions {
  layouts: readonly Layout[];
  workers?: number;
}

/** Layouts for one page instead of the pool's own (a service's per-application templates):
 *  `key` names the set, so each worker builds it once and keeps the last few it saw. */
export interface PageLayouts {
  key: string;
  layouts: readonly Layout[];
}

/** Layout sets a worker keeps (page-worker.ts evicts the oldest past this many, as #sent does). */
export const LAYOUT_SETS_PER_WORKER = 16;

interface Job {
  id: number;
  resolve: (r: PageReading) => void;
  reject: (e: Error) => void;
}

export class PagePool {
  readonly #size: number;
  readonly #layouts: readonly Layout[];
  readonly #workers = new Set<Worker>();
  readonly #idle: Worker[] = [];
  readonly #queue: Array<{ id: number; bytes: Uint8Array; set?: PageLayouts; transfer?: true }> = [];
  readonly #jobs = new Map<number, Job>();
  readonly #busy = new Map<Worker, number>();
  /** Per worker, the layout sets it holds (the same insertion-ordered cache the worker keeps,
   *  page-worker.ts): a set it holds is named by its key only. Cloning a service's layouts
   *  into every message cost ~0.5 ms of the main thread per page (27 KB of layouts). */
  readonly #sent = new Map<Worker, Map<string, true>>();
  #next = 1;
  #closing = false;

  constructor(opts: PagePoolOptions) {
    this.#size = Math.max(1, opts.workers ?? availableParallelism());
    this.#layouts = opts.layouts;
    for (let i = 0; i < this.#size; i++) this.#spawn();
  }

  get size(): number {
    return this.#size;
  }

  /**
   * Rejects if the page could not be read: recognizePage threw, or its worker died on it. With
   * `transfer`, the bytes' memory moves to the worker instead of being copied (the caller's
   * array is empty afterwards); only for an array that has its ArrayBuffer to itself.
   */
  recognize(bytes: Uint8Array, set?: PageLayouts, o: { transfer?: boolean } = {}): Promise<PageReading> {
    const id = this.#next++;
    const own =
      o.transfer === true &&
      bytes.buffer instanceof ArrayBuffer &&
      bytes.byteOffset === 0 &&
      bytes.byteLength === bytes.buffer.byteLength;
    return new Promise((resolve, reject) => {
      this.#jobs.set(id, { id, resolve, reject });
      this.#queue.push({ id, bytes, ...(set ? { set } : {}), ...(own ? { transfer: true } : {}) });
      this.#pump();
    });
  }

  #spawn(): void {
    const w = new Worker(new URL(WORKER_ENTRY, import.meta.url), { workerData: { layouts: this.#layouts } });
    w.on('message', (m: { id: number; reading?: PageReading; error?: string }) => {
      const job = this.#jobs.get(m.id);
      this.#jobs.delete(m.id);
      this.#busy.delete(w);
      this.#idle.push(w);
      if (job) {
        if (m.reading) job.resolve(m.reading);
        else job.reject(new Error(m.error ?? 'worker failed'));
      }
      this.#pump();
    });
    // A worker that dies (an uncaught exception is 'error' then 'exit'; running out of memory
    // likewise) fails only the page it was reading. It is dropped, so no page is handed to a
    // dead worker and waits forever, and #pump starts a new one for the pages still queued.
    let failure: Error | undefined;
    w.on('error', (e) => {
      failure = e;
    });
    w.on('exit', (code) => {
      this.#workers.delete(w);
      this.#sent.delete(w);
      const idle = this.#idle.indexOf(w);
      if (idle >= 0) this.#idle.splice(idle, 1);
      const id = this.#busy.get(w);
      this.#busy.delete(w);
      if (this.#closing) return;
      const job = id !== undefined ? this.#jobs.get(id) : undefined;
      if (job) {
        this.#jobs.delete(job.id);
        job.reject(new Error(`recognition worker stopped: ${failure?.message ?? `exit code ${code}`}`));
      }
      this.#pump();
    });
    this.#workers.add(w);
    this.#idle.push(w);
  }

  #pump(): void {
    // Replacements for dead workers, only for pages that are waiting: each new worker is handed
    // a page at once, so a worker that cannot even start fails pages one by one instead of
    // being restarted in a loop.
    while (!this.#closing && this.#workers.size < this.#size && this.#queue.length > this.#idle.length) this.#spawn();
    while (this.#idle.length > 0 && this.#queue.length > 0) {
      const w = this.#idle.pop()!;
      const job = this.#queue.shift()!;
      this.#busy.set(w, job.id);
      w.postMessage(this.#message(w, job), job.transfer ? [job.bytes.buffer as ArrayBuffer] : []);
    }
  }

  /** The job as sent to `w`: a layout set `w` holds goes by its key alone. */
  #message(w: Worker, job: { id: number; bytes: Uint8Array; set?: PageLayouts }): unknown {
    if (!job.set) return { id: job.id, bytes: job.bytes };
    let sent = this.#sent.get(w);
    if (!sent) {
      sent = new Map();
      this.#sent.set(w, sent);
    }
    if (sent.has(job.set.key)) return { id: job.id, bytes: job.bytes, set: { key: job.set.key } };
    sent.set(job.set.key, true);
    if (sent.size > LAYOUT_SETS_PER_WORKER) sent.delete(sent.keys().next().value!);
    return { id: job.id, bytes: job.bytes, set: job.set };
  }

  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#workers].map((w) => w.terminate()));
  }
}
