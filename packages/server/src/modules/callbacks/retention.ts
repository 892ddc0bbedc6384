// Keeps the callback outbox from growing forever: completed callbacks (delivered or finally
// failed) and their attempts are deleted once they are older than the retention period
// (BOXHUB_CALLBACK_RETENTION_DAYS, default 30; 0 keeps everything). Every node sweeps; the
// deletes are idempotent and skip rows another node holds, so no leader is needed.
// Small batches keep each transaction short: the worker's claims are never blocked for long.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { CallbackRepository } from './repository.ts';

export interface CallbackRetentionDeps {
  repo: CallbackRepository;
  clock: Clock;
  log: Logger;
  /** Age (since completion) after which a callback is deleted; 0 disables the sweep. */
  retentionMs: number;
  /** Time between sweeps. */
  intervalMs: number;
  /** Rows deleted per statement. */
  batchSize?: number;
}

export class CallbackRetention {
  private readonly d: Required<CallbackRetentionDeps>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** Set by stop(): no more sweeps, and a running one ends after its current batch. */
  private stopped = false;

  constructor(deps: CallbackRetentionDeps) {
    this.d = { batchSize: 1000, ...deps };
  }

  start(): void {
    if (this.d.retentionMs <= 0) return;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Deletes everything past retention now; returns how many callbacks went. */
  sweep(): Promise<number> {
    if (this.d.retentionMs <= 0) return Promise.resolve(0);
    this.running ??= this.deleteAll().finally(() => { this.running = undefined; });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sweep()
        .catch((err: unknown) => this.d.log.warn({ err }, 'callback retention sweep failed; trying again next interval'))
        .finally(() => this.schedule());
    }, this.d.intervalMs);
    this.timer.unref();
  }

  private async deleteAll(): Promise<number> {
    const before = this.d.clock.now() - this.d.retentionMs;
    let total = 0;
    for (;;) {
      const n = await this.d.repo.purge(before, this.d.batchSize);
      total += n;
      if (n < this.d.batchSize || this.stopped) break;
    }
    if (total > 0) this.d.log.info({ deleted: total, before }, 'callback retention: deleted completed callbacks');
    return total;
  }
}
