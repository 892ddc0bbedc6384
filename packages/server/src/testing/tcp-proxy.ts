// A TCP proxy on loopback between a box and its broker, for real network faults in tests:
// cut() resets every connection (the box sees the network drop), partition() keeps the
// sockets open but stops forwarding (a silent partition: only keepalive can notice).
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  url: string;
  port: number;
  cut(): void;
  partition(on: boolean): void;
  close(): Promise<void>;
  readonly connections: number;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let partitioned = false;
  const server: Server = createServer({ noDelay: true }, (client) => {
    const upstream = connect({ host: targetHost, port: targetPort, noDelay: true });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket) => from.on('data', (chunk) => { if (!partitioned) to.write(chunk); });
    forward(client, upstream);
    forward(upstream, client);
    // While partitioned, a close on one side does not cross either (as in a real partition,
    // where the FIN is lost too): the other side learns only by its keepalive.
    const end = () => { if (partitioned) return; pairs.delete(pair); client.destroy(); upstream.destroy(); };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    get connections() { return pairs.size; },
    cut() { for (const [a, b] of pairs) { a.resetAndDestroy(); b.destroy(); } pairs.clear(); },
    partition(on) { partitioned = on; },
    async close() {
      for (const [a, b] of pairs) { a.destroy(); b.destroy(); }
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
