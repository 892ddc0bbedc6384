// The HTTP edge below Fastify's routing: requests Node's parser or Fastify's router refuse
// before any route runs. Fastify answers those with its own JSON and HTTP 400/431; the API
// answers everything with the envelope (spec: "Conventions"; docs/errors.md 10009), so they
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
  if (/can't be present with/.test(reason)) return { key: 'MALFORMED_REQUEST', msg: 'Content-Length together with Transfer-Encoding is not allowed (RFC 9112 6.1); send one of them' };
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': return { key: 'MALFORMED_REQUEST', msg: `request headers (with the URL) are larger than ${MAX_HEADER_BYTES} bytes` };
    case 'HPE_INVALID_METHOD': return { key: 'METHOD_NOT_ALLOWED', msg: 'unknown HTTP method; the API uses GET and POST' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH': return { key: 'MALFORMED_REQUEST', msg: /Duplicate/.test(reason) ? 'Content-Length must appear once' : 'unexpected Content-Length' };
    case 'HPE_INVALID_CONTENT_LENGTH': return { key: 'MALFORMED_REQUEST', msg: 'Content-Length must be one non-negative decimal number' };
    case 'HPE_INVALID_TRANSFER_ENCODING': return { key: 'MALFORMED_REQUEST', msg: 'Transfer-Encoding must be chunked' };
    case 'HPE_INVALID_CHUNK_SIZE': return { key: 'MALFORMED_REQUEST', msg: 'malformed chunked body' };
    case 'HPE_INVALID_VERSION': return { key: 'MALFORMED_REQUEST', msg: 'HTTP version must be 1.0 or 1.1' };
    case 'ERR_HTTP_REQUEST_TIMEOUT': return { key: 'MALFORMED_REQUEST', msg: `request not received within ${REQUEST_TIMEOUT_MS / 1000} s` };
    // llhttp's reasons are short and name no internals ("Invalid header token").
    default: return { key: 'MALFORMED_REQUEST', msg: `malformed HTTP request${reason ? `: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}` : ''}` };
  }
}

/** One envelope answer on a raw socket, then the connection closes. */
function answerRaw(socket: Duplex, key: ErrorKey, msg: string): void {
  const body = JSON.stringify({ code: errorCatalog[key].code, msg, data: null });
  if (socket.writable) {
    socket.end(`HTTP/1.1 200 ${STATUS_CODES[200]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  // end() flushes the answer; the timer is a backstop for a peer that never reads.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** Fastify's clientErrorHandler: Node's parser refused the request. */
export function clientErrorHandler(log: FastifyBaseLogger, count: (code: number) => void) {
  return (err: Error & { code?: string }, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { key, msg } = describeClientError(err);
    log.info({ code: errorCatalog[key].code, parser: err.code }, 'malformed request refused');
    count(errorCatalog[key].code);
    answerRaw(socket, key, msg);
  };
}

/** CONNECT is parsed by Node and handed to a 'connect' listener; without one the socket just closes. */
export function refuseConnect(server: Server, count: (code: number) => void): void {
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    count(errorCatalog.METHOD_NOT_ALLOWED.code);
    answerRaw(socket, 'METHOD_NOT_ALLOWED', 'CONNECT is not allowed; the API uses GET and POST');
  });
}
