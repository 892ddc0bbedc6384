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

export interface MissingFeature {
  feature: BrokerFeature;
  why: string;
}

export interface ProbeOptions {
  /** The probe's client ids start with it (the server's own id, so an ACL on ids still fits). */
  clientIdPrefix: string;
  /** How long a connection waits for its CONNACK (the broker may be down). */
  connectTimeoutMs?: number;
  /** How long each later step waits for the broker's answer or a delivery. */
  timeoutMs?: number;
}

/** The broker could not be reached or refused the login: not a missing feature. */
export class BrokerUnreachable extends Error {
  override readonly name = 'BrokerUnreachable';
}

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

export type Attempt =
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
    const timer = setTimeout(
      () => done({ kind: 'failed', error: new Error(`no answer within ${timeoutMs} ms`), timedOut: true }),
      timeoutMs,
    );
    client.on('connect', (connack) => done({ kind: 'connected', client, connack }));
    // A number is a CONNACK reason; a string code (ECONNREFUSED, …) a network failure.
    client.on('error', (e: Error & { code?: unknown }) =>
      done(
        typeof e.code === 'number'
          ? { kind: 'refused', code: e.code, message: e.message }
          : { kind: 'failed', error: e },
      ),
    );
    client.on('close', () => done({ kind: 'closed' }));
  });
}

interface Delivery {
  client: MqttClient;
  retain: boolean;
  qos: number;
}

/**
 * Gathers the messages on `topic` that reach these clients until `enough` of them came, the
 * timeout passed, or stop() is called; `done` resolves with what arrived.
 */
function collect(
  clients: MqttClient[],
  topic: string,
  timeoutMs: number,
  enough: (n: number) => boolean,
): { done: Promise<Delivery[]>; stop: () => void } {
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
  const limit = new Promise<number>((r) => {
    timer = setTimeout(() => r(NO_SUBACK), timeoutMs);
  });
  const granted = client.subscribeAsync(filter, { qos }).then(
    (g) => g[0]?.qos ?? 0x80,
    () => NO_SUBACK,
  );
  try {
    return await Promise.race([granted, limit]);
  } finally {
    clearTimeout(timer);
  }
}

const refusal = (g: number): string => (g === NO_SUBACK ? 'no SUBACK' : `reason ${g}`);

const end = (c: MqttClient | undefined): Promise<void> =>
  c ? c.endAsync(true).catch(() => undefined) : Promise.resolve();

/** What the feature probes share: the broker's URL, the protocol version it took, the waits. */
interface Probe {
  url: string;
  version: 4 | 5;
  connectMs: number;
  timeoutMs: number;
  /** box/{probe id}/probe: every probe topic is under it. */
  base: string;
  id: string;
  /** The probe's client id for one role. */
  cid(role: string): string;
  /** Clients to end when the probe is over. */
  clients: MqttClient[];
}

/** Connects a client of the probe, or throws BrokerUnreachable. */
async function connectFor(p: Probe, role: string, extra: IClientOptions = {}): Promise<MqttClient> {
  const a = await attempt(
    p.url,
    { clientId: p.cid(role), clean: true, protocolVersion: p.version, ...extra },
    p.connectMs,
  );
  if (a.kind !== 'connected') {
    throw new BrokerUnreachable(
      `the MQTT broker at ${redact(p.url)} took the server's login once but not again: ${describe(a)}`,
    );
  }
  p.clients.push(a.client);
  return a.client;
}

/**
 * Probes the broker at `url` (the server's MQTT_URL, login included) for each feature boxhub
 * needs. Returns what is missing, each with what the broker did; throws BrokerUnreachable when
 * it cannot log in at all.
 */
export async function probeBroker(url: string, o: ProbeOptions): Promise<MissingFeature[]> {
  const id = `boxhub-probe-${randomBytes(6).toString('hex')}`;
  const p: Probe = {
    url,
    version: 5,
    connectMs: o.connectTimeoutMs ?? 30_000,
    timeoutMs: o.timeoutMs ?? 5000,
    base: `box/${id}/probe`,
    id,
    cid: (role) => `${o.clientIdPrefix}-probe-${role}-${id.slice(-12)}`,
    clients: [],
  };
  const missing: MissingFeature[] = [];
  const note = (feature: BrokerFeature, why: string | undefined): void => {
    if (why) missing.push({ feature, why });
  };
  try {
    // MQTT 5 first: the others are probed over MQTT 3.1.1 when the broker speaks only that, so
    // the message names everything missing at once.
    const { client: main, why } = await connectMain(p);
    note('mqtt5', why);
    const other = await connectFor(p, 'b');
    note('qos1', await probeQos1(p, main, other));
    note('retained', await probeRetained(p, main));
    note('shared_subscriptions', await probeShared(p, main, other));
    note('sessions', p.version === 5 ? await probeSession(p, other) : 'session expiry is an MQTT 5 feature');
  } finally {
    await Promise.all(p.clients.map(end));
  }
  return missing;
}

/** The first connection: MQTT 5, else MQTT 3.1.1 and why not 5. */
async function connectMain(p: Probe): Promise<{ client: MqttClient; why?: string }> {
  const v5 = await attempt(p.url, { clientId: p.cid('a'), clean: true, protocolVersion: 5 }, p.connectMs);
  if (v5.kind === 'connected') {
    p.clients.push(v5.client);
    return { client: v5.client };
  }
  if (v5.kind === 'refused' && !UNSUPPORTED_VERSION.has(v5.code)) {
    throw new BrokerUnreachable(`MQTT broker ${redact(p.url)} refused the server's login: ${v5.message}`);
  }
  if (v5.kind === 'failed') {
    throw new BrokerUnreachable(
      v5.timedOut
        ? `could not reach the MQTT broker at ${redact(p.url)} within ${p.connectMs} ms`
        : `could not reach the MQTT broker at ${redact(p.url)}: ${v5.error.message}`,
    );
  }
  const v4 = await attempt(p.url, { clientId: p.cid('a'), clean: true, protocolVersion: 4 }, p.connectMs);
  if (v4.kind !== 'connected') {
    throw new BrokerUnreachable(
      `could not log in to the MQTT broker at ${redact(p.url)} with MQTT 5 or MQTT 3.1.1: ${describe(v4)}`,
    );
  }
  p.clients.push(v4.client);
  p.version = 4;
  return {
    client: v4.client,
    why:
      v5.kind === 'refused'
        ? `it refused an MQTT 5 CONNECT (${v5.message}) and accepted MQTT 3.1.1`
        : 'it closed the connection on an MQTT 5 CONNECT without a CONNACK, and accepted MQTT 3.1.1',
  };
}

/** QoS 1: granted as asked, a PUBACK for a publish, delivered at QoS 1. */
async function probeQos1(p: Probe, main: MqttClient, other: MqttClient): Promise<string | undefined> {
  const topic = `${p.base}/qos`;
  const granted = await grant(main, topic, 1, p.timeoutMs);
  if (granted === NO_SUBACK || granted >= 0x80)
    return `it refused a QoS 1 subscription to ${topic} (${refusal(granted)})`;
  if (granted !== 1) return `it granted QoS ${granted} for a QoS 1 subscription`;
  const arriving = collect([main], topic, p.timeoutMs, (n) => n >= 1);
  const acked = await withTimeout(other.publishAsync(topic, 'qos', { qos: 1 }), p.timeoutMs);
  const [first] = await arriving.done;
  if (!acked) return `no PUBACK for a QoS 1 publish within ${p.timeoutMs} ms`;
  if (!first) return `a QoS 1 message to ${topic} never reached its subscriber`;
  return first.qos === 1 ? undefined : `a QoS 1 message arrived at QoS ${first.qos}`;
}

/**
 * Retained: published before the subscription, delivered on it with the retain flag. A client
 * of its own publishes it: a broker without retained messages may disconnect it (MQTT 5 reason
 * 0x9A).
 */
async function probeRetained(p: Probe, main: MqttClient): Promise<string | undefined> {
  const topic = `${p.base}/retained`;
  const publisher = await connectFor(p, 'r');
  const closed = new Promise<never>((_, reject) => publisher.once('close', () => reject(new Error('closed'))));
  closed.catch(() => undefined);
  const sent = publisher.publishAsync(topic, 'retained', { qos: 1, retain: true });
  if (!(await withTimeout(Promise.race([sent, closed]), p.timeoutMs))) {
    return 'it closed the connection on a retained publish, or did not acknowledge it';
  }
  const arriving = collect([main], topic, p.timeoutMs, (n) => n >= 1);
  await grant(main, topic, 1, p.timeoutMs);
  const retained = await arriving.done;
  // An empty retained message deletes it ([MQTT-3.3.1-10]).
  await withTimeout(publisher.publishAsync(topic, '', { qos: 1, retain: true }), p.timeoutMs);
  return retained.some((m) => m.retain)
    ? undefined
    : 'a new subscription did not receive the message retained on its topic';
}

/**
 * Shared subscriptions: two members of one group, four messages: four deliveries in all. A
 * broker that reads $share/… as a literal topic delivers none; one that ignores the group
 * delivers each message to both. A fence on a plain topic, published after them, reaches each
 * member after any of the four it was given (one publisher, in order).
 */
async function probeShared(p: Probe, main: MqttClient, other: MqttClient): Promise<string | undefined> {
  const topic = `${p.base}/shared`;
  const fence = `${p.base}/fence`;
  const group = `$share/${p.id}/${topic}`;
  const grants = await Promise.all(
    [main, other].flatMap((c) => [grant(c, group, 1, p.timeoutMs), grant(c, fence, 1, p.timeoutMs)]),
  );
  const refused = [grants[0], grants[2]].find((g) => g !== undefined && (g >= 0x80 || g === NO_SUBACK));
  if (refused !== undefined) return `it refused a subscription to ${group} (${refusal(refused)})`;
  const deliveries = collect([main, other], topic, p.timeoutMs, (n) => n >= 8);
  const fenced = collect([main, other], fence, p.timeoutMs, (n) => n >= 2);
  for (let i = 0; i < 4; i++) await withTimeout(other.publishAsync(topic, `shared ${i}`, { qos: 1 }), p.timeoutMs);
  await withTimeout(other.publishAsync(fence, 'fence', { qos: 1 }), p.timeoutMs);
  await fenced.done;
  deliveries.stop();
  const got = await deliveries.done;
  if (got.length === 0)
    return `members of ${group} received none of the messages published to ${topic} (it reads $share/… as a plain topic)`;
  if (got.length > 4) return `each member of ${group} received every message (it ignores the share group)`;
  return undefined;
}

/**
 * Sessions: a client with clean start off and a session expiry leaves and comes back: its
 * session is there, with the QoS 1 message published meanwhile.
 */
async function probeSession(p: Probe, publisher: MqttClient): Promise<string | undefined> {
  const topic = `${p.base}/session`;
  const opts: IClientOptions = {
    clientId: p.cid('s'),
    clean: false,
    protocolVersion: 5,
    properties: { sessionExpiryInterval: 60 },
  };
  const first = await attempt(p.url, opts, p.connectMs);
  if (first.kind !== 'connected')
    return sessionRefusal(p, 'a CONNECT with clean start off and a session expiry was not accepted', first);
  try {
    const g = await grant(first.client, topic, 1, p.timeoutMs);
    if (g !== 1)
      return `a QoS 1 subscription of the session was not granted (${g === NO_SUBACK || g >= 0x80 ? refusal(g) : `QoS ${g}`})`;
  } finally {
    await first.client.endAsync().catch(() => undefined);
  }
  await withTimeout(publisher.publishAsync(topic, 'queued', { qos: 1 }), p.timeoutMs);
  const early: string[] = [];
  const again = await attempt(p.url, opts, p.connectMs, early);
  if (again.kind !== 'connected') return sessionRefusal(p, 'the reconnect to the session was not accepted', again);
  try {
    if (!again.connack.sessionPresent)
      return 'a client that came back within its session expiry found no session (CONNACK session present 0)';
    if (early.includes(topic)) return undefined;
    const got = await collect([again.client], topic, p.timeoutMs, (n) => n >= 1).done;
    return got.length > 0
      ? undefined
      : 'the QoS 1 message published while the client was away was not delivered when it came back';
  } finally {
    // Ends the session for good: a session expiry of 0 on DISCONNECT ([MQTT-3.14.2-2] allows
    // it since the CONNECT had one).
    await new Promise<void>((r) => again.client.end(false, { properties: { sessionExpiryInterval: 0 } }, () => r()));
  }
}

/**
 * Why a session's CONNECT counts against the broker; throws BrokerUnreachable when it failed on
 * the network (the broker went away in the middle of the check, e.g. restarting: the chaos soak
 * saw a node stop itself for "no sessions" on a connection refused, docs/chaos.md).
 */
export function sessionRefusal(p: { url: string }, what: string, a: Exclude<Attempt, { kind: 'connected' }>): string {
  if (a.kind === 'failed' && !a.timedOut)
    throw new BrokerUnreachable(`lost the MQTT broker at ${redact(p.url)} during its check: ${a.error.message}`);
  return `${what}: ${describe(a)}`;
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
  const limit = new Promise<boolean>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => false,
      ),
      limit,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The message naming what is missing, and why, for the startup error and the log. */
function unfitMessage(url: string, missing: MissingFeature[]): string {
  const what = missing.map((m) => FEATURE_NAMES[m.feature]).join(', ');
  const why = missing.map((m) => `${FEATURE_NAMES[m.feature]}: ${m.why}`).join('; ');
  return (
    `the MQTT broker at ${redact(url)} lacks what boxhub needs (${what}), so messages would be lost: ${why}. ` +
    'Use a broker with MQTT 5, shared subscriptions, retained messages, QoS 1 and sessions ' +
    '(Mosquitto 2, EMQX 5; docs/box-protocol-broker.md, "Brokers"), or unset MQTT_URL for the embedded broker'
  );
}
