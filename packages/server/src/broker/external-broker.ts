// A standard external broker (Mosquitto, EMQX) through mqtt.js: the path past one machine.
// The server logs in with the operator's credentials from MQTT_URL; boxes log in with their
// own, which the broker checks (docs/box-protocol-broker.md).
//
// Box logins on Mosquitto live in its dynamic security plugin: provisionDevice() creates them
// over $CONTROL/dynamic-security/v1. Dynsec in Mosquitto 2.0 does not substitute %c/%u in ACL
// topics, so every box gets a role of its own naming its uuid (deviceAcls()). A broker that
// does its own authentication (EMQX with a built-in database, an HTTP auth service, ...) takes
// `?provision=none` on MQTT_URL, and the server then leaves box logins to the operator.
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import type { Broker, MessageHandler, SubscribeOptions } from './types.ts';
import { redact } from './broker-url.ts';
import { BrokerUnfit, BrokerUnreachable, isUnsupportedVersion, probeBroker } from './capabilities.ts';
import { messageOf } from '@boxhub/protocol';
import { paceMessages } from '../loop-budget.ts';

const DYNSEC_TOPIC = '$CONTROL/dynamic-security/v1';
const DYNSEC_RESPONSE_TOPIC = `${DYNSEC_TOPIC}/response`;
/** A box uuid becomes a topic level and a dynsec name: no wildcards, separators or spaces. */
const SAFE_UUID = /^[A-Za-z0-9_.:-]{1,64}$/;

export type ProvisionMode = 'dynsec' | 'none';

export interface ExternalBrokerOptions {
  /** MQTT client id; defaults to boxhub-server-{nodeId}. Two live clients with one id kick each other. */
  clientId?: string;
  /**
   * Shared-subscription group (config BOXHUB_MQTT_SHARE_GROUP, default boxhub): the same for
   * every node of one deployment, different for two deployments (or test servers) on one broker.
   */
  shareGroup?: string;
  /** How long connect() waits for the first CONNACK (the broker may be down). */
  connectTimeoutMs?: number;
  /** How long provisionDevice() waits for the dynamic security plugin's answer. */
  provisionTimeoutMs?: number;
  /** How long each step of the broker's check waits for a delivery (capabilities.ts). */
  probeTimeoutMs?: number;
}

/** The role name of one box on Mosquitto's dynamic security plugin. */
export const deviceRole = (uuid: string): string => `boxhub-box-${uuid}`;

/** What a box may do, as dynsec ACLs: the same rules as device-acl.ts (embedded broker). */
export function deviceAcls(uuid: string): { acltype: string; topic: string; allow: boolean }[] {
  return [
    ...['state', 'presence', 'event', 'req', 'ack/+'].map((t) => ({
      acltype: 'publishClientSend',
      topic: `box/${uuid}/${t}`,
      allow: true,
    })),
    { acltype: 'subscribeLiteral', topic: `box/${uuid}/cmd`, allow: true },
  ];
}

/** Splits `?provision=` off MQTT_URL; the rest goes to mqtt.js untouched. */
export function parseMqttUrl(url: string): { url: string; provision: ProvisionMode } {
  const u = new URL(url);
  const p = u.searchParams.get('provision') ?? 'dynsec';
  if (p !== 'dynsec' && p !== 'none') throw new Error(`MQTT_URL: provision must be dynsec or none, got '${p}'`);
  u.searchParams.delete('provision');
  return { url: u.toString(), provision: p };
}

export { redact } from './broker-url.ts';

interface DynsecCommand {
  command: string;
  [k: string]: unknown;
}
interface DynsecResponse {
  command: string;
  error?: string;
  correlationData?: string;
  data?: unknown;
}
interface PendingControl {
  resolve: (r: DynsecResponse) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class ExternalBroker implements Broker {
  private readonly client: MqttClient;
  private readonly handlers: { filter: string; handler: MessageHandler }[] = [];
  /** Retained reads under way (readRetained()): retained messages on their filters go to them. */
  private readonly retainedReads = new Set<{ filter: string; handler: MessageHandler }>();
  private readonly reconnectListeners: (() => void)[] = [];
  private readonly provision: ProvisionMode;
  private readonly shareGroup: string;
  private readonly provisionTimeoutMs: number;
  private readonly pendingControl = new Map<string, PendingControl>();
  private readonly unfitListeners: ((e: BrokerUnfit) => void)[] = [];
  private readonly probe: () => Promise<void>;
  private probing: Promise<void> | undefined;
  /** The broker was found to lack something boxhub needs after a reconnect (see onUnfit). */
  unfit: BrokerUnfit | undefined;
  private controlSubscribed: Promise<void> | undefined;
  readonly listenUrl = undefined;
  /** Times the connection came back after a loss (subscriptions are renewed by mqtt.js). */
  reconnects = 0;

  private constructor(
    client: MqttClient,
    provision: ProvisionMode,
    shareGroup: string,
    provisionTimeoutMs: number,
    check: { url: string; probe: () => Promise<void> },
  ) {
    this.client = client;
    this.probe = check.probe;
    this.provision = provision;
    this.shareGroup = shareGroup;
    this.provisionTimeoutMs = provisionTimeoutMs;
    // mqtt.js reads its next packet only when handleMessage calls back: a burst of messages is
    // taken a few milliseconds of each turn of the event loop at a time (loop-budget.ts).
    client.handleMessage = (_packet, callback) => paceMessages(callback);
    client.on('message', (topic, payload, packet) => {
      if (topic === DYNSEC_RESPONSE_TOPIC) {
        this.onControlResponse(payload);
        return;
      }
      // The retain flag is set only on messages a subscription receives because the broker
      // retains them ([MQTT-3.3.1-8]); live ones arrive with it clear (Retain As Published off).
      if (packet.retain && this.deliverRetained(topic, payload)) return;
      for (const h of this.handlers) {
        if (!matches(h.filter, topic)) continue;
        // One handler's failure must neither starve the others nor reach mqtt.js's stream.
        try {
          h.handler(topic, payload);
        } catch {
          /* the handler logs its own errors */
        }
      }
    });
    // Constructed after the first CONNACK, so every later one is a reconnect. The broker behind
    // MQTT_URL may not be the one checked at start (a failover, a DNS change): it is checked
    // again, and a reconnect it refuses for the protocol version says so at once.
    client.on('connect', () => {
      this.reconnects++;
      for (const l of this.reconnectListeners) l();
      this.recheck();
    });
    client.on('error', (e: Error & { code?: unknown }) => {
      if (typeof e.code === 'number' && isUnsupportedVersion(e.code)) {
        this.declareUnfit(
          new BrokerUnfit(check.url, [
            { feature: 'mqtt5', why: `it refused the server's MQTT 5 CONNECT on a reconnect (${e.message})` },
          ]),
        );
      }
    });
  }

  /**
   * Called once when a reconnect finds the broker lacking something boxhub needs: the
   * connection is closed (nothing more is taken from or sent to a broker that would lose it)
   * and the service must stop (server.ts).
   */
  onUnfit(listener: (e: BrokerUnfit) => void): void {
    this.unfitListeners.push(listener);
  }

  /** Checks the broker again (after a reconnect), one check at a time. */
  recheck(): Promise<void> {
    this.probing ??= this.probe()
      .catch((e: unknown) => {
        if (e instanceof BrokerUnfit) this.declareUnfit(e);
        // Unreachable in the middle of the check: the next reconnect checks again.
      })
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  private declareUnfit(e: BrokerUnfit): void {
    if (this.unfit) return;
    this.unfit = e;
    this.client.end(true);
    for (const l of this.unfitListeners) l(e);
  }

  /**
   * Checks the broker (capabilities.ts), then connects. Throws BrokerUnfit naming what the
   * broker lacks, or an Error when it cannot be reached or refuses the login.
   */
  static async connect(url: string, nodeId: string, opts: ExternalBrokerOptions = {}): Promise<ExternalBroker> {
    const { url: brokerUrl, provision } = parseMqttUrl(url);
    const clientId = opts.clientId ?? `boxhub-server-${nodeId}`;
    const limit = opts.connectTimeoutMs ?? 30_000;
    const probe = async (): Promise<void> => {
      const missing = await probeBroker(brokerUrl, {
        clientIdPrefix: clientId,
        connectTimeoutMs: limit,
        ...(opts.probeTimeoutMs ? { timeoutMs: opts.probeTimeoutMs } : {}),
      }).catch((e: unknown) => {
        throw e instanceof BrokerUnreachable ? new Error(e.message, { cause: e }) : e;
      });
      if (missing.length > 0) throw new BrokerUnfit(brokerUrl, missing);
    };
    await probe();
    const client = mqtt.connect(brokerUrl, {
      clientId,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      // Renew every subscription (shared ones included) after a reconnect: clean sessions
      // forget them. This is mqtt.js's default; it is spelled out because it is load-bearing.
      resubscribe: true,
      // v5: shared subscriptions ($share/…) are an MQTT 5 feature, and v5 reports refused
      // publishes and subscriptions with reason codes instead of dropping them silently.
      protocolVersion: 5,
    });
    // A refused login or connection fails at once; a broker that does not answer is bounded here.
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error): void => {
        clearTimeout(timer);
        client.off('connect', onConnect);
        client.off('error', onError);
        if (err) {
          client.end(true);
          reject(err);
        } else resolve();
      };
      const onConnect = (): void => done();
      const onError = (e: Error & { code?: unknown }): void =>
        done(
          new Error(
            typeof e.code === 'number'
              ? `MQTT broker ${redact(brokerUrl)} refused the server's login: ${e.message}` // a CONNACK reason
              : `could not reach the MQTT broker at ${redact(brokerUrl)}: ${e.message}`,
          ),
        );
      const timer = setTimeout(
        () => done(new Error(`could not reach the MQTT broker at ${redact(brokerUrl)} within ${limit} ms`)),
        limit,
      );
      client.on('connect', onConnect);
      client.on('error', onError);
    });
    return new ExternalBroker(client, provision, opts.shareGroup ?? 'boxhub', opts.provisionTimeoutMs ?? 10_000, {
      url: brokerUrl,
      probe,
    });
  }

  get connected(): boolean {
    return this.client.connected;
  }

  async publish(topic: string, payload: string | Buffer, opts: { qos?: 0 | 1; retain?: boolean } = {}): Promise<void> {
    await this.client.publishAsync(topic, payload, { qos: opts.qos ?? 1, retain: opts.retain ?? false });
  }

  async subscribe(filter: string, handler: MessageHandler, opts: SubscribeOptions = {}): Promise<void> {
    const actual = opts.shared ? `$share/${this.shareGroup}/${filter}` : filter;
    const granted = await this.client.subscribeAsync(actual, { qos: 1 });
    // v5 failure reason codes are >= 0x80 (0x87 not authorized); 3.1.1 has 0x80 only.
    if (granted.some((g) => g.qos > 2))
      throw new Error(`broker refused subscription to ${actual} (reason ${granted.map((g) => g.qos).join(',')})`);
    this.handlers.push({ filter, handler });
  }

  /**
   * Reads the retained messages on `filter` with a plain QoS 0 subscription that is dropped as
   * soon as the broker has answered it. The broker queues a subscription's retained messages
   * right after its SUBACK ([MQTT-3.3.1-6]) and answers packets of one connection in order, so
   * once the UNSUBACK is in every retained message is too. While the read is under way a live
   * message on `filter` may reach the normal handlers twice (once per subscription); the
   * handlers this is for (presence, state) apply a message idempotently.
   */
  async readRetained(filter: string, handler: MessageHandler): Promise<void> {
    const read = { filter, handler };
    this.retainedReads.add(read);
    try {
      const granted = await this.client.subscribeAsync(filter, { qos: 0, rh: 0 });
      if (granted.some((g) => g.qos > 2))
        throw new Error(`broker refused subscription to ${filter} (reason ${granted.map((g) => g.qos).join(',')})`);
      await this.client.unsubscribeAsync(filter);
    } finally {
      this.retainedReads.delete(read);
    }
  }

  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  private deliverRetained(topic: string, payload: Buffer): boolean {
    let delivered = false;
    for (const r of this.retainedReads) {
      if (!matches(r.filter, topic)) continue;
      delivered = true;
      try {
        r.handler(topic, payload);
      } catch {
        /* the handler logs its own errors */
      }
    }
    return delivered;
  }

  /**
   * Gives a box its broker login on Mosquitto's dynamic security plugin: a role allowing only
   * box/{uuid}/… and a client with username = client id = uuid and the box's secret. A box
   * provisioned before (a retried registration, a new secret) is replaced.
   */
  async provisionDevice(uuid: string, secret: string): Promise<void> {
    if (this.provision === 'none') return;
    if (!SAFE_UUID.test(uuid))
      throw new Error(`cannot provision '${uuid}': a box id must be 1-64 characters of A-Z a-z 0-9 _ . : -`);
    const rolename = deviceRole(uuid);
    const client = { command: 'createClient', username: uuid, clientid: uuid, password: secret, roles: [{ rolename }] };
    const [role, created] = await this.controlPair({ command: 'createRole', rolename, acls: deviceAcls(uuid) }, client);
    if (role.error && !/already exists/i.test(role.error)) throw dynsecError(uuid, role);
    if (!created.error) return;
    if (!/already exists/i.test(created.error)) throw dynsecError(uuid, created);
    // Deleting also disconnects a box still logged in with the old secret.
    const [deleted, again] = await this.controlPair({ command: 'deleteClient', username: uuid }, client);
    if (deleted.error) throw dynsecError(uuid, deleted);
    if (again.error) throw dynsecError(uuid, again);
  }

  /** Removes a box's login and role (a deleted or replaced box). Missing ones are fine. */
  async deprovisionDevice(uuid: string): Promise<void> {
    if (this.provision === 'none') return;
    const rs = await this.control([
      { command: 'deleteClient', username: uuid },
      { command: 'deleteRole', rolename: deviceRole(uuid) },
    ]);
    for (const r of rs) if (r.error && !/not found/i.test(r.error)) throw dynsecError(uuid, r);
  }

  /** Two dynsec commands in one message, and their two answers in order. */
  private async controlPair(first: DynsecCommand, second: DynsecCommand): Promise<[DynsecResponse, DynsecResponse]> {
    const [a, b] = await this.control([first, second]);
    if (!a || !b) throw new Error('the broker answered fewer dynsec commands than it was sent');
    return [a, b];
  }

  /** Sends dynsec commands in one message and returns their answers, in order. */
  private async control(commands: DynsecCommand[]): Promise<DynsecResponse[]> {
    this.controlSubscribed ??= this.client.subscribeAsync(DYNSEC_RESPONSE_TOPIC, { qos: 1 }).then((g) => {
      if (g.some((x) => x.qos > 2))
        throw new Error(
          `the broker refused the subscription to ${DYNSEC_RESPONSE_TOPIC}: does the server's MQTT user have a dynsec admin role?`,
        );
    });
    try {
      await this.controlSubscribed;
    } catch (e) {
      this.controlSubscribed = undefined;
      throw e;
    }
    const tagged = commands.map((c) => ({ ...c, correlationData: randomBytes(9).toString('base64url') }));
    const answers = tagged.map(
      (c) =>
        new Promise<DynsecResponse>((resolve, reject) => {
          const timer = setTimeout(() => {
            this.pendingControl.delete(c.correlationData);
            reject(
              new Error(
                `no answer to dynsec ${c.command} within ${this.provisionTimeoutMs} ms: is Mosquitto's dynamic security plugin loaded? (brokers without it: add ?provision=none to MQTT_URL)`,
              ),
            );
          }, this.provisionTimeoutMs);
          this.pendingControl.set(c.correlationData, { resolve, reject, timer });
        }),
    );
    // Avoid unhandled rejections for commands whose siblings failed first.
    for (const a of answers) a.catch(() => undefined);
    try {
      await this.client.publishAsync(DYNSEC_TOPIC, JSON.stringify({ commands: tagged }), { qos: 1 });
    } catch (e) {
      for (const c of tagged) {
        const p = this.pendingControl.get(c.correlationData);
        if (p) {
          clearTimeout(p.timer);
          this.pendingControl.delete(c.correlationData);
        }
      }
      throw new Error(
        `the broker refused a dynsec command: ${messageOf(e)} (may the server's MQTT user publish to ${DYNSEC_TOPIC}?)`,
      );
    }
    return Promise.all(answers);
  }

  private onControlResponse(payload: Buffer): void {
    let body: { responses?: DynsecResponse[] };
    try {
      body = JSON.parse(payload.toString('utf8')) as typeof body;
    } catch {
      return;
    }
    for (const r of body.responses ?? []) {
      const id = r.correlationData;
      const p = id ? this.pendingControl.get(id) : undefined;
      if (!id || !p) continue; // another node's command
      clearTimeout(p.timer);
      this.pendingControl.delete(id);
      p.resolve(r);
    }
  }

  async close(): Promise<void> {
    for (const [id, p] of this.pendingControl) {
      clearTimeout(p.timer);
      p.reject(new Error('broker connection closed'));
      this.pendingControl.delete(id);
    }
    await this.client.endAsync();
  }
}

function dynsecError(uuid: string, r: DynsecResponse): Error {
  return new Error(`could not provision box ${uuid} on the broker: dynsec ${r.command}: ${r.error}`);
}

/** MQTT topic filter match with + and # ([MQTT-4.7.1]). */
export function matches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}
