// Admission control for box logins on the embedded broker (docs/configuration.md, "Box link";
// docs/box-protocol.md, "Reconnect"). After a restart every box of the node dials in within
// seconds; each login reads the database and each new session writes the box's presence and
// state. Taking them all at once queues that work behind itself until keepalives and the API
// stall. Past either limit a login is refused at once with CONNACK 3 (server unavailable: the
// only "not now" MQTT 3.1.1 has; the agent backs off and retries), which costs a few bytes.
//
// Three limits: logins being checked at once (`concurrency`); logins taken per second, a token
// bucket of `rate` tokens a second holding at most `burst` (0: no rate limit); and the node's
// own delay (`maxLagMs`): while its event loop runs late by more than that, it is already behind
// on what it has taken (the API waits too), whatever the rate says, so it takes no more.
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';

export interface AdmissionLimits {
  concurrency: number;
  rate: number;
  burst: number;
  maxLagMs?: number;
}
export type Admitted = { ok: true; leave: () => void } | { ok: false; reason: 'busy' | 'rate' | 'lag' };

/** How late this process's event loop runs: a timer every `periodMs` notes how late it fired. */
export class LoopLag {
  private last = performance.now();
  private late = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly periodMs: number;
  constructor(periodMs = 20) {
    this.periodMs = periodMs;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.late = Math.max(0, now - this.last - periodMs);
      this.last = now;
    }, periodMs);
    this.timer.unref();
  }

  /** The last tick's delay, or longer when the loop has not come round to the timer since. */
  get ms(): number {
    return Math.max(this.late, performance.now() - this.last - this.periodMs);
  }

  close(): void {
    clearInterval(this.timer);
  }
}

export class Admission {
  private inFlight = 0;
  private tokens: number;
  private refilledAt: number;
  private readonly limits: AdmissionLimits;
  private readonly clock: Clock;

  private readonly lag: () => number;

  constructor(limits: AdmissionLimits, clock: Clock, lag: () => number = () => 0) {
    this.limits = limits;
    this.clock = clock;
    this.lag = lag;
    this.tokens = limits.burst;
    this.refilledAt = clock.now();
  }

  /** A login arrives: taken (call leave() once it is checked) or refused with a reason. */
  enter(): Admitted {
    if (this.limits.concurrency > 0 && this.inFlight >= this.limits.concurrency) return { ok: false, reason: 'busy' };
    if (this.limits.maxLagMs && this.lag() > this.limits.maxLagMs) return { ok: false, reason: 'lag' };
    if (this.limits.rate > 0) {
      this.refill();
      if (this.tokens < 1) return { ok: false, reason: 'rate' };
      this.tokens -= 1;
    }
    this.inFlight++;
    let left = false;
    return {
      ok: true,
      leave: () => {
        if (!left) {
          left = true;
          this.inFlight--;
        }
      },
    };
  }

  get checking(): number {
    return this.inFlight;
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.refilledAt);
    this.refilledAt = now;
    this.tokens = Math.min(this.limits.burst, this.tokens + (elapsed * this.limits.rate) / 1000);
  }
}
