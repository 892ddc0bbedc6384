// Where a scan is, told to the server as pages come (docs/scanning.md, "Progress"): one
// scan.progress request in flight at a time, and only the newest counts go next, so a fast
// scanner or a slow link costs one small message per round trip, never a queue. Not durable: a
// report that is lost is overtaken by the next one, and the items carry the counts that are kept.
import type { ScanProgressParams } from '@boxhub/protocol';

export class ScanProgressReporter {
  private latest: ScanProgressParams | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;
  private readonly send: (p: ScanProgressParams) => Promise<unknown>;

  constructor(send: (p: ScanProgressParams) => Promise<unknown>) { this.send = send; }

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
  async flushed(): Promise<void> { await this.sending; }

  private async pump(): Promise<void> {
    while (this.latest) {
      const p = this.latest;
      this.latest = undefined;
      // Offline, or no reply in time: the next report (or the item) says it again.
      await this.send(p).catch(() => undefined);
    }
    this.sending = undefined;
  }
}
