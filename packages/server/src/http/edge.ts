// The HTTP edge below Fastify's routing: requests Node's parser or Fastify's router refuse
// before any route runs. Fastify answers those with its own JSON and HTTP 400/431; the API
// answers everything with the envelope (docs/api.md, "Conventions"; docs/errors.md 10009), so they
// are answered here. After a parse error the byte stream cannot be trusted any more, so the
// connection is closed after the answer (as Node and Fastify do).
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorCatalog, type ErrorKey } from '@boxhub/protocol';
import type { FastifyBaseLogger } from 'fastify';

/** Largest request head (request line and headers) Node reads: its default, 16 KiB. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** A request (head and body) must arrive within this; slow senders hold a socket otherwise. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** What Node's HTTP parser (llhttp) refused, in words, and under which code. */
export function describeClientError(err: Error & { code?: string; reason?: string }): { key: ErrorKey; msg: string } {
  const reason = err.reason ?? '';
  if (/can't be present with/.test(reason))
    return {
      key: 'MALFORMED_REQUEST',
      msg: 'Content-Length together with Transfer-Encoding is not allowed (RFC 9112 6.1); send one of them',
    };
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        key: 'MALFORMED_REQUEST',
        msg: `request headers (with the URL) are larger than ${MAX_HEADER_BYTES} bytes`,
      };
    case 'HPE_INVALID_METHOD':
      return { key: 'METHOD_NOT_ALLOWED', msg: 'unknown HTTP method; the API uses GET and POST' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return {
        key: 'MALFORMED_REQUEST',
        msg: /Duplicate/.test(reason) ? 'Content-Length must appear once' : 'unexpected Content-Length',
      };
    case 'HPE_INVALID_CONTENT_LENGTH':
      return { key: 'MALFORMED_REQUEST', msg: 'Content-Length must be one non-negative decimal number' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return { key: 'MALFORMED_REQUEST', msg: 'Transfer-Encoding must be chunked' };
    case 'HPE_INVALID_CHUNK_SIZE':
      return { key: 'MALFORMED_REQUEST', msg: 'malformed chunked body' };
    case 'HPE_INVALID_VERSION':
      return { key: 'MALFORMED_REQUEST', msg: 'HTTP version must be 1.0 or 1.1' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { key: 'MALFORMED_REQUEST', msg: `request not received within ${REQUEST_TIMEOUT_MS / 1000} s` };
    // llhttp's reasons are short and name no internals ("Invalid header token").
    default:
      return {
        key: 'MALFORMED_REQUEST',
        msg: `malformed HTTP request${reason ? `: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}` : ''}`,
      };
  }
}

/**
 * Paths whose callers read HTTP statuses, not the envelope: the direct-transfer receiver (a box
 * takes any 2xx for "stored", docs/direct-transfer.md) and the local blob store's signed URLs
 * (docs/storage.md). Whatever is refused there is answered with a 4xx/5xx status.
 */
export function answersWithStatus(path: string | undefined): boolean {
  if (path === undefined) return false;
  return path === '/direct' || path.startsWith('/direct/') || path === '/blobs' || path.startsWith('/blobs/');
}

/** The HTTP status a parser refusal gets on those paths. */
function statusOf(err: Error & { code?: string }): number {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    case 'HPE_INVALID_METHOD':
      return 501;
    default:
      return 400;
  }
}

/** Which surface a socket last served (set per request): the path of a request whose head was never parsed is unknown. */
const lastPath = Symbol('boxhub.lastPath');
type Tracked = Duplex & { [lastPath]?: string; parser?: { incoming?: { url?: string } | null } | null };

/** Remembers the path of each request on its socket (an onRequest hook). */
export function rememberPath(socket: Duplex, url: string): void {
  (socket as Tracked)[lastPath] = url;
}

/**
 * The path of the request a parser error belongs to, as far as it can be known: the request in
 * progress (its head was parsed: timeouts, broken bodies), else the request line at the start
 * of the bytes that failed (headers too large), else the last request on the connection (a box
 * sends its batches one after another on one connection).
 */
function pathOf(err: Error & { rawPacket?: Buffer }, socket: Tracked): string | undefined {
  const incoming = socket.parser?.incoming?.url;
  if (incoming) return incoming.split('?')[0];
  const line = err.rawPacket
    ? /^[A-Z]{1,20} (\/[^ ?\r\n]*)/.exec(err.rawPacket.subarray(0, 2048).toString('latin1'))
    : null;
  if (line) return line[1];
  return socket[lastPath]?.split('?')[0];
}

/** One answer on a raw socket (the envelope, or a status on the status paths), then the connection closes. */
function answerRaw(socket: Duplex, key: ErrorKey, msg: string, status = 200): void {
  const envelope = status === 200;
  const body = envelope ? JSON.stringify({ code: errorCatalog[key].code, msg, data: null }) : `${msg}\n`;
  const type = envelope ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8';
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  // end() flushes the answer; the timer is a backstop for a peer that never reads.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** Fastify's clientErrorHandler: Node's parser refused the request. */
export function clientErrorHandler(log: FastifyBaseLogger, count: (code: number) => void) {
  return (err: Error & { code?: string }, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { key, msg } = describeClientError(err);
    const status = answersWithStatus(pathOf(err, socket as Tracked)) ? statusOf(err) : 200;
    log.info({ code: errorCatalog[key].code, status, parser: err.code }, 'malformed request refused');
    count(errorCatalog[key].code);
    answerRaw(socket, key, msg, status);
  };
}

/** CONNECT is parsed by Node and handed to a 'connect' listener; without one the socket just closes. */
export function refuseConnect(server: Server, count: (code: number) => void): void {
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    count(errorCatalog.METHOD_NOT_ALLOWED.code);
    answerRaw(socket, 'METHOD_NOT_ALLOWED', 'CONNECT is not allowed; the API uses GET and POST');
  });
}
