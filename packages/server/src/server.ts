// The running service: database, box link, HTTP. main.ts and the tests both start it here.
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { join } from 'node:path';
import { buildApp } from './app.ts';
import { BoxGateway } from './box-link/gateway.ts';
import { EmbeddedBroker } from './broker/embedded-broker.ts';
import { ExternalBroker } from './broker/external-broker.ts';
import type { Broker } from './broker/types.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { openDb, type Db } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { createMetrics } from './metrics/registry.ts';
import { CallbackWorker } from './modules/callbacks/worker.ts';
import { CallbackRetention } from './modules/callbacks/retention.ts';
import { undiciTransport, type Transport } from './modules/callbacks/transport.ts';
import { createGuardedAgent } from './net/guarded-agent.ts';
import { sha256, sameHash } from './secrets.ts';
import { createRepositories, createServices, type Repositories, type Services } from './services.ts';
import type { RegisteredDevice } from './modules/devices/service.ts';

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
  /** Delivers the callback outbox (modules/callbacks/worker.ts). */
  callbackWorker: CallbackWorker;
  /** Deletes completed callbacks past retention (modules/callbacks/retention.ts). */
  callbackRetention: CallbackRetention;
  log: Logger;
  /** Registers (provisions) a box: database row plus broker login. */
  registerDevice(input: { code: string; model: string }): Promise<RegisteredDevice>;
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

/** Completed callbacks are looked for hourly: retention is counted in days. */
const RETENTION_SWEEP_MS = 3_600_000;

export function openConfiguredDb(config: Config, pgSchema?: string): Promise<Db> {
  return openDb({ url: config.databaseUrl, sqlitePath: join(config.dataDir, 'boxhub.sqlite'), ...(pgSchema ? { pgSchema } : {}) });
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock;
  const log = opts.logger ?? pino({ level: config.logLevel });
  const db = await openConfiguredDb(config, opts.pgSchema);
  const cleanup: (() => Promise<void>)[] = [() => db.close()];
  try {
    await migrate(db);
    const repos = createRepositories(db);

    let broker: Broker;
    let mqttUrl: string;
    if (config.mqttUrl) {
      broker = await ExternalBroker.connect(config.mqttUrl, config.nodeId, { shareGroup: config.mqttShareGroup });
      const u = new URL(config.mqttUrl);
      mqttUrl = `${u.protocol}//${u.host}`;
    } else {
      const embedded = await EmbeddedBroker.start({
        host: config.mqttHost,
        port: config.mqttPort,
        authenticate: async (uuid, secret) => {
          const d = await repos.devices.findByUuid(uuid);
          return !!d && sameHash(d.secret_hash, sha256(secret));
        },
        onError: (err) => log.error({ err }, 'broker listener error'),
      });
      broker = embedded;
      mqttUrl = embedded.listenUrl ?? '';
      // This process is the broker, so nobody is connected yet, whatever was recorded before.
      await repos.devices.markAllOffline(clock.now());
    }
    cleanup.unshift(() => broker.close());

    const gateway = new BoxGateway({ broker, devices: repos.devices, clock, nodeId: config.nodeId, log, commandTimeoutMs: config.commandTimeoutMs });
    await gateway.start();
    cleanup.unshift(async () => gateway.close());
    const services = createServices(repos, gateway, clock, {
      callbacks: { allowPrivateNetworks: config.allowPrivateNetworks, secretGraceMs: config.callbackSecretGraceMs },
    });
    const metrics = createMetrics();
    // Stopped after the HTTP app (no new enqueues) and before the database (it gives claims back).
    const callbackAgent = createGuardedAgent({ allowPrivateNetworks: config.allowPrivateNetworks, connectTimeoutMs: config.callbackTimeoutMs });
    const callbackWorker = new CallbackWorker({
      repo: repos.callbacks, clock, log,
      transport: opts.callbackTransport ?? undiciTransport(callbackAgent),
      settings: { timeoutMs: config.callbackTimeoutMs, retryDelaysMs: config.callbackRetryDelaysMs, pollMs: config.callbackPollMs, concurrency: config.callbackConcurrency, nodeId: config.nodeId, leaseMarginMs: config.callbackClaimMarginMs },
      metrics: {
        attempt: (result, seconds) => { metrics.callbackAttempts.inc({ result }); metrics.callbackAttemptDuration.observe(seconds); },
        final: (outcome) => metrics.callbackDeliveries.inc({ outcome }),
      },
    });
    services.callbacks.onEnqueue(() => callbackWorker.wake());
    callbackWorker.start();
    cleanup.unshift(async () => { services.callbacks.onEnqueue(undefined); await callbackWorker.stop(); await callbackAgent.destroy(); });
    const callbackRetention = new CallbackRetention({ repo: repos.callbacks, clock, log, retentionMs: config.callbackRetentionMs, intervalMs: RETENTION_SWEEP_MS });
    callbackRetention.start();
    cleanup.unshift(() => callbackRetention.stop());
    const app = await buildApp({
      db, services, metrics, logger: log, bodyLimit: config.bodyLimit,
      brokerClients: () => (broker instanceof EmbeddedBroker ? broker.connectedClients : undefined),
    });
    cleanup.unshift(() => app.close());
    await app.listen({ port: config.port, host: config.host });
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

    let closing: Promise<void> | undefined;
    return {
      config, app, url, mqttUrl, db, broker, gateway, repos, services, callbackWorker, callbackRetention, log,
      registerDevice: (input) => services.devices.register(input, broker.provisionDevice ? (d) => broker.provisionDevice!(d.uuid, d.secret) : undefined),
      close: () => (closing ??= (async () => { for (const c of cleanup) await c().catch(() => undefined); })()),
    };
  } catch (e) {
    for (const c of cleanup) await c().catch(() => undefined);
    throw e;
  }
}
