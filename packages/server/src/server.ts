// The running service: database, box link, HTTP. main.ts and the tests both start it here.
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp } from './app.ts';
import { BoxGateway } from './box-link/gateway.ts';
import { EmbeddedBroker, type RefusalReason } from './broker/embedded-broker.ts';
import { ExternalBroker } from './broker/external-broker.ts';
import type { Broker } from './broker/types.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Db } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { startMetricsListener } from './http/metrics-listener.ts';
import { rateLimitSweep, scheduleRateLimitSweep } from './http/rate-limit-sweep.ts';
import { createMetrics } from './metrics/registry.ts';
import { fleetMetrics } from './metrics/fleet.ts';
import { callbackDelivery } from './modules/callbacks/delivery.ts';
import { callbackRetention, scheduleRetention, sweepCallbacks } from './modules/callbacks/retention.ts';
import { undiciTransport, type Transport } from './modules/callbacks/transport.ts';
import { Jobs } from './jobs/jobs.ts';
import { JobEventRouter } from './box-link/job-events.ts';
import { BoxRequestRouter } from './box-link/requests.ts';
import type { BlobStore } from './storage/blob-store.ts';
import { LocalBlobStore } from './storage/local-store.ts';
import { S3BlobStore } from './storage/s3-store.ts';
import { blobSecret } from './storage/secret.ts';
import { JobRepository } from './jobs/repository.ts';
import { JobRunner } from './jobs/runner.ts';
import { createGuardedAgent } from './net/guarded-agent.ts';
import { checkSecretKey, openConfiguredDb, openSecretBox } from './deployment.ts';
import { brokerError, databaseError, dataDirError, listenError, StartupError } from './startup-error.ts';
import { SecretKeyError } from './secret-box.ts';
import { sha256, sameHash } from './secrets.ts';
import { RecognitionWorkers } from './modules/recognition/worker.ts';
import { WorkGate } from './work-gate.ts';
import { createRepositories, createServices, type Repositories, type Services } from './services.ts';
import type { CredentialHooks, RegisteredDevice } from './modules/devices/service.ts';
import { SessionWatch } from './broker/session-watch.ts';

/** What the log says when the embedded broker refuses a connection (docs/configuration.md). */
const REFUSED_MESSAGES: Record<RefusalReason, string> = {
  connect_rate: 'box link: too many connection attempts from this address; refusing them until the window ends',
  packet_size: 'box link: packet over BOXHUB_MQTT_MAX_PACKET_BYTES or malformed; connection closed',
  admission_busy: 'box link: as many logins being checked as BOXHUB_MQTT_ADMIT_CONCURRENCY; '
    + 'refusing more with CONNACK 3 (boxes back off)',
  admission_rate: 'box link: logins over BOXHUB_MQTT_ADMIT_RATE a second; refusing more with CONNACK 3 (boxes back off)',
  admission_lag: 'box link: the event loop runs later than BOXHUB_MQTT_ADMIT_MAX_LAG_MS; '
    + 'refusing logins with CONNACK 3 (boxes back off)',
};

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

/** How often the embedded broker's open sessions are checked against changed credentials. */
const SESSION_WATCH_MS = 1000;

/** Completed callbacks are looked for hourly: retention is counted in days. */
const RETENTION_SWEEP_MS = 3_600_000;

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock;
  const log = opts.logger ?? pino({ level: config.logLevel });
  // The data directory holds the SQLite database, the default key file and demo.json, whatever
  // the database engine.
  let box: ReturnType<typeof openSecretBox>;
  try { box = openSecretBox(config); } catch (e) {
    if (e instanceof SecretKeyError) throw new StartupError(e.message, config.secretKey.kind === 'env' ? 'BOXHUB_SECRET_KEY' : 'BOXHUB_SECRET_KEY_FILE', { cause: e });
    throw dataDirError(e, config.dataDir);
  }
  if (config.databaseUrl && config.secretKey.kind === 'file' && !config.secretKey.explicit) {
    log.warn({ keyFile: config.secretKey.path }, 'DATABASE_URL is set and the secret key is this node\'s own file: every node and the CLI need the same key (BOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE)');
  }
  let failWith: (e: StartupError) => void = () => undefined;
  const failed = new Promise<StartupError>((resolve) => { failWith = resolve; });
  let db: Db;
  try { db = await openConfiguredDb(config, opts.pgSchema, (err) => log.warn({ err: err.message }, 'database connection lost; the pool opens another')); } catch (e) { throw databaseError(dataDirError(e, config.dataDir), config.databaseUrl); }
  const cleanup: (() => Promise<void>)[] = [() => db.close()];
  try {
    try { await migrate(db); } catch (e) { throw databaseError(dataDirError(e, config.dataDir), config.databaseUrl); }
    const repos = createRepositories(db, box);
    const sealed = await checkSecretKey(repos.applications, box).catch((e: unknown) => {
      throw e instanceof SecretKeyError ? new StartupError(e.message, 'BOXHUB_SECRET_KEY', { cause: e }) : e;
    });
    if (sealed > 0) log.info({ applications: sealed }, 'callback secrets stored in plain text were encrypted');
    const metrics = createMetrics();

    let broker: Broker;
    let mqttUrl: string;
    let markedOffline: string[] = [];
    let sessions: () => string[] = () => [];
    // Set once the gateway exists; logins checked before that have no messages to route yet.
    let gatewayRef: BoxGateway | undefined;
    const sessionWatch = new SessionWatch({
      sessions: () => sessions(),
      disconnect: (uuid) => broker.disconnectDevice?.(uuid),
      devices: repos.devices,
      ...(db.dataVersion ? { dataVersion: db.dataVersion } : {}),
      onDropped: (uuid) => log.info({ uuid }, 'box session dropped: its secret was rotated or revoked'),
      onError: (err) => log.warn({ err }, 'checking box sessions against their credentials failed'),
    });
    if (config.mqttUrl) {
      const external = await ExternalBroker.connect(config.mqttUrl, config.nodeId, { shareGroup: config.mqttShareGroup }).catch((e: unknown) => { throw brokerError(e); });
      // A broker found lacking after a reconnect: nothing more goes through it, and the service
      // stops (`boxhub serve` exits 1 with the message; docs/box-protocol-broker.md, "Brokers").
      external.onUnfit((e) => {
        log.fatal({ missing: e.missing }, e.message);
        failWith(new StartupError(e.message, 'MQTT_URL', { cause: e }));
      });
      broker = external;
      const u = new URL(config.mqttUrl);
      mqttUrl = `${u.protocol}//${u.host}`;
    } else {
      const embedded = await EmbeddedBroker.start({
        host: config.mqttHost,
        port: config.mqttPort,
        authenticate: async (uuid, secret) => {
          const d = await repos.devices.findByUuid(uuid);
          const hash = sha256(secret);
          if (!d || !sameHash(d.secret_hash, hash)) return false;
          sessionWatch.loggedIn(uuid, hash);
          gatewayRef?.loggedIn(uuid);
          return true;
        },
        onError: (err) => log.error({ err }, 'broker listener error'),
        maxPacketBytes: config.mqttMaxPacketBytes,
        connectLimit: config.mqttConnectLimit,
        admission: config.mqttAdmission,
        clock,
        onRefused: (reason, d) => {
          metrics.brokerRefused.inc({ reason });
          // One line per address and window for a connection flood, one per oversized packet,
          // at most one a second for logins refused by admission control.
          if (d.first) log.warn({ address: d.address, bytes: d.bytes }, REFUSED_MESSAGES[reason]);
        },
      }).catch((e: unknown) => { throw listenError(e, 'the box link (the embedded MQTT broker)', config.mqttHost, config.mqttPort, 'BOXHUB_MQTT_PORT', 'BOXHUB_MQTT_HOST'); });
      broker = embedded;
      mqttUrl = embedded.listenUrl ?? '';
      sessions = () => embedded.sessions();
      const watch = setInterval(() => void sessionWatch.check(), SESSION_WATCH_MS);
      watch.unref();
      cleanup.unshift(async () => clearInterval(watch));
      // This process is the broker, so nobody is connected yet, whatever was recorded before.
      markedOffline = await repos.devices.markAllOffline(clock.now());
    }
    cleanup.unshift(() => broker.close());

    const gateway = new BoxGateway({ broker, devices: repos.devices, clock, nodeId: config.nodeId, log, commandTimeoutMs: config.commandTimeoutMs });
    gatewayRef = gateway;
    await gateway.start();
    cleanup.unshift(async () => gateway.close());
    const jobRepo = new JobRepository(db.kysely, db.dialect);
    const jobRunner = new JobRunner(jobRepo, clock, log, { pollMs: config.jobPollMs, stopWaitMs: config.callbackTimeoutMs });
    const jobs = new Jobs(jobRepo, jobRunner, clock);
    let baseUrl = config.publicUrl ?? '';
    // Several server nodes need S3: a local store's files are on one node's disk only.
    let blobs: BlobStore;
    let localBlobs: LocalBlobStore | undefined;
    if (config.s3) {
      const s3 = config.s3;
      const store = new S3BlobStore({
        target: { endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, pathStyle: s3.pathStyle },
        clock, spoolDir: join(config.dataDir, 'spool'),
      });
      cleanup.unshift(() => store.close());
      blobs = store;
      log.info({ endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, pathStyle: s3.pathStyle }, 'blobs are stored in S3');
    } else {
      // Made here, owner-only: the file server below wants its root to exist.
      try { mkdirSync(join(config.dataDir, 'blobs'), { recursive: true, mode: 0o700 }); } catch (e) { throw dataDirError(e, config.dataDir); }
      blobs = localBlobs = new LocalBlobStore({
        root: join(config.dataDir, 'blobs'), secret: config.blobSecret ?? await blobSecret(config.dataDir), baseUrl: () => baseUrl, clock,
      });
    }
    const events = new JobEventRouter({ db: db.kysely, tasks: repos.tasks, gateway, clock, log });
    const requests = new BoxRequestRouter(gateway, log);
    // User-supplied URLs the server fetches itself (print file_url) go through the URL guard.
    const fetcher = createGuardedAgent({ allowPrivateNetworks: config.allowPrivateNetworks, connectTimeoutMs: 10_000, connections: 16 });
    cleanup.unshift(() => fetcher.destroy());
    // Document and image work (PDF checks, recognition pages) is bounded node-wide (work-gate.ts).
    const work = new WorkGate(clock, config.work);
    const services = createServices(repos, { gateway, events, requests, jobs, blobs, clock, log, fetcher, secretBox: box, publicUrl: () => baseUrl, work }, {
      callbacks: { allowPrivateNetworks: config.allowPrivateNetworks, secretGraceMs: config.callbackSecretGraceMs },
      scan: { taskTtlMs: config.taskTtlMs, downloadUrlTtlMs: config.downloadUrlTtlMs, uploadUrlTtlMs: config.uploadUrlTtlMs, blobMaxBytes: config.blobMaxBytes },
      print: { taskTtlMs: config.taskTtlMs, downloadUrlTtlMs: config.downloadUrlTtlMs, maxFileBytes: config.printMaxFileBytes, fetchTimeoutMs: config.printFetchTimeoutMs, countWaitMs: config.printCountWaitMs },
      recognition: { taskTtlMs: config.taskTtlMs, downloadUrlTtlMs: config.downloadUrlTtlMs, endGraceMs: config.recognitionEndGraceMs },
      deviceEventSettleMs: config.deviceEventSettleMs,
      rollouts: { stepMs: config.rolloutStepMs, sendTimeoutMs: config.commandTimeoutMs },
      ...(db.dataVersion ? { dataVersion: db.dataVersion } : {}),
      onError: (err, what) => log.warn({ err }, `${what} failed`),
    });
    jobRunner.register(services.lifecycle.expiryHandler());
    jobRunner.register(services.lifecycle.unackedHandler());
    jobRunner.register(services.print.count.handler(() => clock.now()));
    jobRunner.register(services.deviceEvents.handler());
    jobRunner.register(services.rollouts.handler());
    fleetMetrics(metrics.registry, services.fleet, services.rollouts);
    // Boxes this start marked offline: device.offline for those that do not come back within the window.
    await services.deviceEvents.seenMany(markedOffline);
    const recognitionWorkers = new RecognitionWorkers(services.recognition, { work, ...(config.recognitionWorkers ? { workers: config.recognitionWorkers } : {}) });
    jobRunner.register(recognitionWorkers.pageHandler());
    jobRunner.register(recognitionWorkers.assembleHandler());
    // Stopped after the HTTP app (no new work) and before the database (it gives claims back).
    const callbackAgent = createGuardedAgent({ allowPrivateNetworks: config.allowPrivateNetworks, connectTimeoutMs: config.callbackTimeoutMs });
    cleanup.unshift(async () => { await jobRunner.stop(); await callbackAgent.destroy(); await recognitionWorkers.close(); });
    jobRunner.register(callbackDelivery({
      repo: repos.callbacks, jobs: jobRepo, clock, log,
      transport: opts.callbackTransport ?? undiciTransport(callbackAgent, { clock }),
      settings: {
        timeoutMs: config.callbackTimeoutMs, retryDelaysMs: config.callbackRetryDelaysMs, concurrency: config.callbackConcurrency,
        perApplication: config.callbackPerApplication, nodeId: config.nodeId, leaseMarginMs: config.callbackClaimMarginMs,
      },
      metrics: {
        attempt: (result, seconds) => { metrics.callbackAttempts.inc({ result }); metrics.callbackAttemptDuration.observe(seconds); },
        final: (outcome) => metrics.callbackDeliveries.inc({ outcome }),
      },
    }));
    const retention = { repo: repos.callbacks, clock, log, retentionMs: config.callbackRetentionMs, intervalMs: RETENTION_SWEEP_MS };
    jobRunner.register(callbackRetention(retention));
    await scheduleRetention(jobs, retention);
    const brokerClients = () => (broker instanceof EmbeddedBroker ? broker.connectedClients : undefined);
    let metricsUrl: string | undefined;
    if (config.metricsPort !== undefined) {
      const listener = await startMetricsListener({ host: config.metricsHost, port: config.metricsPort, token: config.metricsToken, metrics, brokerClients })
        .catch((e: unknown) => { throw listenError(e, 'the metrics listener', config.metricsHost, config.metricsPort!, 'BOXHUB_METRICS_PORT', 'BOXHUB_METRICS_HOST'); });
      metricsUrl = listener.url;
      cleanup.unshift(() => listener.close());
    }
    const credentialHooks: CredentialHooks = {
      ...(broker.provisionDevice ? { provision: (d: { uuid: string; secret: string }) => broker.provisionDevice!(d.uuid, d.secret) } : {}),
      ...(broker.deprovisionDevice ? { deprovision: (uuid: string) => broker.deprovisionDevice!(uuid) } : {}),
      ...(broker.disconnectDevice ? { disconnect: (uuid: string) => broker.disconnectDevice!(uuid) } : {}),
    };
    const { app, limits } = await buildApp({
      credentialHooks, secretBox: box,
      db, services, metrics, logger: log, bodyLimit: config.bodyLimit, printBodyLimit: config.printBodyLimit, brokerClients, clock,
      // The /blobs routes serve the local store only; with S3, URLs point at the bucket.
      ...(localBlobs ? { blobs: { store: localBlobs, clock, maxBytes: config.blobMaxBytes } } : {}),
      observability: { metricsOnMain: config.metricsPort === undefined, metricsToken: config.metricsToken },
      rateLimits: config.rateLimits, trustProxy: config.trustProxy, operatorToken: config.operatorToken,
      directMaxPageBytes: config.directMaxPageBytes, publicUrl: () => baseUrl,
    });
    cleanup.unshift(() => app.close());
    const limitSweep = { shared: limits.shared, clock, log, intervalMs: RETENTION_SWEEP_MS };
    jobRunner.register(rateLimitSweep(limitSweep));
    await scheduleRateLimitSweep(jobs, limitSweep);
    jobRunner.start();
    try { await app.listen({ port: config.port, host: config.host }); } catch (e) {
      throw listenError(e, 'the HTTP API', config.host, config.port, 'PORT', 'HOST');
    }
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    if (!baseUrl) baseUrl = url;

    let closing: Promise<void> | undefined;
    return {
      config, app, url, mqttUrl, db, broker, gateway, repos, services, jobRunner, jobs, blobs, log, metricsUrl,
      sweepCallbacks: () => sweepCallbacks(retention),
      registerDevice: (input) => services.devices.register(input, credentialHooks.provision),
      credentialHooks,
      failed,
      close: () => (closing ??= (async () => { for (const c of cleanup) await c().catch(() => undefined); })()),
    };
  } catch (e) {
    for (const c of cleanup) await c().catch(() => undefined);
    throw e;
  }
}
