// Where a scan is, told to the server as pages come (docs/scanning.md, "Progress"): one
// scan.progress request in flight at a time, at most one every `minIntervalMs`, and only the
// newest counts go next, so a fast scanner or a slow link costs a few small messages a second,
// never a queue. Not durable: a report that is lost is overtaken by the next one, and the items
// carry the counts that are kept.
import type { ScanProgressParams } from '@boxhub/protocol';

export interface ScanProgressOptions {
  send: (p: ScanProgressParams) => Promise<unknown>;
  /** Least time between two sends (default 250 ms: 4 a second, a page at a time for any ADF). */
  minIntervalMs?: number;
  /** Waits `ms` (tests inject their own). */
  wait?: (ms: number) => Promise<void>;
  now?: () => number;
}

export class ScanProgressReporter {
  private latest: ScanProgressParams | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;
  private lastSent = -Infinity;
  private readonly o: Required<ScanProgressOptions>;

  constructor(o: ScanProgressOptions) {
    this.o = {
      minIntervalMs: 250,
      wait: (ms) => new Promise((r) => setTimeout(r, ms).unref()),
      now: () => performance.now(),
      ...o,
    };
  }

  report(p: ScanProgressParams): void {
    if (this.closed) return;
    this.latest = p;
    this.sending ??= this.pump();
  }

  /** Nothing more is sent (the task was stopped or has ended). */
  close(): void {
    this.closed = true;
    this.latest = undefined;
  }

  /** Resolves once what was reported has been sent (or given up on). */
  async flushed(): Promise<void> {
    await this.sending;
  }

  private async pump(): Promise<void> {
    while (this.latest) {
      const early = this.lastSent + this.o.minIntervalMs - this.o.now();
      if (early > 0) await this.o.wait(early);
      const p = this.latest;
      this.latest = undefined;
      if (!p || this.closed) break;
      this.lastSent = this.o.now();
      // Offline, or no reply in time: the next report (or the item) says it again.
      await this.o.send(p).catch(() => undefined);
    }
    this.sending = undefined;
  }
}
