// The running service: database, box link, jobs and HTTP, started in that order by the steps in
// startup/ (each opens what it needs and says how to close it). `boxhub serve` and the tests both
// start it here.
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { BoxGateway } from './box-link/gateway.ts';
import type { Broker } from './broker/types.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Db } from './db/connect.ts';
import type { Jobs } from './jobs/jobs.ts';
import type { JobRunner } from './jobs/runner.ts';
import { fleetMetrics } from './modules/fleet/metrics.ts';
import { createMetrics } from './metrics/registry.ts';
import { sweepCallbacks } from './modules/callbacks/retention.ts';
import type { Transport } from './modules/callbacks/transport.ts';
import type { CredentialHooks, RegisteredDevice } from './modules/devices/service.ts';
import { createGuardedAgent } from './net/guarded-agent.ts';
import { createServices, type Repositories, type Services } from './services.ts';
import { openBlobs } from './startup/blobs.ts';
import { startBoxLink } from './startup/box-link.ts';
import { startBroker } from './startup/broker.ts';
import { Cleanup } from './startup/cleanup.ts';
import { openData } from './startup/data.ts';
import { serveHttp } from './startup/http.ts';
import { registerJobs } from './startup/jobs.ts';
import { serviceSettings } from './startup/settings.ts';
import type { StartupError } from './startup-error.ts';
import type { BlobStore } from './storage/blob-store.ts';
import { WorkGate } from './work-gate.ts';

export interface RunningServer {
  config: Config;
  app: FastifyInstance;
  /** http://host:port the HTTP API listens on. */
  url: string;
  /** mqtt://host:port boxes connect to (embedded broker), or the external broker's URL. */
  mqttUrl: string;
  db: Db;
  broker: Broker;
  gateway: BoxGateway;
  repos: Repositories;
  services: Services;
  /** Runs every kind of delayed work from the jobs table (jobs/runner.ts). */
  jobRunner: JobRunner;
  jobs: Jobs;
  /** S3 when BOXHUB_S3_BUCKET is set, otherwise local files under the data dir (docs/storage.md). */
  blobs: BlobStore;
  /** Deletes completed callbacks past retention now (the hourly job does it too). */
  sweepCallbacks(): Promise<number>;
  log: Logger;
  /** http://host:port of the metrics listener, when BOXHUB_METRICS_PORT gives /metrics one of its own. */
  metricsUrl: string | undefined;
  /** Registers (provisions) a box: database row plus broker login. */
  registerDevice(input: { code: string; model: string }): Promise<RegisteredDevice>;
  /** What the broker does when a box's credentials change (DeviceService.rotateSecret / revokeSecret). */
  credentialHooks: CredentialHooks;
  /** Resolves when the service can no longer run: the external broker was found lacking what
   *  boxhub needs after a reconnect (broker/capabilities.ts). The caller stops it. */
  failed: Promise<StartupError>;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
  /** PostgreSQL schema to use (tests isolate themselves this way). */
  pgSchema?: string;
  /** Replaces the HTTP transport of callback delivery (tests). */
  callbackTransport?: Transport;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock;
  const log = opts.logger ?? pino({ level: config.logLevel });
  let failWith: (e: StartupError) => void = () => undefined;
  const failed = new Promise<StartupError>((resolve) => {
    failWith = resolve;
  });
  const cleanup = new Cleanup();
  try {
    const { box, db, repos } = await openData(config, log, cleanup, opts.pgSchema);
    const metrics = createMetrics();
    const { broker, open, markedOffline, onLogin } = await startBroker({
      config,
      repos,
      dataVersion: db.dataVersion,
      clock,
      log,
      metrics,
      cleanup,
      fail: (e) => failWith(e),
    });

    const { gateway, events, requests, jobRepo, jobRunner, jobs } = await startBoxLink({
      config,
      db,
      repos,
      broker,
      onLogin,
      clock,
      log,
      cleanup,
    });
    // The public base URL: BOXHUB_PUBLIC_URL, else the address the API listens on (known last).
    let baseUrl = config.publicUrl ?? '';
    const publicUrl = () => baseUrl;
    const { blobs, local: localBlobs } = await openBlobs(config, clock, log, cleanup, publicUrl);
    // User-supplied URLs the server fetches itself (print file_url) go through the URL guard.
    const fetcher = createGuardedAgent({
      allowPrivateNetworks: config.allowPrivateNetworks,
      connectTimeoutMs: 10_000,
      connections: 16,
    });
    cleanup.push(() => fetcher.destroy());
    // Document and image work (PDF checks, recognition pages) is bounded node-wide (work-gate.ts).
    const work = new WorkGate(clock, config.work);
    const services = createServices(
      repos,
      { gateway, events, requests, jobs, blobs, clock, log, fetcher, secretBox: box, publicUrl, work },
      serviceSettings(config, db, log),
    );
    fleetMetrics(metrics.registry, services.fleet, services.rollouts);
    // Box messages from here on, when what handles them is in place: the events' appliers and the
    // requests' handlers (the task kinds), the state and presence listeners. On an external
    // broker the boxes are connected and other nodes up: a node gets its share of their messages
    // the moment it subscribes; before, an event could arrive with no applier yet (a restarted
    // node in the chaos soak, docs/chaos.md).
    await gateway.start();
    // Boxes this start marked offline: device.offline for those that do not come back within the window.
    await services.deviceEvents.seenMany(markedOffline);
    const retention = await registerJobs({
      config,
      services,
      repos,
      jobRunner,
      jobRepo,
      jobs,
      clock,
      log,
      metrics,
      cleanup,
      callbackTransport: opts.callbackTransport,
    });
    const credentialHooks = credentialHooksOf(broker);
    // Boxes last, when everything that handles them is in place.
    const mqttUrl = await open();
    const { app, url, metricsUrl } = await serveHttp({
      config,
      db,
      box,
      broker,
      services,
      credentialHooks,
      localBlobs,
      jobRunner,
      jobs,
      metrics,
      clock,
      log,
      cleanup,
      publicUrl,
    });
    if (!baseUrl) baseUrl = url;
    return {
      config,
      app,
      url,
      mqttUrl,
      db,
      broker,
      gateway,
      repos,
      services,
      jobRunner,
      jobs,
      blobs,
      log,
      metricsUrl,
      sweepCallbacks: () => sweepCallbacks(retention),
      registerDevice: (input) => services.devices.register(input, credentialHooks.provision),
      credentialHooks,
      failed,
      close: () => cleanup.close(),
    };
  } catch (e) {
    await cleanup.close();
    throw e;
  }
}

/** What the broker does when a box's credentials change: the embedded broker checks logins
 *  against the database itself; an external one (Mosquitto's dynamic security) is told. */
function credentialHooksOf(broker: Broker): CredentialHooks {
  const provision = broker.provisionDevice?.bind(broker);
  const deprovision = broker.deprovisionDevice?.bind(broker);
  const disconnect = broker.disconnectDevice?.bind(broker);
  return {
    ...(provision ? { provision: (d: { uuid: string; secret: string }) => provision(d.uuid, d.secret) } : {}),
    ...(deprovision ? { deprovision: (uuid: string) => deprovision(uuid) } : {}),
    ...(disconnect ? { disconnect: (uuid: string) => disconnect(uuid) } : {}),
  };
}
