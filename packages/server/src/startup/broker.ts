// The broker step of a start (server.ts): the external MQTT broker of MQTT_URL, or the embedded
// one with its box logins, admission control and the watch that drops a box whose secret was
// rotated or revoked (docs/box-protocol-broker.md, docs/configuration.md).
import type { Logger } from 'pino';
import { EmbeddedBroker, type RefusalReason } from '../broker/embedded-broker.ts';
import { ExternalBroker } from '../broker/external-broker.ts';
import { SessionWatch } from '../broker/session-watch.ts';
import type { Broker } from '../broker/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { Repositories } from '../services.ts';
import { TurnBatch } from '../db/turn-batch.ts';
import { sameHash, sha256 } from '../secrets.ts';
import { brokerError, listenError, StartupError } from '../startup-error.ts';
import type { Cleanup } from './cleanup.ts';

/** What the log says when the embedded broker refuses a connection (docs/configuration.md). */
const REFUSED_MESSAGES: Record<RefusalReason, string> = {
  connect_rate: 'box link: too many connection attempts from this address; refusing them until the window ends',
  packet_size: 'box link: packet over BOXHUB_MQTT_MAX_PACKET_BYTES or malformed; connection closed',
  admission_busy:
    'box link: as many logins being checked as BOXHUB_MQTT_ADMIT_CONCURRENCY, and a login waited ' +
    'BOXHUB_MQTT_ADMIT_WAIT_MS or found BOXHUB_MQTT_ADMIT_QUEUE waiting; refusing it with CONNACK 3 (boxes back off)',
  admission_rate:
    'box link: logins over BOXHUB_MQTT_ADMIT_RATE a second, and a login waited BOXHUB_MQTT_ADMIT_WAIT_MS ' +
    'or found BOXHUB_MQTT_ADMIT_QUEUE waiting; refusing it with CONNACK 3 (boxes back off)',
  admission_lag:
    'box link: the event loop runs later than BOXHUB_MQTT_ADMIT_MAX_LAG_MS, and a login waited ' +
    'BOXHUB_MQTT_ADMIT_WAIT_MS or found BOXHUB_MQTT_ADMIT_QUEUE waiting; refusing it with CONNACK 3 (boxes back off)',
};

/** How often the embedded broker's open sessions are checked against changed credentials. */
const SESSION_WATCH_MS = 1000;

export interface BrokerStepDeps {
  config: Config;
  repos: Repositories;
  dataVersion: (() => number) | undefined;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  cleanup: Cleanup;
  /** Called when an external broker is found unfit after a reconnect: the service must stop. */
  fail(e: StartupError): void;
}

export interface StartedBroker {
  broker: Broker;
  /**
   * Lets boxes in, the last step of a start (server.ts): the embedded broker listens (until then
   * a box's dial is refused and it backs off; EmbeddedBroker.listen). Answers the mqtt://host:port
   * boxes connect to, or the external broker's URL without credentials.
   */
  open(): Promise<string>;
  /** Boxes recorded online before this start that the embedded broker marked offline (nobody is connected to a new broker). */
  markedOffline: string[];
  /** Who hears of each box login the embedded broker accepts (the gateway, once it exists). */
  onLogin(listener: (uuid: string) => void): void;
}

export async function startBroker(d: BrokerStepDeps): Promise<StartedBroker> {
  const { config, repos, clock, log, cleanup } = d;
  if (config.mqttUrl) {
    const external = await ExternalBroker.connect(config.mqttUrl, config.nodeId, {
      shareGroup: config.mqttShareGroup,
    }).catch((e: unknown) => {
      throw brokerError(e);
    });
    // A broker found lacking after a reconnect: nothing more goes through it, and the service
    // stops (`boxhub serve` exits 1 with the message; docs/box-protocol-broker.md, "Brokers").
    external.onUnfit((e) => {
      log.fatal({ missing: e.missing }, e.message);
      d.fail(new StartupError(e.message, 'MQTT_URL', { cause: e }));
    });
    cleanup.push(() => external.close());
    const u = new URL(config.mqttUrl);
    const mqttUrl = `${u.protocol}//${u.host}`;
    return { broker: external, open: async () => mqttUrl, markedOffline: [], onLogin: () => undefined };
  }

  let loginListener: (uuid: string) => void = () => undefined;
  let embedded: EmbeddedBroker | undefined;
  const sessionWatch = new SessionWatch({
    sessions: () => embedded?.sessions() ?? [],
    disconnect: (uuid) => embedded?.disconnectDevice(uuid),
    devices: repos.devices,
    ...(d.dataVersion ? { dataVersion: d.dataVersion } : {}),
    onDropped: (uuid) => log.info({ uuid }, 'box session dropped: its secret was rotated or revoked'),
    onError: (err) => log.warn({ err }, 'checking box sessions against their credentials failed'),
  });
  // The logins checked in one turn of the event loop are looked up with one statement: a node's
  // return brought 10,000 one-row SELECTs within seconds (bench/README.md, "reconnect-storm").
  const storedSecrets = new TurnBatch<string, string | undefined>(async (uuids) => {
    const hashes = await repos.devices.secretHashes(uuids);
    return uuids.map((uuid) => hashes.get(uuid));
  });
  embedded = await EmbeddedBroker.create({
    host: config.mqttHost,
    port: config.mqttPort,
    authenticate: async (uuid, secret) => {
      const stored = await storedSecrets.add(uuid);
      const hash = sha256(secret);
      if (!stored || !sameHash(stored, hash)) return false;
      sessionWatch.loggedIn(uuid, hash);
      loginListener(uuid);
      return true;
    },
    onError: (err) => log.error({ err }, 'broker listener error'),
    maxPacketBytes: config.mqttMaxPacketBytes,
    connectLimit: config.mqttConnectLimit,
    admission: config.mqttAdmission,
    clock,
    onRefused: (reason, r) => {
      d.metrics.brokerRefused.inc({ reason });
      // One line per address and window for a connection flood, one per oversized packet,
      // at most one a second for logins refused by admission control.
      if (r.first) log.warn({ address: r.address, bytes: r.bytes }, REFUSED_MESSAGES[reason]);
    },
  });
  const broker = embedded;
  cleanup.push(() => broker.close());
  const watch = setInterval(() => void sessionWatch.check(), SESSION_WATCH_MS);
  watch.unref();
  cleanup.push(async () => clearInterval(watch));
  // This process is the broker, so nobody is connected yet, whatever was recorded before.
  const markedOffline = await repos.devices.markAllOffline(clock.now());
  return {
    broker,
    open: async () => {
      await broker.listen().catch((e: unknown) => {
        throw listenError(
          e,
          'the box link (the embedded MQTT broker)',
          config.mqttHost,
          config.mqttPort,
          'BOXHUB_MQTT_PORT',
          'BOXHUB_MQTT_HOST',
        );
      });
      return broker.listenUrl ?? '';
    },
    markedOffline,
    onLogin: (l) => {
      loginListener = l;
    },
  };
}
