// The one retrying loop of every transfer the box makes (docs/box-protocol.md, "Jobs"): a scan
// item's upload, a print file's download, a direct-transfer batch, a release's download. Each
// attempt says what came of it: done (a value that ends the loop: success, or a failure that is
// final), again (wait with backoff, then try again) or at once (try again without waiting, as
// after a signed URL expired). What the attempt does and what ends it stay with the caller; the
// wait, its backoff and its ending early when the job stops are here once.
import type { Backoff } from '../timing/backoff.ts';
import { pause } from '../timing/pause.ts';

export type Attempt<T> =
  | { done: T }
  /** Wait, then try again. `afterMs`: a wait the peer asked for (Retry-After). */
  | { again: string; afterMs?: number }
  /** Try again at once. */
  | { now: true };

export interface RetryOptions<T> {
  /** Attempt `n` (from 1). */
  attempt: (n: number) => Promise<Attempt<T>>;
  /** Delays between attempts; without it the next attempt starts at once. */
  backoff?: Backoff;
  /** Ends a wait early; the loop then ends with `aborted`. */
  signal?: AbortSignal;
  /** Checked before each attempt and after each wait; its value ends the loop. */
  aborted?: (why: string | undefined) => T | Promise<T>;
  /** The wait after a failed attempt, from the backoff's next delay and the peer's wish. */
  delay?: (backoffMs: number, afterMs: number | undefined) => number;
  /** Before the wait: a value ends the loop instead (a give-up); undefined waits. */
  waiting?: (why: string, n: number, delayMs: number) => { done: T } | undefined;
}

/** Runs attempts until one is done (or the signal aborts, when `aborted` is given). */
export async function retry<T>(o: RetryOptions<T>): Promise<T> {
  let why: string | undefined;
  for (let n = 1; ; n++) {
    if (o.signal?.aborted && o.aborted) return o.aborted(why);
    const r = await o.attempt(n);
    if ('done' in r) return r.done;
    if ('now' in r) continue;
    why = r.again;
    const next = o.backoff?.next() ?? 0;
    const delay = o.delay ? o.delay(next, r.afterMs) : next;
    const stop = o.waiting?.(why, n, delay);
    if (stop) return stop.done;
    if (o.backoff) await pause(delay, o.signal ?? new AbortController().signal);
  }
}

/** An HTTP status worth another attempt: the peer is busy or failing for now. */
export const retryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;
