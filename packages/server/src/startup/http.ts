// The HTTP step of a start (server.ts): the metrics listener when /metrics has a port of its own,
// the Fastify app (app.ts) with its rate-limit sweep, and the listening socket. The box link and
// the jobs run before it, so the first request finds them.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../app.ts';
import type { Broker } from '../broker/types.ts';
import { EmbeddedBroker } from '../broker/embedded-broker.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { startMetricsListener } from '../http/metrics-listener.ts';
import { rateLimitSweep, scheduleRateLimitSweep } from '../http/rate-limit-sweep.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { JobRunner } from '../jobs/runner.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { CredentialHooks } from '../modules/devices/service.ts';
import type { SecretBox } from '../secret-box.ts';
import type { Services } from '../services.ts';
import type { LocalBlobStore } from '../storage/local-store.ts';
import { listenError } from '../startup-error.ts';
import type { Cleanup } from './cleanup.ts';
import { RETENTION_SWEEP_MS } from './jobs.ts';

export interface HttpStepDeps {
  config: Config;
  db: Db;
  box: SecretBox;
  broker: Broker;
  services: Services;
  credentialHooks: CredentialHooks;
  localBlobs: LocalBlobStore | undefined;
  jobRunner: JobRunner;
  jobs: Jobs;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  cleanup: Cleanup;
  publicUrl: () => string;
}

export interface ServingHttp {
  app: FastifyInstance;
  /** http://host:port the API listens on. */
  url: string;
  metricsUrl: string | undefined;
}

export async function serveHttp(d: HttpStepDeps): Promise<ServingHttp> {
  const { config, clock, log, cleanup } = d;
  const brokerClients = () => (d.broker instanceof EmbeddedBroker ? d.broker.connectedClients : undefined);
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    const port = config.metricsPort;
    const listener = await startMetricsListener({
      host: config.metricsHost,
      port,
      token: config.metricsToken,
      metrics: d.metrics,
      brokerClients,
    }).catch((e: unknown) => {
      throw listenError(
        e,
        'the metrics listener',
        config.metricsHost,
        port,
        'BOXHUB_METRICS_PORT',
        'BOXHUB_METRICS_HOST',
      );
    });
    metricsUrl = listener.url;
    cleanup.push(() => listener.close());
  }
  const { app, limits } = await buildApp({
    credentialHooks: d.credentialHooks,
    secretBox: d.box,
    db: d.db,
    services: d.services,
    metrics: d.metrics,
    logger: log,
    bodyLimit: config.bodyLimit,
    printBodyLimit: config.printBodyLimit,
    brokerClients,
    clock,
    // The /blobs routes serve the local store only; with S3, URLs point at the bucket.
    ...(d.localBlobs ? { blobs: { store: d.localBlobs, clock, maxBytes: config.blobMaxBytes } } : {}),
    observability: { metricsOnMain: config.metricsPort === undefined, metricsToken: config.metricsToken },
    rateLimits: config.rateLimits,
    trustProxy: config.trustProxy,
    operatorToken: config.operatorToken,
    directMaxPageBytes: config.directMaxPageBytes,
    publicUrl: d.publicUrl,
  });
  cleanup.push(() => app.close());
  const limitSweep = { shared: limits.shared, clock, log, intervalMs: RETENTION_SWEEP_MS };
  d.jobRunner.register(rateLimitSweep(limitSweep));
  await scheduleRateLimitSweep(d.jobs, limitSweep);
  d.jobRunner.start();
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (e) {
    throw listenError(e, 'the HTTP API', config.host, config.port, 'PORT', 'HOST');
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  return { app, url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`, metricsUrl };
}
