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
  readonly #workers: Worker[] = [];
  readonly #idle: Worker[] = [];
  readonly #queue: Array<{ id: number; bytes: Uint8Array }> = [];
  readonly #jobs = new Map<number, Job>();
  readonly #busy = new Map<Worker, number>();
  #next = 1;

  constructor(opts: PagePoolOptions) {
    const n = Math.max(1, opts.workers ?? availableParallelism());
    for (let i = 0; i < n; i++) {
      const w = new Worker(new URL('./page-worker-boot.mjs', import.meta.url), { workerData: { layouts: opts.layouts } });
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
      w.on('error', (e) => {
        const id = this.#busy.get(w);
        const job = id !== undefined ? this.#jobs.get(id) : undefined;
        if (job) { this.#jobs.delete(job.id); job.reject(e); }
      });
      this.#workers.push(w);
      this.#idle.push(w);
    }
  }

  get size(): number { return this.#workers.length; }

  recognize(bytes: Uint8Array): Promise<PageReading> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#jobs.set(id, { id, resolve, reject });
      this.#queue.push({ id, bytes });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#idle.length > 0 && this.#queue.length > 0) {
      const w = this.#idle.pop()!;
      const job = this.#queue.shift()!;
      this.#busy.set(w, job.id);
      w.postMessage(job);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
