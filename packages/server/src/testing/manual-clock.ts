// A clock that moves only when a test says so. advance() jumps to the new time, then fires
// every timer that is due by then, in due order, each followed by a few turns of the event loop
// so the work it starts (a claim, an HTTP attempt) can run. A jump, not a walk: a poll timer
// that re-arms itself does not fire once per interval of a 31-day advance, and work started by
// a timer sees the new time (move in steps, one advance per interval, to see each moment).
import type { Clock, Timer } from '../clock.ts';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly pending: Pending[] = [];

  constructor(start = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const p: Pending = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.pending.push(p);
    return {
      cancel: () => {
        p.cancelled = true;
      },
    };
  }

  /** Timers not yet fired or cancelled. */
  get timers(): number {
    return this.pending.filter((p) => !p.cancelled).length;
  }

  /**
   * Jumps to the real time if this clock is behind it. For rigs with simulated boxes: a box
   * refuses a command whose expires_at (server clock + the command timeout) is already past by
   * its own, real clock (docs/box-protocol.md), as a box would whose server's clock lags.
   */
  async catchUp(): Promise<void> {
    const behind = Date.now() - this.t;
    if (behind > 0) await this.advance(behind);
  }

  /** Moves time forward by `ms`, then fires every timer due by then, in due order. */
  async advance(ms: number): Promise<void> {
    this.t += ms;
    for (;;) {
      const next = this.pending
        .filter((p) => !p.cancelled && p.at <= this.t)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      next.cancelled = true;
      this.pending.splice(this.pending.indexOf(next), 1);
      next.fn();
      await settle();
    }
    for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i]!.cancelled) this.pending.splice(i, 1);
    await settle();
  }
}

/** A few turns of the event loop: lets promise chains and setImmediate callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
