// The load balancer in front of the server nodes: the one public URL the application, the
// callbacks' download links and the boxes' direct transfers use. Each request goes to the next
// node in turn; a node that refuses the connection (killed, not yet back) is skipped, as a
// health-checking balancer would. It records every status a node answered: a 5xx is a violation.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface Balancer {
  url: string;
  /** Statuses of 500 and above a node answered: { node, status, method, path }. */
  errors: Array<{ node: string; status: number; method: string; path: string; at: number }>;
  requests: number;
  setNodes(nodes: Array<{ name: string; port: number }>): void;
  close(): Promise<void>;
}

export async function startBalancer(): Promise<Balancer> {
  let nodes: Array<{ name: string; port: number }> = [];
  let turn = 0;
  const b: Balancer = {
    url: '',
    errors: [],
    requests: 0,
    setNodes(n) {
      nodes = n;
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
    },
  };
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tries: number) => {
    const node = nodes[turn++ % Math.max(1, nodes.length)];
    if (!node) {
      res.writeHead(503).end('no node');
      return;
    }
    const up = request(
      {
        host: '127.0.0.1',
        port: node.port,
        agent: false,
        method: req.method,
        path: req.url,
        headers: req.headers,
        timeout: 30_000,
      },
      (r) => {
        const status = r.statusCode ?? 0;
        // 503 with Retry-After is the documented "not stored, try again" of a direct-transfer
        // receiver whose storage is away (docs/direct-transfer.md): backpressure, not a failure.
        const tryAgain = status === 503 && r.headers['retry-after'] !== undefined;
        if (status >= 500 && !tryAgain)
          b.errors.push({
            node: node.name,
            status,
            method: req.method ?? '',
            path: (req.url ?? '').split('?')[0] ?? '',
            at: Date.now(),
          });
        res.writeHead(status, r.headers);
        r.pipe(res);
        r.on('error', () => res.destroy());
      },
    );
    let sent = false;
    up.on('error', (e: NodeJS.ErrnoException) => {
      // Refused: nothing reached that node, so another may take the request.
      if (!sent && e.code === 'ECONNREFUSED' && tries < nodes.length * 3) {
        setTimeout(() => forward(req, res, body, tries + 1), 100);
        return;
      }
      if (!res.headersSent) res.writeHead(502).end(`balancer: ${e.code ?? e.message}`);
      else res.destroy();
    });
    up.on('timeout', () => up.destroy(new Error('upstream timeout')));
    up.on('socket', (s) =>
      s.once('connect', () => {
        sent = true;
      }),
    );
    up.end(body);
  };
  const server: Server = createServer((req, res) => {
    b.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
    req.on('error', () => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  b.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  return b;
}
