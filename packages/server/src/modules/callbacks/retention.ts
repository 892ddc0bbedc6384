// Keeps the callback outbox from growing forever: completed callbacks (delivered or finally
// failed) and their attempts are deleted once they are older than the retention period
// (BOXHUB_CALLBACK_RETENTION_DAYS, default 30; 0 keeps everything). The sweep is a periodic
// job (`callbacks.retention`) on the jobs table, so one node at a time runs it, hourly; the
// deletes are idempotent and small batches keep each transaction short.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import type { CallbackRepository } from './repository.ts';

export const RETENTION_JOB = 'callbacks.retention';

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

/** Deletes everything past retention now; returns how many callbacks went. */
export async function sweepCallbacks(d: CallbackRetentionDeps): Promise<number> {
  if (d.retentionMs <= 0) return 0;
  const batch = d.batchSize ?? 1000;
  const before = d.clock.now() - d.retentionMs;
  let total = 0;
  for (;;) {
    const n = await d.repo.purge(before, batch);
    total += n;
    if (n < batch) break;
  }
  if (total > 0) d.log.info({ deleted: total, before }, 'callback retention: deleted completed callbacks');
  return total;
}

export function callbackRetention(d: CallbackRetentionDeps): JobHandler {
  return {
    kind: RETENTION_JOB,
    concurrency: 1,
    leaseMs: 10 * 60_000,
    async run() {
      await sweepCallbacks(d).catch((err: unknown) =>
        d.log.warn({ err }, 'callback retention sweep failed; trying again next interval'),
      );
      return { next: 'again', at: d.clock.now() + d.intervalMs };
    },
  };
}

/** Makes sure the periodic sweep exists (every node calls it; the first one's schedule stands). */
export async function scheduleRetention(
  jobs: Jobs,
  d: Pick<CallbackRetentionDeps, 'clock' | 'retentionMs' | 'intervalMs'>,
): Promise<void> {
  if (d.retentionMs <= 0) return;
  await jobs.schedule(jobs.db, { kind: RETENTION_JOB, ref: 'sweep', runAt: d.clock.now() + d.intervalMs });
}
