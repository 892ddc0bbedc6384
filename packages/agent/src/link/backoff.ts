// Reconnect delays: exponential with "full jitter" (AWS architecture blog, "Exponential
// Backoff And Jitter"), so a thousand boxes that lost the broker together do not return in
// lockstep. Randomness is injected for tests.
export interface BackoffOptions { baseMs: number; maxMs: number; random?: () => number }

export class Backoff {
  private attempt = 0;
  private readonly o: Required<BackoffOptions>;
  constructor(o: BackoffOptions) { this.o = { random: Math.random, ...o }; }

  /** Delay before the next attempt: uniform in [0, min(max, base·2^attempt)], at least 100 ms. */
  next(): number {
    const cap = Math.min(this.o.maxMs, this.o.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.max(100, Math.floor(this.o.random() * cap));
  }

  reset(): void { this.attempt = 0; }
  get attempts(): number { return this.attempt; }
}
