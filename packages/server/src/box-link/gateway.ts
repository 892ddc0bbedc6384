// The server's side of the box link (docs/box-protocol.md): applies presence and state the
// boxes report, sends commands and waits for their acknowledgement, and hands box events to
// whoever registered for them. The database holds the truth; the broker only signals, and
// every message is applied idempotently (QoS 1 is at-least-once).
import { randomUUID } from 'node:crypto';
import {
  Ack, ApiError, BOX_PROTOCOL_VERSION, BoxEvent, BoxState, parseBoxTopic, parseJson, Presence, topics,
  type Command,
} from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Broker } from '../broker/types.ts';
import type { Clock } from '../clock.ts';
import type { DeviceRepository } from '../modules/devices/repository.ts';
import { KeyedQueue } from './keyed-queue.ts';

export type EventHandler = (uuid: string, event: BoxEvent) => Promise<void>;

interface Pending { uuid: string; resolve: (a: Ack) => void; timer: NodeJS.Timeout }

export interface GatewayOptions {
  broker: Broker;
  devices: DeviceRepository;
  clock: Clock;
  nodeId: string;
  log: Logger;
  commandTimeoutMs: number;
}

export class BoxGateway {
  private readonly o: GatewayOptions;
  private readonly pending = new Map<string, Pending>();
  private readonly queue = new KeyedQueue();
  private readonly eventHandlers = new Map<string, EventHandler>();

  constructor(o: GatewayOptions) { this.o = o; }

  async start(): Promise<void> {
    const { broker, nodeId } = this.o;
    await broker.subscribe('box/+/presence', (t, p) => this.onMessage(t, p), { shared: true });
    await broker.subscribe('box/+/state', (t, p) => this.onMessage(t, p), { shared: true });
    await broker.subscribe('box/+/event', (t, p) => this.onMessage(t, p), { shared: true });
    await broker.subscribe(`box/+/ack/${nodeId}`, (t, p) => this.onMessage(t, p));
  }

  /** Registers the handler for one box event type (scan.*, print.*). */
  onEvent(type: string, handler: EventHandler): void { this.eventHandlers.set(type, handler); }

  /**
   * Sends a command and resolves with the box's acknowledgement. Rejects with 30005 when
   * none arrives within the timeout. Callers check that the box is online first.
   */
  async command(uuid: string, type: string, params: Record<string, unknown> = {}, timeoutMs = this.o.commandTimeoutMs): Promise<Ack> {
    const id = randomUUID();
    const cmd: Command = {
      v: BOX_PROTOCOL_VERSION, id, type, reply_to: this.o.nodeId,
      expires_at: this.o.clock.now() + timeoutMs, params,
    };
    const acked = new Promise<Ack>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ApiError('DEVICE_TIMEOUT', `device did not acknowledge '${type}' within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { uuid, resolve, timer });
    });
    try {
      await this.o.broker.publish(topics.cmd(uuid), JSON.stringify(cmd), { qos: 1 });
    } catch (e) {
      const p = this.pending.get(id);
      if (p) { clearTimeout(p.timer); this.pending.delete(id); }
      throw new ApiError('SERVICE_UNAVAILABLE', `could not reach the box link: ${(e as Error).message}`);
    }
    return acked;
  }

  /** Waits until every message received so far has been applied (tests, shutdown). */
  drain(): Promise<void> { return this.queue.drain(); }

  close(): void {
    for (const [id, p] of this.pending) { clearTimeout(p.timer); this.pending.delete(id); }
  }

  private onMessage(topic: string, payload: Buffer): void {
    const t = parseBoxTopic(topic);
    if (!t) return;
    if (t.kind === 'ack') { this.onAck(t.uuid, payload); return; }
    void this.queue.run(t.uuid, () => this.apply(t.uuid, t.kind, payload)).catch((err: unknown) => {
      this.o.log.error({ err, uuid: t.uuid, kind: t.kind }, 'box message not applied');
    });
  }

  private reject(uuid: string, kind: string, error: string): void {
    this.o.log.warn({ uuid, kind, error }, 'box message rejected');
  }

  private async apply(uuid: string, kind: string, payload: Buffer): Promise<void> {
    const now = this.o.clock.now();
    if (kind === 'presence') {
      const m = parseJson(Presence, payload);
      if (!m.ok) return this.reject(uuid, kind, m.error);
      if (m.value.online) await this.o.devices.markOnline(uuid, m.value.session, now);
      else await this.o.devices.markOffline(uuid, m.value.session, now);
    } else if (kind === 'state') {
      const m = parseJson(BoxState, payload);
      if (!m.ok) return this.reject(uuid, kind, m.error);
      await this.o.devices.saveState(uuid, JSON.stringify(m.value), now);
    } else if (kind === 'event') {
      const m = parseJson(BoxEvent, payload);
      if (!m.ok) return this.reject(uuid, kind, m.error);
      const h = this.eventHandlers.get(m.value.type);
      if (!h) return this.reject(uuid, kind, `no handler for event type ${m.value.type}`);
      await h(uuid, m.value);
    }
  }

  private onAck(uuid: string, payload: Buffer): void {
    const m = parseJson(Ack, payload);
    if (!m.ok) return this.reject(uuid, 'ack', m.error);
    const p = this.pending.get(m.value.id);
    // An ack for another box's command is ignored (the ACL already stops it; this is depth).
    if (!p || p.uuid !== uuid) return;
    clearTimeout(p.timer);
    this.pending.delete(m.value.id);
    p.resolve(m.value);
  }
}
