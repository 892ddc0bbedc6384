// Ended windows of the shared rate-limit table (get_uuid misses, http/rate-limit-stores.ts)
// are deleted by a periodic job on the jobs table (docs/jobs.md), so one node at a time does
// it, on the injected clock, with no timer loop of its own.
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { JobHandler } from '../jobs/runner.ts';
import type { DbWindows } from './rate-limit-stores.ts';

export const RATE_LIMIT_SWEEP_JOB = 'ratelimits.sweep';

/** No shared window is longer than a day (docs/configuration.md, BOXHUB_RATE_LIMIT_*). */
const LONGEST_WINDOW_MS = 86_400_000;

export interface RateLimitSweepDeps {
  shared: DbWindows;
  clock: Clock;
  log: Logger;
  intervalMs: number;
}

export function rateLimitSweep(d: RateLimitSweepDeps): JobHandler {
  return {
    kind: RATE_LIMIT_SWEEP_JOB,
    concurrency: 1,
    leaseMs: 10 * 60_000,
    async run() {
      await d.shared
        .purge(d.clock.now() - LONGEST_WINDOW_MS)
        .catch((err: unknown) => d.log.warn({ err }, 'rate-limit sweep failed; trying again next interval'));
      return { next: 'again', at: d.clock.now() + d.intervalMs };
    },
  };
}

/** Makes sure the periodic sweep exists (every node calls it; the first one's schedule stands). */
export async function scheduleRateLimitSweep(
  jobs: Jobs,
  d: Pick<RateLimitSweepDeps, 'clock' | 'intervalMs'>,
): Promise<void> {
  await jobs.schedule(jobs.db, { kind: RATE_LIMIT_SWEEP_JOB, ref: 'sweep', runAt: d.clock.now() + d.intervalMs });
}
