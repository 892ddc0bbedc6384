// aedes in this process: the default, single-node box link. Boxes authenticate with their
// uuid and secret and reach only their own topics (device-acl.ts).
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes } from 'aedes';
import { systemClock, type Clock } from '../clock.ts';
import type { Limit } from '../config.ts';
import { addressKey } from '../http/rate-limits.ts';
import { MemoryWindows } from '../http/rate-limit-stores.ts';
import type { Broker, DeviceAuthenticator, MessageHandler } from './types.ts';
import { MAX_BOX_MESSAGE_BYTES } from './types.ts';
import { mayPublish, maySubscribe } from './device-acl.ts';
import { FrameGuard, type FrameProblem } from './frame-guard.ts';
import { Admission, LoopLag, type AdmissionLimits } from './admission.ts';
import { indexedMemoryPersistence } from './retained-index.ts';
import { PacedHandover } from './paced-handover.ts';

export interface EmbeddedBrokerOptions {
  host: string;
  port: number;
  authenticate: DeviceAuthenticator;
  onError?: (err: Error) => void;
  /** Largest packet read (BOXHUB_MQTT_MAX_PACKET_BYTES); a larger one closes the connection. */
  maxPacketBytes?: number;
  /** Connection attempts per client address (BOXHUB_MQTT_CONNECT_LIMIT); max 0: no limit. */
  connectLimit?: Limit;
  /**
   * Logins checked at once, taken per second and the event loop's delay past which none is
   * taken (BOXHUB_MQTT_ADMIT_*); past them a login waits its turn a while, then gets CONNACK 3
   * (admission.ts). Absent: no limit.
   */
  admission?: AdmissionLimits;
  clock?: Clock;
  /**
   * A connection closed by a limit (logs and metrics): 'connect_rate' or 'packet_size', or a
   * login refused by admission control, 'admission_busy', 'admission_rate' or 'admission_lag'. `first` is set on
   * the first refusal of an address and window, and for admission once a second at most.
   */
  onRefused?: (reason: RefusalReason, detail: { address?: string; bytes?: number; first: boolean }) => void;
}

export type RefusalReason = 'connect_rate' | 'packet_size' | 'admission_busy' | 'admission_rate' | 'admission_lag';

/**
 * Connections the kernel holds for the node between two turns of its event loop (Linux caps it
 * at net.core.somaxconn, 4096 by default). Node's own default, 511, overflowed in a storm of
 * 10,000 boxes: a dropped SYN is tried again by TCP 1, 3, 7, 15 and 31 s after the first (bench/README.md,
 * "reconnect-storm").
 */
const LISTEN_BACKLOG = 4096;

/** Box messages are at most 256 KiB; the rest is room for the topic and properties. */
export const DEFAULT_MAX_PACKET_BYTES = 270_000;

type AuthError = Error & { returnCode: number };
const authError = (code: number, msg: string): AuthError => Object.assign(new Error(msg), { returnCode: code });

export class EmbeddedBroker implements Broker {
  private readonly aedes: Aedes;
  private readonly server: Server;
  listenUrl: string | undefined;

  private readonly opts: EmbeddedBrokerOptions;
  private readonly stopTimers: () => void;
  private constructor(aedes: Aedes, server: Server, opts: EmbeddedBrokerOptions, stopTimers: () => void) {
    this.aedes = aedes;
    this.opts = opts;
    this.server = server;
    this.stopTimers = stopTimers;
  }

  /** The broker, not yet listening (listen()). */
  static async create(opts: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
    const clock = opts.clock ?? systemClock;
    const loopLag = opts.admission?.maxLagMs ? new LoopLag() : undefined;
    const admission = opts.admission ? new Admission(opts.admission, clock, () => loopLag?.ms ?? 0) : undefined;
    let admissionLoggedAt = -Infinity;
    const aedes = await Aedes.createBroker({
      persistence: indexedMemoryPersistence(),
      authenticate: (client, username, password, done) => {
        // [MQTT-3.1.3-5] client id = device uuid; it must match the username it logs in with.
        if (!username || !password || client.id !== username) {
          done(authError(4, 'bad username or password'), false);
          return;
        }
        const admitted = admission ? admission.admit() : Promise.resolve({ ok: true as const, leave: () => undefined });
        void admitted.then((a) => {
          if (!a.ok) {
            const now = clock.now();
            const first = now - admissionLoggedAt >= 1000;
            if (first) admissionLoggedAt = now;
            // A node-wide limit: no address (aedes hands over the framed stream, not the socket).
            opts.onRefused?.(`admission_${a.reason}`, { first });
            done(authError(3, 'server unavailable'), false);
            return;
          }
          // A box that gave up while it waited: nothing to check.
          if ((client as { closed?: boolean }).closed) {
            a.leave();
            done(authError(3, 'server unavailable'), false);
            return;
          }
          opts.authenticate(username, password.toString('utf8')).then(
            (ok) => {
              a.leave();
              done(ok ? null : authError(4, 'bad username or password'), ok);
            },
            () => {
              a.leave();
              done(authError(3, 'server unavailable'), false);
            },
          );
        });
      },
      authorizePublish: (client, packet, done) => {
        if (!client) {
          done(null);
          return;
        } // the server's own publishes
        if (packet.payload.length > MAX_BOX_MESSAGE_BYTES) {
          done(new Error('message too large'));
          return;
        }
        done(mayPublish(client.id, packet.topic) ? null : new Error(`topic not allowed: ${packet.topic}`));
      },
      authorizeSubscribe: (client, sub, done) => {
        // A refused filter gets SUBACK 0x80 (failure) rather than a dropped connection.
        done(null, maySubscribe(client.id, sub.topic) ? sub : null);
      },
    });
    const maxPacket = opts.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES;
    const limit = opts.connectLimit ?? { max: 0, windowMs: 10_000 };
    const attempts = new MemoryWindows(clock);
    const handle = aedes.handle as (s: import('node:stream').Duplex) => void;
    const handover = new PacedHandover<{ socket: Socket; address: string }>(
      ({ socket, address }) => {
        if (socket.destroyed) return; // the box gave up while it waited
        try {
          handle(
            new FrameGuard(socket, maxPacket, (p: FrameProblem) => {
              opts.onRefused?.('packet_size', {
                address,
                first: true,
                ...(p.kind === 'too_large' ? { bytes: p.bytes } : {}),
              });
            }),
          );
          socket.resume();
        } catch (e) {
          socket.destroy();
          opts.onError?.(e as Error);
        }
      },
      ({ socket }) => socket.destroy(),
    );
    // noDelay: without it Nagle adds tens of ms to every command round trip (measured).
    // pauseOnConnect: nothing is read before the connection's turn in `handover`.
    const server = createServer({ noDelay: true, pauseOnConnect: true }, (socket: Socket) => {
      socket.on('error', () => undefined);
      const address = addressKey(socket.remoteAddress ?? '');
      if (limit.max > 0) {
        let current = 0;
        attempts.incr(
          address,
          (_e, r) => {
            current = r.current;
          },
          limit.windowMs,
        );
        if (current > limit.max) {
          // Refused before a byte is read: a flood of connections costs a socket each, no more.
          opts.onRefused?.('connect_rate', { address, first: current === limit.max + 1 });
          socket.destroy();
          return;
        }
      }
      handover.push({ socket, address });
    });
    return new EmbeddedBroker(aedes, server, opts, () => {
      handover.close();
      loopLag?.close();
      admission?.close();
    });
  }

  /** A broker listening at once (tests, and anything that needs no start-up first). */
  static async start(opts: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
    const b = await EmbeddedBroker.create(opts);
    await b.listen();
    return b;
  }

  /**
   * Takes connections from now on. A node calls it last in its start (server.ts): a box that
   * dials a node still starting is refused by the kernel at once (ECONNREFUSED) and backs off,
   * where a listening node busy with its start queued 511 of them, and TCP tried the rest
   * again 1, 3, 7, 15 and 31 s after their first try, past the box's wait for its CONNACK (bench/README.md,
   * "reconnect-storm"). A failure to listen (the port taken) is the caller's to report, once,
   * not a logged error too; aedes is closed then, or its timers would keep the process alive
   * (a `boxhub serve` that neither serves nor exits: docs/configuration.md, "When the service
   * cannot start").
   */
  async listen(): Promise<void> {
    const { server, opts } = this;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port: opts.port, host: opts.host, backlog: LISTEN_BACKLOG }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      await this.closeBroker();
      throw e;
    }
    server.on('error', (e) => opts.onError?.(e));
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : opts.port;
    this.listenUrl = `mqtt://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
  }

  get connectedClients(): number {
    return this.aedes.connectedClients;
  }

  /** aedes keeps its clients by id (aedes.js `this.clients`), which its typings leave out. */
  private get clients(): Record<string, { close(): void }> {
    return (this.aedes as unknown as { clients: Record<string, { close(): void }> }).clients;
  }

  /** Client ids (box uuids) with a session on this broker. */
  sessions(): string[] {
    return Object.keys(this.clients);
  }

  /** Ends a box's session (its last will is published, as for any lost connection). */
  disconnectDevice(uuid: string): void {
    this.clients[uuid]?.close();
  }

  publish(topic: string, payload: string | Buffer, opts: { qos?: 0 | 1; retain?: boolean } = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      this.aedes.publish(
        {
          cmd: 'publish',
          topic,
          payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
          qos: opts.qos ?? 1,
          retain: opts.retain ?? false,
          dup: false,
        },
        (err) => (err ? reject(err) : resolve()),
      );
    });
  }

  subscribe(filter: string, handler: MessageHandler): Promise<void> {
    return new Promise((resolve) => {
      this.aedes.subscribe(
        filter,
        (packet, cb) => {
          try {
            handler(packet.topic, Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload));
          } finally {
            cb();
          }
        },
        () => resolve(),
      );
    });
  }

  async close(): Promise<void> {
    await this.closeBroker();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private brokerClosed = false;
  private async closeBroker(): Promise<void> {
    if (this.brokerClosed) return;
    this.brokerClosed = true;
    this.stopTimers();
    await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
  }
}
