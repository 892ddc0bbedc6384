// The server's side of the box link (docs/box-protocol.md): applies presence and state the
// boxes report, sends commands and waits for their acknowledgement, and hands box events to
// whoever registered for them. The database holds the truth; the broker only signals. Presence
// and state are idempotent; events are not de-duplicated here (QoS 1 is at-least-once), so an
// event handler applies each event once by its id.
import { randomUUID } from 'node:crypto';
import {
  Ack,
  ApiError,
  BOX_PROTOCOL_VERSION,
  BoxRequest,
  BoxState,
  compileAhead,
  JobEvent,
  parseBoxTopic,
  parseJson,
  Presence,
  topics,
  type Command,
  type CommandType,
  type JobCommandType,
  messageOf,
} from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Broker } from '../broker/types.ts';
import type { Clock } from '../clock.ts';
import { asBackground } from '../db/background-work.ts';
import type { DeviceRow } from '../db/schema.ts';
import { KeyedQueue } from './keyed-queue.ts';

/** Applies a box's job event; resolves once it is applied (or known to be a duplicate). */
export type JobEventHandler = (uuid: string, event: JobEvent) => Promise<void>;
export type RequestHandler = (uuid: string, request: BoxRequest) => Promise<void>;
export type StateListener = (uuid: string, state: BoxState, at: number) => Promise<void>;

const KNOWN_DEVICE_TTL_MS = 60_000;
/** Box messages applied at once; the rest wait in the gateway's queue (keyed-queue.ts). */
const BOX_MESSAGES_IN_FLIGHT = 128;
const KNOWN_DEVICE_CACHE_MAX = 100_000;

interface Pending {
  uuid: string;
  resolve: (a: Ack) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** What the gateway records of a box: its presence and its state. The devices repository
 *  (modules/devices/repository.ts) is one; the gateway sits below the modules and names only this. */
export interface DevicePresence {
  markOnline(uuid: string, session: string, at: number): Promise<boolean>;
  markOffline(uuid: string, session: string, at: number): Promise<boolean>;
  findByUuid(uuid: string): Promise<DeviceRow | undefined>;
  saveState(uuid: string, state: string, at: number): Promise<void>;
}

export interface GatewayOptions {
  broker: Broker;
  devices: DevicePresence;
  clock: Clock;
  nodeId: string;
  log: Logger;
  commandTimeoutMs: number;
}

export class BoxGateway {
  private readonly o: GatewayOptions;
  private readonly pending = new Map<string, Pending>();
  private readonly queue: KeyedQueue;
  private jobEvents: JobEventHandler | undefined;
  private requests: RequestHandler | undefined;
  private readonly stateListeners: StateListener[] = [];
  /** Set by close(): box messages are no longer taken. */
  private closing = false;
  private readonly presenceListeners: ((uuid: string, online: boolean) => Promise<void>)[] = [];
  /** Per box, the arrival number of the newest `online` received and not yet applied (see onMessage()). */
  private readonly newestOnline = new Map<string, number>();
  private arrivals = 0;
  /** Devices of this deployment seen lately (uuid → when looked up), see isOurs(). */
  private readonly known = new Map<string, number>();

  constructor(o: GatewayOptions) {
    this.o = o;
    this.queue = new KeyedQueue(BOX_MESSAGES_IN_FLIGHT);
  }

  async start(): Promise<void> {
    const { broker, nodeId } = this.o;
    compileAhead(Presence, BoxState, JobEvent, BoxRequest, Ack);
    await broker.subscribe('box/+/presence', (t, p) => this.onMessage(t, p), { shared: true });
    await broker.subscribe('box/+/state', (t, p) => this.onMessage(t, p), { shared: true });
    await broker.subscribe('box/+/event', (t, p) => this.onMessage(t, p), { shared: true });
    await broker.subscribe('box/+/req', (t, p) => this.onMessage(t, p), { shared: true });
    await broker.subscribe(`box/+/ack/${nodeId}`, (t, p) => this.onMessage(t, p));
    await this.catchUp();
    broker.onReconnect?.(() => {
      this.catchUp().catch((err: unknown) =>
        this.o.log.warn({ err }, 'retained presence and state not read after reconnecting to the broker'),
      );
    });
  }

  /**
   * A box that left while no node was listening (every node down or cut off from an external
   * broker) left its last will on a shared subscription with no member, where it is lost; the
   * table would call it online for good. So is a state it reported meanwhile (paper out). The
   * broker retains each box's latest presence and state, so a node reads them all when it
   * (re)connects and applies them like live ones (session guards make a stale presence
   * harmless; a state the table already holds is skipped), and serves only once they are
   * applied (docs/box-protocol.md).
   */
  private async catchUp(): Promise<void> {
    const { broker } = this.o;
    if (!broker.readRetained) return;
    await broker.readRetained('box/+/presence', (t, p) => this.onMessage(t, p, true));
    await broker.readRetained('box/+/state', (t, p) => this.onMessage(t, p, true));
    await this.queue.drain();
  }

  /** The handler of job events (box-link/job-events.ts). */
  onJobEvent(handler: JobEventHandler): void {
    this.jobEvents = handler;
  }
  /** The handler of box requests (box-link/requests.ts). */
  onRequest(handler: RequestHandler): void {
    this.requests = handler;
  }
  /** Called after each state a box reports has been stored (task reconciliation). */
  onState(listener: StateListener): void {
    this.stateListeners.push(listener);
  }
  /** Called after a presence changed the device's row (device events). */
  onPresence(listener: (uuid: string, online: boolean) => Promise<void>): void {
    this.presenceListeners.push(listener);
  }

  /** Sends a one-way message (events.ack, reply): nothing waits for an answer. */
  async send(uuid: string, type: JobCommandType, params: Record<string, unknown>): Promise<void> {
    const cmd: Command = {
      v: BOX_PROTOCOL_VERSION,
      id: randomUUID(),
      type,
      reply_to: this.o.nodeId,
      expires_at: this.o.clock.now() + this.o.commandTimeoutMs,
      params,
    };
    await this.o.broker.publish(topics.cmd(uuid), JSON.stringify(cmd), { qos: 1 });
  }

  /**
   * Sends a command and resolves with the box's acknowledgement. Rejects with 30005 when
   * none arrives within the timeout. Callers check that the box is online first.
   */
  async command(
    uuid: string,
    type: CommandType,
    params: Record<string, unknown> = {},
    timeoutMs = this.o.commandTimeoutMs,
  ): Promise<Ack> {
    const id = randomUUID();
    const cmd: Command = {
      v: BOX_PROTOCOL_VERSION,
      id,
      type,
      reply_to: this.o.nodeId,
      expires_at: this.o.clock.now() + timeoutMs,
      params,
    };
    const acked = new Promise<Ack>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ApiError('DEVICE_TIMEOUT', `device did not acknowledge '${type}' within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { uuid, resolve, reject, timer });
    });
    // The wait may run out while the publish itself still waits (a broker restarting holds a
    // QoS 1 publish until it is back): handled here, that rejection is not an unhandled one,
    // which ended a node (the chaos soak, docs/chaos.md); the caller still gets it below.
    acked.catch(() => undefined);
    try {
      await this.o.broker.publish(topics.cmd(uuid), JSON.stringify(cmd), { qos: 1 });
    } catch (e) {
      const p = this.pending.get(id);
      if (p) {
        clearTimeout(p.timer);
        this.pending.delete(id);
      }
      throw new ApiError('SERVICE_UNAVAILABLE', `could not reach the box link: ${messageOf(e)}`);
    }
    return acked;
  }

  /** Waits until every message received so far has been applied (tests, shutdown). */
  drain(): Promise<void> {
    return this.queue.drain();
  }

  /**
   * Stops taking box messages and waits for those already received to be applied, with what
   * they set off (device events, rollouts, the fleet's history: their batches, db/turn-batch.ts),
   * so that none of it runs after the node has closed its database. A message that comes after
   * is dropped: each kind comes again to a node that is up (events and requests are sent again
   * until acknowledged, presence and state are retained and read on start; docs/box-protocol.md).
   * A command still waiting for its box's acknowledgement is answered at once: what waits for it
   * (an API request, a message being applied) must not hold the shutdown for its whole timeout.
   */
  async close(): Promise<void> {
    this.closing = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new ApiError('SERVICE_UNAVAILABLE', 'the node is shutting down'));
    }
    await this.queue.drain();
  }

  /** `retained`: from a node's catch-up read (catchUp()), not news from the box. */
  private onMessage(topic: string, payload: Buffer, retained = false): void {
    if (this.closing) return;
    const t = parseBoxTopic(topic);
    if (!t) return;
    if (t.kind === 'ack') {
      this.onAck(t.uuid, payload);
      return;
    }
    // An end of session that a newer session's `online` of the same box has already overtaken
    // in the queue is not applied (docs/box-protocol.md, "Presence"): the row goes straight to
    // the newer session. A broker's return brings every box's will in one retained read while
    // the boxes are already reconnecting; applying each will and then each `online` doubled the
    // node's work when it could least afford it (bench/README.md, "reconnect-storm").
    // An `online` overtaken is applied all the same: its session is ended by its own will,
    // which follows it.
    const arrival = ++this.arrivals;
    // A presence is parsed once, here: whether it is an `online` decides its place in the queue.
    const presence = t.kind === 'presence' ? parseJson(Presence, payload) : undefined;
    const online = presence?.ok === true && presence.value.online;
    if (online) this.newestOnline.set(t.uuid, arrival);
    // Background work: the API's requests reach the database before it (db/background-work.ts).
    void this.queue
      .run(t.uuid, () =>
        asBackground(async () => {
          const newest = this.newestOnline.get(t.uuid);
          if (t.kind === 'presence' && newest !== undefined) {
            if (newest > arrival && !online) return;
            if (newest === arrival) this.newestOnline.delete(t.uuid);
          }
          return this.apply(t.uuid, t.kind, payload, retained, presence);
        }),
      )
      .catch((err: unknown) => {
        this.o.log.error({ err, uuid: t.uuid, kind: t.kind }, 'box message not applied');
      });
  }

  private reject(uuid: string, kind: string, error: string): void {
    this.o.log.warn({ uuid, kind, error }, 'box message rejected');
  }

  /** `presence`: a presence message as onMessage() parsed it. */
  private async apply(
    uuid: string,
    kind: string,
    payload: Buffer,
    retained: boolean,
    presence?: ReturnType<typeof parseJson<typeof Presence>>,
  ): Promise<void> {
    const now = this.o.clock.now();
    // A broker may serve several deployments (docs/box-protocol-broker.md): a box this one never
    // registered is another's, and acting on its state, events or requests (cancelling jobs it
    // does not know, acknowledging events, answering requests) would break that deployment.
    if (!(await this.isOurs(uuid, now))) return;
    if (kind === 'presence') {
      const m = presence ?? parseJson(Presence, payload);
      if (!m.ok) return this.reject(uuid, kind, m.error);
      const changed = m.value.online
        ? await this.o.devices.markOnline(uuid, m.value.session, now)
        : await this.o.devices.markOffline(uuid, m.value.session, now);
      if (changed) for (const l of this.presenceListeners) await l(uuid, m.value.online);
    } else if (kind === 'state') {
      const m = parseJson(BoxState, payload);
      if (!m.ok) return this.reject(uuid, kind, m.error);
      const text = JSON.stringify(m.value);
      // A live state always goes to the listeners (task reconciliation may act on the same
      // state again); a retained one the table already holds is no news.
      if (retained && (await this.o.devices.findByUuid(uuid))?.state === text) return;
      await this.o.devices.saveState(uuid, text, now);
      for (const l of this.stateListeners) await l(uuid, m.value, now);
    } else if (kind === 'event') {
      const m = parseJson(JobEvent, payload);
      if (!m.ok) return this.reject(uuid, kind, m.error);
      if (!this.jobEvents) return this.reject(uuid, kind, 'no job event handler');
      await this.jobEvents(uuid, m.value);
    } else if (kind === 'req') {
      const m = parseJson(BoxRequest, payload);
      if (!m.ok) return this.reject(uuid, kind, m.error);
      if (!this.requests) return this.reject(uuid, kind, 'no request handler');
      await this.requests(uuid, m.value);
    }
  }

  /**
   * The embedded broker has just read this device's row to check its login: its messages need
   * not read it again to know it is registered here (one statement less per box in a storm).
   */
  loggedIn(uuid: string): void {
    if (this.known.size >= KNOWN_DEVICE_CACHE_MAX) this.known.clear();
    this.known.set(uuid, this.o.clock.now());
  }

  /** Whether the device is registered here; a positive answer is kept a minute (a deleted
   *  device's late messages then change no row: every write is keyed by its uuid). */
  private async isOurs(uuid: string, now: number): Promise<boolean> {
    const seen = this.known.get(uuid);
    if (seen !== undefined && now - seen < KNOWN_DEVICE_TTL_MS && now >= seen) return true;
    const row = await this.o.devices.findByUuid(uuid);
    if (!row) {
      this.known.delete(uuid);
      return false;
    }
    if (this.known.size >= KNOWN_DEVICE_CACHE_MAX) this.known.clear();
    this.known.set(uuid, now);
    return true;
  }

  private onAck(uuid: string, payload: Buffer): void {
    const m = parseJson(Ack, payload);
    if (!m.ok) {
      this.reject(uuid, 'ack', m.error);
      return;
    }
    const p = this.pending.get(m.value.id);
    // An ack for another box's command is ignored (the ACL already stops it; this is depth).
    if (!p || p.uuid !== uuid) return;
    clearTimeout(p.timer);
    this.pending.delete(m.value.id);
    p.resolve(m.value);
  }
}
