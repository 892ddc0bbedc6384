// The node-wide bound on document and image work (docs/configuration.md "Document and image
// work"): PDF checks of print creates (each runs two qpdf processes of up to 512 MiB) and the
// decoding of recognition pages. Each piece of work is bounded on its own (memory, CPU, time,
// pixels); this bounds how many run at once on the node, so that one key under its rate limit
// cannot keep the node's CPU and memory busy with a burst of them.
//
// Requests wait their turn in a queue of a documented depth; past it, or after waiting
// `maxWaitMs`, they are refused with 10429 SERVER_BUSY, a Retry-After header and
// data.retry_after. Background work (recognition jobs, already queued in the jobs table) waits
// without a depth limit: the job runner's own concurrency bounds how many wait.
import { ApiError } from '@boxhub/protocol';
import type { Clock } from './clock.ts';

export interface WorkGateSettings {
  /** Pieces of work running at once on this node (BOXHUB_WORK_SLOTS). */
  slots: number;
  /** Requests waiting for a slot at most; one more is refused (BOXHUB_WORK_QUEUE). */
  queue: number;
  /** A request waits at most this long for its slot, then is refused. */
  maxWaitMs: number;
  /** What the refusal's Retry-After says, seconds. */
  retryAfterS: number;
}

export const WORK_GATE_DEFAULTS: WorkGateSettings = { slots: 2, queue: 16, maxWaitMs: 30_000, retryAfterS: 5 };

interface Waiter {
  start(): void;
  request: boolean;
}

/** A slot held until `release()` (which may be called more than once). */
export type Lease = { release(): void };

export interface AcquireOptions {
  /** Wait at most this long (default the gate's maxWaitMs). */
  maxWaitMs?: number;
  /** Aborted while waiting (the client went away): the place in the queue is given up. */
  signal?: AbortSignal;
}

export class WorkGate {
  readonly s: WorkGateSettings;
  private readonly clock: Clock;
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Most pieces of work seen running at once (tests and the bench read it). */
  peak = 0;

  constructor(clock: Clock, s: Partial<WorkGateSettings> = {}) {
    this.clock = clock;
    this.s = { ...WORK_GATE_DEFAULTS, ...s };
  }

  get active(): number {
    return this.running;
  }
  get queued(): number {
    return this.waiting.length;
  }

  /** A request's work: queued up to the depth, else 10429. */
  async request<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const lease = await this.acquire(what);
    try {
      return await fn();
    } finally {
      lease.release();
    }
  }

  /** Background work: waits for its slot however long the queue is. */
  async background<T>(fn: () => Promise<T>): Promise<T> {
    const lease = await this.wait('', false, {});
    try {
      return await fn();
    } finally {
      lease.release();
    }
  }

  /** A request's slot held across several steps (a large request body, then its document
   *  check): queued up to the depth, else 10429; released by the caller. */
  acquire(what: string, o: AcquireOptions = {}): Promise<Lease> {
    return this.wait(what, true, o);
  }

  private async wait(what: string, request: boolean, o: AcquireOptions): Promise<Lease> {
    if (o.signal?.aborted) throw this.busy(what, 'the request went away');
    if (this.running >= this.s.slots) {
      const queuedRequests = this.waiting.filter((w) => w.request).length;
      if (request && queuedRequests >= this.s.queue)
        throw this.busy(what, `the queue is full, ${this.s.queue} waiting`);
      const maxWaitMs = o.maxWaitMs ?? this.s.maxWaitMs;
      await new Promise<void>((start, refuse) => {
        const leave = (why: string) => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) {
            this.waiting.splice(i, 1);
            refuse(this.busy(what, why));
          }
        };
        const onAbort = () => {
          timer?.cancel();
          leave('the request went away');
        };
        const w: Waiter = {
          request,
          start: () => {
            timer?.cancel();
            o.signal?.removeEventListener('abort', onAbort);
            start();
          },
        };
        const timer = request
          ? this.clock.setTimer(() => {
              o.signal?.removeEventListener('abort', onAbort);
              leave(`no slot came free within ${Math.round(maxWaitMs / 1000)} s`);
            }, maxWaitMs)
          : undefined;
        o.signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(w);
      });
    } else {
      this.running++;
    }
    this.peak = Math.max(this.peak, this.running);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        // The slot passes straight to the next in line (running stays counted).
        const next = this.waiting.shift();
        if (next) next.start();
        else this.running--;
      },
    };
  }

  private busy(what: string, why: string): ApiError {
    return new ApiError(
      'SERVER_BUSY',
      `this server node is busy with document and image work (${this.s.slots} at once; ${why}); ${what} was not started: try again after ${this.s.retryAfterS} s`,
      { retry_after: this.s.retryAfterS },
    );
  }
}
