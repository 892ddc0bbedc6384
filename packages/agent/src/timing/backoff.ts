// Reconnect delays: exponential with "full jitter" (AWS architecture blog, "Exponential
// Backoff And Jitter"), so a thousand boxes that lost the broker together do not return in
// lockstep. Randomness and the clock are injected for tests.
//
// Reset rule (docs/box-protocol.md, "Reconnect"): a success alone does not start again from the
// base. A connection that is taken and then dropped at once (a broker that accepts and falls
// over, a node that stalls) would otherwise send every box back at the base delay, in step, and
// the storm would repeat. The attempt count goes back to 0 only once a connection has stayed
// up for `stableMs`.
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** How long a connection must last before the next loss starts again from the base (0: at once). */
  stableMs?: number;
  random?: () => number;
  now?: () => number;
}

/** Delays are never shorter than this: a refusal answered in microseconds must not spin. */
export const MIN_DELAY_MS = 100;

export class Backoff {
  private attempt = 0;
  private upSince: number | undefined;
  private readonly o: Required<BackoffOptions>;
  constructor(o: BackoffOptions) {
    this.o = { random: Math.random, now: Date.now, stableMs: 0, ...o };
  }

  /** Delay before the next attempt: uniform in [0, min(max, base·2^attempt)], at least 100 ms. */
  next(): number {
    this.settle();
    const cap = Math.min(this.o.maxMs, this.o.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.max(MIN_DELAY_MS, Math.floor(this.o.random() * cap));
  }

  /** The connection is up: the count resets if it is still up `stableMs` from now. */
  succeeded(): void {
    if (this.o.stableMs <= 0) {
      this.reset();
      return;
    }
    this.upSince = this.o.now();
  }

  reset(): void {
    this.attempt = 0;
    this.upSince = undefined;
  }

  /** Attempts counted so far (0 once the current connection has been up `stableMs`). */
  get attempts(): number {
    return this.upSince !== undefined && this.o.now() - this.upSince >= this.o.stableMs ? 0 : this.attempt;
  }

  /** Called when the connection is lost (next()): it counts as stable if it lasted long enough. */
  private settle(): void {
    if (this.upSince === undefined) return;
    if (this.o.now() - this.upSince >= this.o.stableMs) this.attempt = 0;
    this.upSince = undefined;
  }
}
