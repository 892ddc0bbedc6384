// A TCP proxy on loopback between a box and its broker, for real network faults in tests:
// cut() resets every connection (the box sees the network drop), partition() keeps the
// sockets open but stops forwarding (a silent partition: only keepalive can notice), down()
// resets every connection and every new one (the broker is gone: its host answers with RST),
// and retarget() points it at another broker (a server that came back on another port).
// The proxy's own port never changes, so a test never releases a port for another to take.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  url: string;
  port: number;
  cut(): void;
  partition(on: boolean): void;
  /** While on, every connection is reset as soon as it opens. */
  down(on: boolean): void;
  retarget(host: string, port: number): void;
  /** Connections accepted so far (including those reset while down). */
  readonly accepted: number;
  /** Date.now() when bytes from a client last reached the target (0: never). */
  readonly lastForwardedAt: number;
  close(): Promise<void>;
  readonly connections: number;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let partitioned = false;
  let isDown = false;
  let accepted = 0;
  let lastForwardedAt = 0;
  let target = { host: targetHost, port: targetPort };
  const server: Server = createServer({ noDelay: true }, (client) => {
    accepted++;
    if (isDown) {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: target.host, port: target.port, noDelay: true });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        if (partitioned) return;
        to.write(chunk);
        if (from === client) lastForwardedAt = Date.now();
      });
    forward(client, upstream);
    forward(upstream, client);
    // While partitioned, a close on one side does not cross either (as in a real partition,
    // where the FIN is lost too): the other side learns only by its keepalive.
    const end = () => {
      if (partitioned) return;
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const cut = () => {
    for (const [a, b] of pairs) {
      a.resetAndDestroy();
      b.destroy();
    }
    pairs.clear();
  };
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    get connections() {
      return pairs.size;
    },
    get accepted() {
      return accepted;
    },
    get lastForwardedAt() {
      return lastForwardedAt;
    },
    cut,
    partition(on) {
      partitioned = on;
    },
    down(on) {
      isDown = on;
      if (on) cut();
    },
    retarget(host, port) {
      target = { host, port };
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
