// The box's MQTT connection (docs/box-protocol.md). Connects out, logs in as its uuid with
// its secret, announces itself on box/{uuid}/presence and leaves a last will there, so the
// server learns of a box that vanished without a word within the keepalive window.
// Reconnects itself with backoff and jitter; mqtt.js's fixed-period reconnect is turned off.
// A started link is live work: its reconnect timer holds the process open (a box's agent must
// outlive any outage), and only stop(), kill() or a definitive refusal of its credentials
// (CONNACK 4 or 5, [MQTT-3.2.2-3]) end it. A node that cannot take the box yet says so in its
// CONNACK (busyReason()); the box then waits its next backoff delay like after any failure.
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { BOX_PROTOCOL_VERSION, topics, type Presence } from '@boxhub/protocol';
import { Backoff } from '../timing/backoff.ts';

export interface LinkOptions {
  url: string;
  uuid: string;
  secret: string;
  keepaliveSec: number;
  /** Reconnect delays; `stableMs` (default 30 s): how long a connection must last to reset them. */
  backoff?: { baseMs: number; maxMs: number; stableMs?: number };
  random?: () => number;
  now?: () => number;
  connectTimeoutMs?: number;
}

export interface LinkEvents {
  connected: [];
  disconnected: [reason: string];
  /** The broker refused the credentials (CONNACK 4 bad username or password, 5 not authorized):
   *  retrying cannot help, so the link stops itself. */
  refused: [reason: string];
  /** The node (or broker) cannot take the box yet (busyReason()); the link backs off and retries. */
  busy: [reason: string];
  message: [topic: string, payload: Buffer];
  error: [err: Error];
}

/**
 * The longest wait between attempts. It bounds how long a box stays away after its node or
 * broker is back: a box that waited out an outage draws its next delay from [0, cap], so the
 * last of a fleet returns up to a cap after the restart (docs/box-protocol.md, "Reconnect"; the
 * target is every box back within 30 s, with room left for the node's admission control).
 */
export const DEFAULT_RECONNECT_MAX_MS = 20_000;

/** A connection must last this long before the reconnect delays start again from the base. */
export const DEFAULT_STABLE_MS = 30_000;

/**
 * How long the box waits for its CONNACK once it has sent CONNECT. A node taking a storm of
 * logins answers them in turn; a box that gives up first has cost the node a login it then
 * throws away (and, answered late, a session that takes over the box's next one), and queues
 * again. At 10 s, 10,000 boxes back at one node made about two such timeouts each
 * (bench/README.md, "reconnect-storm"); a node that cannot take a box soon says so (CONNACK 3).
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/**
 * CONNACK codes that mean "not now" rather than "never" (docs/box-protocol.md, "Reconnect"):
 * MQTT 3.1.1 return code 3 (server unavailable: what the embedded broker answers past its
 * admission limit) and the MQTT 5 reason codes 0x88 server unavailable, 0x89 server busy,
 * 0x97 quota exceeded and 0x9F connection rate exceeded. mqtt.js reports either in `code`.
 */
export function busyReason(code: unknown): string | undefined {
  switch (code) {
    case 3:
      return 'server unavailable (CONNACK 3)';
    case 0x88:
      return 'server unavailable (CONNACK 0x88)';
    case 0x89:
      return 'server busy (CONNACK 0x89)';
    case 0x97:
      return 'quota exceeded (CONNACK 0x97)';
    case 0x9f:
      return 'connection rate exceeded (CONNACK 0x9F)';
    default:
      return undefined;
  }
}

export class BoxLink extends EventEmitter<LinkEvents> {
  private readonly o: LinkOptions;
  private client: MqttClient | undefined;
  private readonly backoff: Backoff;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true; // until start()
  private session = '';
  connected = false;
  /** Set when the broker refused the credentials; the link then stays stopped. */
  refusal: string | undefined;

  constructor(o: LinkOptions) {
    super();
    this.o = o;
    this.backoff = new Backoff({
      stableMs: DEFAULT_STABLE_MS,
      ...(o.backoff ?? { baseMs: 1000, maxMs: DEFAULT_RECONNECT_MAX_MS }),
      ...(o.random ? { random: o.random } : {}),
      ...(o.now ? { now: o.now } : {}),
    });
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  private presence(online: boolean): string {
    const p: Presence = { v: BOX_PROTOCOL_VERSION, online, session: this.session };
    return JSON.stringify(p);
  }

  private connect(): void {
    this.session = randomBytes(8).toString('hex');
    const client = mqtt.connect(this.o.url, {
      clientId: this.o.uuid,
      username: this.o.uuid,
      password: this.o.secret,
      clean: true,
      keepalive: this.o.keepaliveSec,
      reconnectPeriod: 0,
      connectTimeout: this.o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      protocolVersion: 4,
      will: { topic: topics.presence(this.o.uuid), payload: Buffer.from(this.presence(false)), qos: 1, retain: true },
    });
    this.client = client;
    // mqtt.js opens its socket with Nagle on, so the ack that follows a PUBACK waits for the
    // peer's delayed ACK (~40 ms per command round trip, measured in bench/control-rtt).
    (client.stream as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true);
    client.on('connect', () => {
      if (this.client !== client) return;
      this.connected = true;
      this.backoff.succeeded();
      client.subscribe(topics.cmd(this.o.uuid), { qos: 1 }, (err, granted) => {
        if (err || granted?.some((g) => g.qos === 128))
          this.emit('error', err ?? new Error('command subscription refused'));
      });
      client.publish(topics.presence(this.o.uuid), this.presence(true), { qos: 1, retain: true });
      this.emit('connected');
    });
    client.on('message', (topic, payload) => this.emit('message', topic, payload));
    client.on('error', (err) => {
      const code = 'code' in err ? err.code : undefined;
      // MQTT 3.1.1 CONNACK return codes 4 and 5 answer the credentials themselves; 1-3
      // (protocol, identifier, server unavailable) and network errors are transient.
      if (code === 4 || code === 5) {
        if (this.client !== client) return;
        this.refusal = code === 4 ? 'bad username or password (CONNACK 4)' : 'not authorized (CONNACK 5)';
        this.stopped = true;
        this.emit('refused', this.refusal);
        return;
      }
      const busy = busyReason(code);
      if (busy !== undefined) {
        if (this.client === client) this.emit('busy', busy);
        return;
      }
      this.emit('error', err);
    });
    client.on('close', () => {
      if (this.client !== client) return;
      const was = this.connected;
      this.connected = false;
      client.removeAllListeners('connect');
      client.end(true);
      if (was) this.emit('disconnected', 'connection closed');
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.timer) return;
    const delay = this.backoff.next();
    // Not unref'd: while the box waits to reconnect nothing else may hold the event loop,
    // and an unref'd timer let the agent process exit at the first outage.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) this.connect();
    }, delay);
  }

  async publish(topic: string, payload: string, opts: { qos?: 0 | 1; retain?: boolean } = {}): Promise<void> {
    const c = this.client;
    if (!c || !this.connected) throw new Error('not connected');
    await c.publishAsync(topic, payload, { qos: opts.qos ?? 1, retain: opts.retain ?? false });
  }

  /** Between start() and stop() (or a refusal): connected, connecting, or waiting to try again. */
  get started(): boolean {
    return !this.stopped;
  }

  /** Says goodbye (presence offline) and disconnects; no reconnect until start() again. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const c = this.client;
    this.client = undefined;
    if (!c) return;
    if (this.connected) {
      await c
        .publishAsync(topics.presence(this.o.uuid), this.presence(false), { qos: 1, retain: true })
        .catch(() => undefined);
    }
    this.connected = false;
    await c.endAsync().catch(() => undefined);
    this.emit('disconnected', 'stopped');
  }

  /** Drops the connection without a goodbye, as a crash or cable pull would (tests). */
  kill(): void {
    const c = this.client;
    this.stopped = true;
    this.client = undefined;
    this.connected = false;
    c?.stream?.destroy();
    c?.end(true);
  }
}
