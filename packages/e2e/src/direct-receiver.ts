// A direct-transfer receiver for the end-to-end tests: the SDK's DirectTransferReceiver behind
// a real server on loopback, over HTTP/1.1, cleartext HTTP/2 (h2c) or TLS (h2 and http/1.1 by
// ALPN, with a self-signed certificate made here by openssl). It records every attempt (its
// headers and HTTP version) and what was accepted; `answer` lets a test answer instead.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import http2, { type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirectTransferReceiver, type DirectPagesBatch, type DirectScanEnd } from '@boxhub/sdk';

/** tls: h2 and http/1.1 offered by ALPN (the box takes h2); tls-http1: an HTTPS server that speaks HTTP/1.1 only. */
export type DirectMode = 'http1' | 'h2c' | 'tls' | 'tls-http1';
type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

export interface Attempt {
  id: string;
  timestamp: string;
  httpVersion: string;
  status?: number;
  userAgent: string;
}

export interface TestDirectReceiver {
  /** The address to give as direct_addr (with `#h2c` for h2c). */
  url: string;
  /** The CA (the certificate itself) that signs the TLS receiver's certificate. */
  ca: string;
  attempts: Attempt[];
  batches: DirectPagesBatch[];
  ends: DirectScanEnd[];
  /** The secret of the scan it receives (set after scan create). */
  secret: string | undefined;
  /** Answer an attempt yourself (return true when answered); the SDK receiver otherwise. */
  answer: ((req: Req, res: Res, n: number) => boolean) | undefined;
  close(): Promise<void>;
}

export function selfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startDirectReceiver(
  mode: DirectMode,
  tls?: { key: string; cert: string },
): Promise<TestDirectReceiver> {
  const rx: TestDirectReceiver = {
    url: '',
    ca: tls?.cert ?? '',
    attempts: [],
    batches: [],
    ends: [],
    secret: undefined,
    answer: undefined,
    close: async () => undefined,
  };
  const sdk = new DirectTransferReceiver({
    // The secret comes with the create answer, which may arrive after the first batch: wait for it.
    secret: async () => {
      for (let i = 0; i < 500 && !rx.secret; i++) await new Promise((r) => setTimeout(r, 10));
      return rx.secret;
    },
    onPages: (b) => {
      rx.batches.push(b);
    },
    onEnd: (e) => {
      rx.ends.push(e);
    },
  });
  const handle = sdk.handler();
  const onRequest = (req: Req, res: Res) => {
    const a: Attempt = {
      id: String(req.headers['webhook-id']),
      timestamp: String(req.headers['webhook-timestamp']),
      httpVersion: req.httpVersion,
      userAgent: String(req.headers['user-agent']),
    };
    rx.attempts.push(a);
    res.on('finish', () => {
      a.status = res.statusCode;
    });
    if (rx.answer?.(req, res, rx.attempts.length)) return;
    handle(req, res);
  };
  const server =
    mode === 'http1'
      ? http.createServer(onRequest)
      : mode === 'h2c'
        ? http2.createServer(onRequest)
        : mode === 'tls-http1'
          ? https.createServer(tls!, onRequest)
          : http2.createSecureServer({ ...tls!, allowHTTP1: true }, onRequest);
  const sessions = new Set<{ destroy(): void }>();
  server.on('session', (s: http2.Http2Session) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  rx.url = mode.startsWith('tls')
    ? `https://127.0.0.1:${port}/direct`
    : `http://127.0.0.1:${port}/direct${mode === 'h2c' ? '#h2c' : ''}`;
  rx.close = async () => {
    for (const s of sessions) s.destroy();
    if ('closeAllConnections' in server) (server as http.Server).closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return rx;
}
