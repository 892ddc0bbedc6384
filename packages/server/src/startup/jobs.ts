// The delayed-work step of a start (server.ts): every kind of job the jobs table holds gets its
// handler here (docs/jobs.md): task expiry and unacknowledged creates, the jobs each task kind
// declares (print counts, recognition pages and assembly: modules/kinds.ts), device events,
// rollouts, callback delivery and retention.
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { JobRepository } from '../jobs/repository.ts';
import type { JobRunner } from '../jobs/runner.ts';
import type { Metrics } from '../metrics/registry.ts';
import { callbackDelivery } from '../modules/callbacks/delivery.ts';
import { callbackRetention, scheduleRetention, type CallbackRetentionDeps } from '../modules/callbacks/retention.ts';
import { undiciTransport, type Transport } from '../modules/callbacks/transport.ts';
import { createGuardedAgent } from '../net/guarded-agent.ts';
import type { Repositories, Services } from '../services.ts';
import type { Cleanup } from './cleanup.ts';

/** Completed callbacks are looked for hourly: retention is counted in days. */
export const RETENTION_SWEEP_MS = 3_600_000;

export interface JobStepDeps {
  config: Config;
  services: Services;
  repos: Repositories;
  jobRunner: JobRunner;
  jobRepo: JobRepository;
  jobs: Jobs;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  cleanup: Cleanup;
  /** Replaces the HTTP transport of callback delivery (tests). */
  callbackTransport: Transport | undefined;
}

/** Registers every job handler; returns the callback retention sweep (RunningServer.sweepCallbacks). */
export async function registerJobs(d: JobStepDeps): Promise<CallbackRetentionDeps> {
  const { config, services, jobRunner, clock, log, metrics } = d;
  jobRunner.register(services.lifecycle.expiryHandler());
  jobRunner.register(services.lifecycle.unackedHandler());
  jobRunner.register(services.devices.unboundHandler());
  // Each task kind's jobs, as its declaration lists them (modules/kinds.ts).
  for (const handler of services.kinds.jobs) jobRunner.register(handler);
  jobRunner.register(services.deviceEvents.handler());
  jobRunner.register(services.deviceEvents.sweepHandler());
  jobRunner.register(services.rollouts.handler());
  // Stopped after the HTTP app (no new work) and before the database (it gives claims back);
  // the kinds' own work (recognition's engine threads) after the runner.
  const callbackAgent = createGuardedAgent({
    allowPrivateNetworks: config.allowPrivateNetworks,
    connectTimeoutMs: config.callbackTimeoutMs,
  });
  d.cleanup.push(async () => {
    await jobRunner.stop();
    await callbackAgent.destroy();
    await services.kinds.close();
  });
  jobRunner.register(
    callbackDelivery({
      repo: d.repos.callbacks,
      jobs: d.jobRepo,
      clock,
      log,
      transport: d.callbackTransport ?? undiciTransport(callbackAgent, { clock }),
      settings: {
        timeoutMs: config.callbackTimeoutMs,
        retryDelaysMs: config.callbackRetryDelaysMs,
        concurrency: config.callbackConcurrency,
        perApplication: config.callbackPerApplication,
        nodeId: config.nodeId,
        leaseMarginMs: config.callbackClaimMarginMs,
      },
      metrics: {
        attempt: (result, seconds) => {
          metrics.callbackAttempts.inc({ result });
          metrics.callbackAttemptDuration.observe(seconds);
        },
        final: (outcome) => metrics.callbackDeliveries.inc({ outcome }),
      },
    }),
  );
  const retention: CallbackRetentionDeps = {
    repo: d.repos.callbacks,
    clock,
    log,
    retentionMs: config.callbackRetentionMs,
    intervalMs: RETENTION_SWEEP_MS,
  };
  jobRunner.register(callbackRetention(retention));
  await scheduleRetention(d.jobs, retention);
  return retention;
}
