// Page recognition on worker threads: one sharp thread per worker and as many workers as
// cores gave 1.8x on two cores (design/recognition.md). Results may complete out of
// submission order; callers keep their own order (the assembler needs scan order).
// Close the pool when done: live workers keep the process running.
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { Layout } from './layout.ts';
import type { PageReading } from './page-recognizer.ts';

export interface PagePoolOptions { layouts: readonly Layout[]; workers?: number }

interface Job { id: number; resolve: (r: PageReading) => void; reject: (e: Error) => void }

export class PagePool {
  readonly #size: number;
  readonly #layouts: readonly Layout[];
  readonly #workers = new Set<Worker>();
  readonly #idle: Worker[] = [];
  readonly #queue: Array<{ id: number; bytes: Uint8Array }> = [];
  readonly #jobs = new Map<number, Job>();
  readonly #busy = new Map<Worker, number>();
  #next = 1;
  #closing = false;

  constructor(opts: PagePoolOptions) {
    this.#size = Math.max(1, opts.workers ?? availableParallelism());
    this.#layouts = opts.layouts;
    for (let i = 0; i < this.#size; i++) this.#spawn();
  }

  get size(): number { return this.#size; }

  /** Rejects if the page could not be read: recognizePage threw, or its worker died on it. */
  recognize(bytes: Uint8Array): Promise<PageReading> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#jobs.set(id, { id, resolve, reject });
      this.#queue.push({ id, bytes });
      this.#pump();
    });
  }

  #spawn(): void {
    const w = new Worker(new URL('./page-worker-boot.mjs', import.meta.url), { workerData: { layouts: this.#layouts } });
    w.on('message', (m: { id: number; reading?: PageReading; error?: string }) => {
      const job = this.#jobs.get(m.id);
      this.#jobs.delete(m.id);
      this.#busy.delete(w);
      this.#idle.push(w);
      if (job) {
        if (m.reading) job.resolve(m.reading); else job.reject(new Error(m.error ?? 'worker failed'));
      }
      this.#pump();
    });
    // A worker that dies (an uncaught exception is 'error' then 'exit'; running out of memory
    // likewise) fails only the page it was reading. It is dropped, so no page is handed to a
    // dead worker and waits forever, and #pump starts a new one for the pages still queued.
    let failure: Error | undefined;
    w.on('error', (e) => { failure = e; });
    w.on('exit', (code) => {
      this.#workers.delete(w);
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
      w.postMessage(job);
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#workers].map((w) => w.terminate()));
  }
}
