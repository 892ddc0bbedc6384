// What boxhub needs of an external broker, checked on the broker itself (docs/box-protocol-broker.md,
// "What the broker must do"): MQTT 5, QoS 1, retained messages, shared subscriptions and
// sessions that outlive a connection. A broker without one of them does not refuse anything
// boxhub does; it loses messages quietly (a `$share/…` filter read as a literal topic receives
// nothing, a missing retained presence leaves a box online for good). So the server probes each
// one with its own login before it serves, and again after each reconnect, and refuses to run
// with a message naming what is missing.
//
// The probe's topics live under box/{probe id}/probe/…: inside the server's ACL (box/#) and
// matched by none of the server's own subscriptions (box/+/presence, …, box/+/ack/{node}).
import { randomBytes } from 'node:crypto';
import mqtt, { type IClientOptions, type IConnackPacket, type MqttClient } from 'mqtt';
import { redact } from './broker-url.ts';

/** One thing boxhub needs of a broker, as docs/box-protocol-broker.md names it. */
export type BrokerFeature = 'mqtt5' | 'qos1' | 'retained' | 'shared_subscriptions' | 'sessions';

export const FEATURE_NAMES: Record<BrokerFeature, string> = {
  mqtt5: 'MQTT 5',
  qos1: 'QoS 1',
  retained: 'retained messages',
  shared_subscriptions: 'shared subscriptions ($share/…)',
  sessions: 'MQTT 5 sessions (clean start off, session expiry)',
};

export interface MissingFeature { feature: BrokerFeature; why: string }

export interface ProbeOptions {
  /** The probe's client ids start with it (the server's own id, so an ACL on ids still fits). */
  clientIdPrefix: string;
  /** How long a connection waits for its CONNACK (the broker may be down). */
  connectTimeoutMs?: number;
  /** How long each later step waits for the broker's answer or a delivery. */
  timeoutMs?: number;
}

/** The broker could not be reached or refused the login: not a missing feature. */
export class BrokerUnreachable extends Error { override readonly name = 'BrokerUnreachable'; }

/** The broker lacks something boxhub needs; the message names each missing feature and why. */
export class BrokerUnfit extends Error {
  override readonly name = 'BrokerUnfit';
  readonly missing: readonly MissingFeature[];
  constructor(url: string, missing: MissingFeature[]) {
    super(unfitMessage(url, missing));
    this.missing = missing;
  }
}

/** Whether a CONNACK refusal says the broker does not speak this protocol version. */
export const isUnsupportedVersion = (code: number): boolean => UNSUPPORTED_VERSION.has(code);

type Attempt =
  | { kind: 'connected'; client: MqttClient; connack: IConnackPacket }
  | { kind: 'refused'; code: number; message: string }
  | { kind: 'closed' }
  | { kind: 'failed'; error: Error; timedOut?: boolean };

/** CONNACK reasons that mean "not this protocol version" (MQTT 5 0x84, MQTT 3.1.1 1). */
const UNSUPPORTED_VERSION = new Set([0x84, 1]);

/** Connects once, without reconnecting, and says how it went. `early` gets the topics of
 *  messages that arrive from the start (a session's queue may come with the CONNACK). */
function attempt(url: string, opts: IClientOptions, timeoutMs: number, early?: string[]): Promise<Attempt> {
  return new Promise((resolve) => {
    // mqtt.js's own CONNACK timeout comes after this one, which names the wait.
    const client = mqtt.connect(url, { ...opts, reconnectPeriod: 0, connectTimeout: timeoutMs + 1000 });
    if (early) client.on('message', (t) => early.push(t));
    let settled = false;
    const done = (a: Attempt): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (a.kind !== 'connected') client.end(true);
      resolve(a);
    };
    const timer = setTimeout(() => done({ kind: 'failed', error: new Error(`no answer within ${timeoutMs} ms`), timedOut: true }), timeoutMs);
    client.on('connect', (connack) => done({ kind: 'connected', client, connack }));
    client.on('error', (e: Error & { code?: unknown }) => done(typeof e.code === 'number' ? { kind: 'refused', code: e.code, message: e.message } : { kind: 'failed', error: e }));
    client.on('close', () => done({ kind: 'closed' }));
  });
}

interface Delivery { client: MqttClient; retain: boolean; qos: number }

/**
 * Gathers the messages on `topic` that reach these clients until `enough` of them came, the
 * timeout passed, or stop() is called; `done` resolves with what arrived.
 */
function collect(clients: MqttClient[], topic: string, timeoutMs: number, enough: (n: number) => boolean): { done: Promise<Delivery[]>; stop: () => void } {
  const got: Delivery[] = [];
  let finish = (): void => undefined;
  const done = new Promise<Delivery[]>((resolve) => {
    const listeners = clients.map((client) => {
      const l = (t: string, _p: Buffer, packet: { retain?: boolean; qos?: number }): void => {
        if (t !== topic) return;
        got.push({ client, retain: packet.retain === true, qos: packet.qos ?? 0 });
        if (enough(got.length)) finish();
      };
      client.on('message', l);
      return { client, l };
    });
    const timer = setTimeout(() => finish(), timeoutMs);
    finish = () => {
      clearTimeout(timer);
      for (const { client, l } of listeners) client.off('message', l);
      resolve(got);
    };
  });
  return { done, stop: () => finish() };
}

/** No answer from the broker for a subscription within the time allowed. */
const NO_SUBACK = -1;

/** A subscription's granted QoS, the reason it was refused (v5 codes ≥ 0x80, 3.1.1 0x80), or
 *  NO_SUBACK. */
async function grant(client: MqttClient, filter: string, qos: 0 | 1, timeoutMs: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<number>((r) => { timer = setTimeout(() => r(NO_SUBACK), timeoutMs); });
  const granted = client.subscribeAsync(filter, { qos }).then((g) => g[0]?.qos ?? 0x80, () => NO_SUBACK);
  try { return await Promise.race([granted, limit]); } finally { clearTimeout(timer); }
}

const refusal = (g: number): string => (g === NO_SUBACK ? 'no SUBACK' : `reason ${g}`);

const end = (c: MqttClient | undefined): Promise<void> => (c ? c.endAsync(true).catch(() => undefined) : Promise.resolve());

/**
 * Probes the broker at `url` (the server's MQTT_URL, login included) for each feature boxhub
 * needs. Returns what is missing, each with what the broker did; throws BrokerUnreachable when
 * it cannot log in at all.
 */
export async function probeBroker(url: string, o: ProbeOptions): Promise<MissingFeature[]> {
  const timeoutMs = o.timeoutMs ?? 5000;
  const connectMs = o.connectTimeoutMs ?? 30_000;
  const id = `boxhub-probe-${randomBytes(6).toString('hex')}`;
  const base = `box/${id}/probe`;
  const cid = (what: string): string => `${o.clientIdPrefix}-probe-${what}-${id.slice(-12)}`;
  const missing: MissingFeature[] = [];
  const clients: MqttClient[] = [];

  // MQTT 5 first: the others are probed over MQTT 3.1.1 when the broker speaks only that, so
  // the message names everything missing at once.
  let version: 4 | 5 = 5;
  const v5 = await attempt(url, { clientId: cid('a'), clean: true, protocolVersion: 5 }, connectMs);
  let main: MqttClient;
  if (v5.kind === 'connected') {
    main = v5.client;
  } else {
    if (v5.kind === 'refused' && !UNSUPPORTED_VERSION.has(v5.code)) {
      throw new BrokerUnreachable(`MQTT broker ${redact(url)} refused the server's login: ${v5.message}`);
    }
    if (v5.kind === 'failed') {
      throw new BrokerUnreachable(v5.timedOut
        ? `could not reach the MQTT broker at ${redact(url)} within ${connectMs} ms`
        : `could not reach the MQTT broker at ${redact(url)}: ${v5.error.message}`);
    }
    const v4 = await attempt(url, { clientId: cid('a'), clean: true, protocolVersion: 4 }, connectMs);
    if (v4.kind !== 'connected') {
      throw new BrokerUnreachable(`could not log in to the MQTT broker at ${redact(url)} with MQTT 5 or MQTT 3.1.1: ${describe(v4)}`);
    }
    main = v4.client;
    version = 4;
    missing.push({
      feature: 'mqtt5',
      why: v5.kind === 'refused'
        ? `it refused an MQTT 5 CONNECT (${v5.message}) and accepted MQTT 3.1.1`
        : 'it closed the connection on an MQTT 5 CONNECT without a CONNACK, and accepted MQTT 3.1.1',
    });
  }
  clients.push(main);
  try {
    const second = await attempt(url, { clientId: cid('b'), clean: true, protocolVersion: version }, connectMs);
    if (second.kind !== 'connected') throw new BrokerUnreachable(`the MQTT broker at ${redact(url)} took one connection of the server's login but not a second: ${describe(second)}`);
    clients.push(second.client);
    const other = second.client;

    // QoS 1: granted as asked, PUBACK for a publish, delivered at QoS 1.
    const qosTopic = `${base}/qos`;
    const granted = await grant(main, qosTopic, 1, timeoutMs);
    if (granted !== 1) {
      missing.push({ feature: 'qos1', why: granted >= 0x80 || granted === NO_SUBACK ? `it refused a QoS 1 subscription to ${qosTopic} (${refusal(granted)})` : `it granted QoS ${granted} for a QoS 1 subscription` });
    } else {
      const arriving = collect([main], qosTopic, timeoutMs, (n) => n >= 1);
      const acked = await withTimeout(other.publishAsync(qosTopic, 'qos', { qos: 1 }), timeoutMs);
      const got = await arriving.done;
      if (!acked) missing.push({ feature: 'qos1', why: `no PUBACK for a QoS 1 publish within ${timeoutMs} ms` });
      else if (got.length === 0) missing.push({ feature: 'qos1', why: `a QoS 1 message to ${qosTopic} never reached its subscriber` });
      else if (got[0]!.qos !== 1) missing.push({ feature: 'qos1', why: `a QoS 1 message arrived at QoS ${got[0]!.qos}` });
    }

    // Retained: published before the subscription, delivered on it with the retain flag. A
    // client of its own publishes it: a broker without retained messages may disconnect it
    // (MQTT 5 reason 0x9A).
    const retainedTopic = `${base}/retained`;
    const publisher = await attempt(url, { clientId: cid('r'), clean: true, protocolVersion: version }, connectMs);
    if (publisher.kind !== 'connected') throw new BrokerUnreachable(`the MQTT broker at ${redact(url)} took the server's login and then refused it: ${describe(publisher)}`);
    clients.push(publisher.client);
    const closed = new Promise<never>((_, reject) => publisher.client.once('close', () => reject(new Error('closed'))));
    closed.catch(() => undefined);
    const published = await withTimeout(Promise.race([publisher.client.publishAsync(retainedTopic, 'retained', { qos: 1, retain: true }), closed]), timeoutMs);
    if (!published) {
      missing.push({ feature: 'retained', why: 'it closed the connection on a retained publish, or did not acknowledge it' });
    } else {
      const arriving = collect([main], retainedTopic, timeoutMs, (n) => n >= 1);
      await grant(main, retainedTopic, 1, timeoutMs);
      const retained = await arriving.done;
      if (!retained.some((m) => m.retain)) missing.push({ feature: 'retained', why: 'a new subscription did not receive the message retained on its topic' });
      // An empty retained message deletes it ([MQTT-3.3.1-10]).
      await withTimeout(publisher.client.publishAsync(retainedTopic, '', { qos: 1, retain: true }), timeoutMs);
    }

    // Shared subscriptions: two members of one group, four messages: four deliveries in all.
    // A broker that reads $share/… as a literal topic delivers none; one that ignores the
    // group delivers each message to both. A fence on a plain topic, published after them,
    // reaches each member after any of the four it was given (one publisher, in order).
    const sharedTopic = `${base}/shared`;
    const fence = `${base}/fence`;
    const group = `$share/${id}/${sharedTopic}`;
    const sharedGrants = await Promise.all([grant(main, group, 1, timeoutMs), grant(other, group, 1, timeoutMs), grant(main, fence, 1, timeoutMs), grant(other, fence, 1, timeoutMs)]);
    const refused = sharedGrants.slice(0, 2).find((g) => g >= 0x80 || g === NO_SUBACK);
    if (refused !== undefined) {
      missing.push({ feature: 'shared_subscriptions', why: `it refused a subscription to ${group} (${refusal(refused)})` });
    } else {
      const deliveries = collect([main, other], sharedTopic, timeoutMs, (n) => n >= 8);
      const fenced = collect([main, other], fence, timeoutMs, (n) => n >= 2);
      for (let i = 0; i < 4; i++) await withTimeout(other.publishAsync(sharedTopic, `shared ${i}`, { qos: 1 }), timeoutMs);
      await withTimeout(other.publishAsync(fence, 'fence', { qos: 1 }), timeoutMs);
      await fenced.done;
      deliveries.stop();
      const got = await deliveries.done;
      if (got.length === 0) missing.push({ feature: 'shared_subscriptions', why: `members of ${group} received none of the messages published to ${sharedTopic} (it reads $share/… as a plain topic)` });
      else if (got.length > 4) missing.push({ feature: 'shared_subscriptions', why: `each member of ${group} received every message (it ignores the share group)` });
    }

    // Sessions: a client that leaves with a session expiry and comes back finds its
    // subscription and the QoS 1 message published meanwhile.
    if (version === 5) {
      const why = await probeSession(url, cid('s'), `${base}/session`, other, connectMs, timeoutMs);
      if (why) missing.push({ feature: 'sessions', why });
    } else {
      missing.push({ feature: 'sessions', why: 'session expiry is an MQTT 5 feature' });
    }
  } finally {
    await Promise.all(clients.map(end));
  }
  return missing;
}

async function probeSession(url: string, clientId: string, topic: string, publisher: MqttClient, connectMs: number, timeoutMs: number): Promise<string | undefined> {
  const opts: IClientOptions = { clientId, clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 60 } };
  const first = await attempt(url, opts, connectMs);
  if (first.kind !== 'connected') return `a CONNECT with clean start off and a session expiry was not accepted: ${describe(first)}`;
  try {
    const g = await grant(first.client, topic, 1, timeoutMs);
    if (g !== 1) return `a QoS 1 subscription of the session was not granted (${g === NO_SUBACK || g >= 0x80 ? refusal(g) : `QoS ${g}`})`;
  } finally {
    await first.client.endAsync().catch(() => undefined);
  }
  await withTimeout(publisher.publishAsync(topic, 'queued', { qos: 1 }), timeoutMs);
  const early: string[] = [];
  const again = await attempt(url, opts, connectMs, early);
  if (again.kind !== 'connected') return `the reconnect to the session was not accepted: ${describe(again)}`;
  try {
    if (!again.connack.sessionPresent) return 'a client that came back within its session expiry found no session (CONNACK session present 0)';
    if (!early.includes(topic)) {
      const got = await collect([again.client], topic, timeoutMs, (n) => n >= 1).done;
      if (got.length === 0) return 'the QoS 1 message published while the client was away was not delivered when it came back';
    }
    return undefined;
  } finally {
    // Ends the session for good: a session expiry of 0 on DISCONNECT ([MQTT-3.14.2-2] allows
    // it since the CONNECT had one).
    await new Promise<void>((r) => again.client.end(false, { properties: { sessionExpiryInterval: 0 } }, () => r()));
  }
}

function describe(a: Attempt): string {
  if (a.kind === 'refused') return a.message;
  if (a.kind === 'closed') return 'the connection was closed without a CONNACK';
  if (a.kind === 'failed') return a.error.message;
  return 'connected';
}

/** Whether `p` settled (fulfilled) within `ms`. A rejection counts as no. */
async function withTimeout(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms); });
  try { return await Promise.race([p.then(() => true, () => false), limit]); } finally { clearTimeout(timer); }
}

/** The message naming what is missing, and why, for the startup error and the log. */
function unfitMessage(url: string, missing: MissingFeature[]): string {
  const what = missing.map((m) => FEATURE_NAMES[m.feature]).join(', ');
  const why = missing.map((m) => `${FEATURE_NAMES[m.feature]}: ${m.why}`).join('; ');
  return `the MQTT broker at ${redact(url)} lacks what boxhub needs (${what}), so messages would be lost: ${why}. ` +
    'Use a broker with MQTT 5, shared subscriptions, retained messages, QoS 1 and sessions (Mosquitto 2, EMQX 5; docs/box-protocol-broker.md, "Brokers"), or unset MQTT_URL for the embedded broker';
}
