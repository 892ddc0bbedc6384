// A real callback receiver on a free port (conventions: real HTTP servers whose answers can be
// flipped to fail and recover). Answers: 200, any status, 'slow' (200 after `slowMs`), 'silent'
// (never answers), 'huge' (200 with a large body), or a function deciding per request.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export type Answer =
  | number
  | 'slow'
  | 'silent'
  | 'huge'
  | { status: number; delayMs?: number; body?: string; headers?: Record<string, string> };

export interface Received {
  /** Wall time the request was complete (Unix ms, fractional). */
  at: number;
  /** Wall time the answer was sent, or undefined while/if none was. */
  answeredAt?: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** X-SVC-Callback-ID */
  id: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Sets the answer for every following request. */
  answer(a: Answer): void;
  /** Decides the answer per request (overrides `answer`). */
  decide(fn: ((r: Received, n: number) => Answer) | undefined): void;
  /** Requests carrying this callback id, in arrival order. */
  byId(id: string): Received[];
  close(): Promise<void>;
}

const now = () => performance.timeOrigin + performance.now();

export async function startReceiver(opts: { slowMs?: number; host?: string } = {}): Promise<Receiver> {
  let current: Answer = 200;
  let decider: ((r: Received, n: number) => Answer) | undefined;
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        at: now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        id: String(req.headers['x-svc-callback-id'] ?? ''),
      };
      received.push(r);
      const a = decider ? decider(r, received.length) : current;
      const send = (status: number, body = '', headers: Record<string, string> = {}) => {
        r.answeredAt = now();
        res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
      };
      if (a === 'silent') {
        held.add(res);
        return;
      }
      if (a === 'huge') {
        // 8 MB of answer: the client must stop reading after its small cap.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        r.answeredAt = now();
        const block = Buffer.alloc(64 * 1024, 120);
        let left = 128;
        const pump = () => {
          while (left > 0) {
            left--;
            if (!res.write(block)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
      const spec =
        typeof a === 'number' ? { status: a } : a === 'slow' ? { status: 200, delayMs: opts.slowMs ?? 10_000 } : a;
      if (spec.delayMs) {
        held.add(res);
        const t = setTimeout(() => {
          timers.delete(t);
          held.delete(res);
          if (!res.destroyed) send(spec.status, spec.body, spec.headers);
        }, spec.delayMs);
        timers.add(t);
      } else send(spec.status, spec.body, spec.headers);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 10_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/hook`,
    received,
    answer(a) {
      current = a;
    },
    decide(fn) {
      decider = fn;
    },
    byId(id) {
      return received.filter((r) => r.id === id);
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
