// A real reverse proxy on loopback for tests of BOXHUB_TRUST_PROXY (docs/configuration.md
// "Behind a proxy"): it does what nginx's `proxy_add_x_forwarded_for` and a TLS terminator do —
// appends the address the request came from to X-Forwarded-For (keeping what the client sent
// to its left), sets X-Forwarded-Proto to the scheme it was reached by (`https` here: it stands
// for a TLS terminator) — and connects to the target from its own address (`from`).
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpProxy {
  url: string;
  close(): Promise<void>;
}

export async function startHttpProxy(
  target: string,
  o: { from?: string; proto?: 'https' | 'http' } = {},
): Promise<HttpProxy> {
  const t = new URL(target);
  const server: Server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers };
    const prior = req.headers['x-forwarded-for'];
    const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    headers['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${peer}` : peer;
    headers['x-forwarded-proto'] = o.proto ?? 'https';
    const up = request(
      {
        host: t.hostname,
        port: t.port,
        method: req.method,
        path: req.url,
        headers,
        ...(o.from ? { localAddress: o.from } : {}),
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** One HTTP request from a chosen loopback address (Linux routes all of 127/8 to lo). */
export function requestFrom(
  from: string,
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const u = new URL(url);
  return new Promise((ok, fail) => {
    const r = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: o.method ?? 'GET',
        headers: o.headers ?? {},
        localAddress: from,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          ok({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', fail);
      },
    );
    r.on('error', fail);
    r.end(o.body);
  });
}
