// Admission control for box logins on the embedded broker (docs/configuration.md, "Box link";
// docs/box-protocol.md, "Reconnect"). After a restart every box of the node dials in within
// seconds; each login reads the database and each new session writes the box's presence and
// state. Taking them all at once queues that work behind itself until keepalives and the API
// stall.
//
// Three limits: logins being checked at once (`concurrency`); logins taken per second, a token
// bucket of `rate` tokens a second holding at most `burst` (0: no rate limit); and the node's
// own delay (`maxLagMs`): while its event loop runs late by more than that, it is already behind
// on what it has taken (the API waits too), whatever the rate says, so it takes no more.
//
// A login past them waits its turn, first come first served, for up to `waitMs`, at most `queue`
// of them; past that it is refused with CONNACK 3 (server unavailable: the only "not now" MQTT
// 3.1.1 has; the agent backs off and retries). Refused at once, every login past the rate drew a
// longer delay and the last boxes of a 10,000-box storm came back 20 s after the node had room
// for them (bench/README.md, "reconnect-storm"); a wait costs a socket and a few hundred bytes,
// and it is well inside the box's 30 s wait for its CONNACK.
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';

export interface AdmissionLimits {
  concurrency: number;
  rate: number;
  burst: number;
  maxLagMs?: number;
  /** How long a login may wait for room (0 or absent: refused at once). */
  waitMs?: number;
  /** Logins waiting at most; past it one is refused at once. */
  queue?: number;
}
export type Admitted = { ok: true; leave: () => void } | { ok: false; reason: 'busy' | 'rate' | 'lag' };
type Refusal = Extract<Admitted, { ok: false }>;

/** How often waiting logins look for room while none has left (tokens come back with time). */
const PUMP_MS = 10;

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
          if (this.waiting.length) setImmediate(() => this.pump());
        }
      },
    };
  }

  /**
   * A login arrives and may wait its turn: taken once there is room (after the logins that came
   * before it), or refused when the queue is full or its wait (`waitMs`, on the clock) ran out.
   */
  admit(): Promise<Admitted> {
    const wait = this.limits.waitMs ?? 0;
    if (this.waiting.length === 0) {
      const now = this.enter();
      if (now.ok || wait <= 0 || (this.limits.queue ?? Infinity) <= 0) return Promise.resolve(now);
    } else if (this.waiting.length >= (this.limits.queue ?? Infinity)) {
      return Promise.resolve(this.waiting[0]!.refusal);
    }
    return new Promise<Admitted>((resolve) => {
      this.waiting.push({ resolve, until: this.clock.now() + wait, refusal: { ok: false, reason: 'busy' } });
      this.pumpLater();
    });
  }

  /** Logins waiting for room. */
  get queued(): number {
    return this.waiting.length;
  }

  private readonly waiting: { resolve: (a: Admitted) => void; until: number; refusal: Refusal }[] = [];
  private pumpTimer: NodeJS.Timeout | undefined;

  /** Lets the waiting in, first come first served, while there is room; refuses those out of time. */
  private pump(): void {
    while (this.waiting.length) {
      const w = this.waiting[0]!;
      const r = this.enter();
      if (r.ok) {
        this.waiting.shift();
        w.resolve(r);
        continue;
      }
      w.refusal = r;
      // Nobody behind the first gets in before it, so the first's refusal answers for all
      // whose time ran out too.
      if (this.clock.now() < w.until) break;
      this.waiting.shift();
      w.resolve(r);
    }
    if (this.waiting.length) this.pumpLater();
  }

  private pumpLater(): void {
    if (this.pumpTimer) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = undefined;
      this.pump();
    }, PUMP_MS);
  }

  /** Refuses every login still waiting (the broker is closing). */
  close(): void {
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.pumpTimer = undefined;
    for (const w of this.waiting.splice(0)) w.resolve(w.refusal);
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
