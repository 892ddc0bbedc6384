// One HTTP exchange with an eSCL scanner (node:http/https, no pooled sockets: a scanner serves
// a handful of requests, and a stale keep-alive socket to an MFP that slept fails the next one).
import http from 'node:http';
import https from 'node:https';

export interface EsclResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface EsclRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: URL;
  body?: string;
  contentType?: string;
  timeoutMs: number;
  rejectUnauthorized: boolean;
  signal?: AbortSignal;
  /** Larger bodies are refused (a 600 dpi colour A4 JPEG is tens of MB at most). */
  maxBytes: number;
}

export class EsclHttpError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EsclHttpError';
  }
}

export function esclRequest(r: EsclRequest): Promise<EsclResponse> {
  const lib = r.url.protocol === 'https:' ? https : http;
  const signal = AbortSignal.any([AbortSignal.timeout(r.timeoutMs), ...(r.signal ? [r.signal] : [])]);
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {};
    if (r.body !== undefined) {
      headers['content-type'] = r.contentType ?? 'text/xml';
      headers['content-length'] = Buffer.byteLength(r.body);
    }
    const req = lib.request(
      r.url,
      { method: r.method, headers, signal, agent: false, rejectUnauthorized: r.rejectUnauthorized },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > r.maxBytes) {
            req.destroy(new EsclHttpError(`${r.method} ${r.url} answered more than ${r.maxBytes} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, size) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', (e) =>
      reject(
        r.signal?.aborted
          ? r.signal.reason
          : e instanceof EsclHttpError
            ? e
            : new EsclHttpError(`${r.method} ${r.url}: ${e.message}`, { cause: e }),
      ),
    );
    req.end(r.body);
  });
}
