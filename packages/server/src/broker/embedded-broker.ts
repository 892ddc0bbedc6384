// aedes in this process: the default, single-node box link. Boxes authenticate with their
// uuid and secret and reach only their own topics (device-acl.ts).
import { createServer, type Server } from 'node:net';
import { Aedes } from 'aedes';
import type { Broker, DeviceAuthenticator, MessageHandler } from './types.ts';
import { MAX_BOX_MESSAGE_BYTES } from './types.ts';
import { mayPublish, maySubscribe } from './device-acl.ts';

export interface EmbeddedBrokerOptions {
  host: string;
  port: number;
  authenticate: DeviceAuthenticator;
  onError?: (err: Error) => void;
}

type AuthError = Error & { returnCode: number };
const authError = (code: number, msg: string): AuthError => Object.assign(new Error(msg), { returnCode: code });

export class EmbeddedBroker implements Broker {
  private readonly aedes: Aedes;
  private readonly server: Server;
  listenUrl: string | undefined;

  private constructor(aedes: Aedes, server: Server) { this.aedes = aedes; this.server = server; }

  static async start(opts: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
    const aedes = await Aedes.createBroker({
      authenticate: (client, username, password, done) => {
        // [MQTT-3.1.3-5] client id = device uuid; it must match the username it logs in with.
        if (!username || !password || client.id !== username) {
          done(authError(4, 'bad username or password'), false);
          return;
        }
        opts.authenticate(username, password.toString('utf8')).then(
          (ok) => done(ok ? null : authError(4, 'bad username or password'), ok),
          () => done(authError(3, 'server unavailable'), false),
        );
      },
      authorizePublish: (client, packet, done) => {
        if (!client) { done(null); return; } // the server's own publishes
        if (packet.payload.length > MAX_BOX_MESSAGE_BYTES) { done(new Error('message too large')); return; }
        done(mayPublish(client.id, packet.topic) ? null : new Error(`topic not allowed: ${packet.topic}`));
      },
      authorizeSubscribe: (client, sub, done) => {
        // A refused filter gets SUBACK 0x80 (failure) rather than a dropped connection.
        done(null, maySubscribe(client.id, sub.topic) ? sub : null);
      },
    });
    // noDelay: without it Nagle adds tens of ms to every command round trip (measured).
    const server = createServer({ noDelay: true }, aedes.handle as (s: import('node:net').Socket) => void);
    server.on('error', (e) => opts.onError?.(e));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => { server.off('error', reject); resolve(); });
    });
    const b = new EmbeddedBroker(aedes, server);
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : opts.port;
    b.listenUrl = `mqtt://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
    return b;
  }

  get connectedClients(): number { return this.aedes.connectedClients; }

  publish(topic: string, payload: string | Buffer, opts: { qos?: 0 | 1; retain?: boolean } = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      this.aedes.publish({
        cmd: 'publish', topic, payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
        qos: opts.qos ?? 1, retain: opts.retain ?? false, dup: false,
      }, (err) => (err ? reject(err) : resolve()));
    });
  }

  subscribe(filter: string, handler: MessageHandler): Promise<void> {
    return new Promise((resolve) => {
      this.aedes.subscribe(filter, (packet, cb) => {
        try { handler(packet.topic, Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload)); } finally { cb(); }
      }, () => resolve());
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
