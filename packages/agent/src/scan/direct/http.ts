// One attempt of one direct-transfer request, and the answer classified (docs/direct-transfer.md,
// "What a receiver does", point 6). HTTP/1.1 or HTTP/2: over https undici offers h2 and
// http/1.1 by ALPN (`allowH2`); over http it speaks HTTP/1.1 unless the address asked for
// cleartext HTTP/2 (`#h2c`, given to the box as `h2c`), then h2 with prior knowledge.
// Redirects are never followed (undici's request does not follow them); the answer's body is
// read up to a small limit and the rest dropped, so a hostile receiver cannot hold the box.
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { BuiltRequest } from './wire.ts';
import { errnoCode, messageOf } from '@boxhub/protocol/caught.ts';

export interface DirectHttpOptions {
  h2c?: boolean;
  /** Extra trusted CA certificates (PEM) for https receivers; the system's otherwise. */
  ca?: string | string[];
  /** No answer (headers) or no progress of its body for this long fails the attempt, ms. */
  timeoutMs?: number;
}

// undici is loaded with the first direct transfer, not at the agent's start (docs/box-protocol.md,
// "Memory on the box"). It is a CommonJS package: require gives the module `import` would.
const require = createRequire(import.meta.url);

export function directDispatcher(addr: string, o: DirectHttpOptions = {}): Dispatcher {
  const { Agent } = require('undici') as typeof import('undici');
  const https = new URL(addr).protocol === 'https:';
  const timeout = o.timeoutMs ?? 60_000;
  return new Agent({
    connections: 1,
    pipelining: 1,
    headersTimeout: timeout,
    bodyTimeout: timeout,
    connectTimeout: Math.min(timeout, 30_000),
    ...(https ? { allowH2: true } : {}),
    connect: {
      ...(https && o.ca ? { ca: o.ca } : {}),
      // undici passes `useH2c` through `connect` (an Agent's own useH2c is not given to its pools).
      ...(!https && o.h2c ? { useH2c: true } : {}),
    } as Record<string, unknown>,
  });
}

export type Outcome =
  | { kind: 'ok'; status: number }
  | { kind: 'retry'; why: string; retryAfterMs?: number }
  | { kind: 'refused'; why: string };

const MAX_ANSWER = 2048;
const ANSWER_MS = 10_000;

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or garbled. */
export function retryAfterMs(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export async function attempt(
  dispatcher: Dispatcher,
  addr: string,
  req: BuiltRequest,
  signal: AbortSignal,
  now: () => number,
): Promise<Outcome> {
  let res: Dispatcher.ResponseData;
  try {
    res = await dispatcher.request({
      origin: new URL(addr).origin,
      path: pathOf(addr),
      method: 'POST',
      headers: req.headers,
      body: Readable.from(req.body()),
      signal,
    });
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    const code = errnoCode(e);
    const cause = e instanceof Error ? e.cause : undefined;
    const causeMessage = cause instanceof Error ? cause.message : undefined;
    return {
      kind: 'retry',
      why: `${code ? `${code}: ` : ''}${messageOf(e)}${causeMessage ? ` (${causeMessage})` : ''}`,
    };
  }
  const answer = await readSome(res.body);
  const status = res.statusCode;
  const said = answer ? `: ${answer}` : '';
  if (status >= 200 && status < 300) return { kind: 'ok', status };
  if (status >= 300 && status < 400)
    return {
      kind: 'refused',
      why: `HTTP ${status} redirect${res.headers.location ? ` to ${String(res.headers.location).slice(0, 200)}` : ''} (redirects are not followed)`,
    };
  if (status === 408 || status === 429 || status >= 500) {
    const after = retryAfterMs(res.headers['retry-after'], now());
    return { kind: 'retry', why: `HTTP ${status}${said}`, ...(after !== undefined ? { retryAfterMs: after } : {}) };
  }
  return { kind: 'refused', why: `HTTP ${status}${said}` };
}

function pathOf(addr: string): string {
  const u = new URL(addr);
  return `${u.pathname}${u.search}`;
}

/** The first bytes of an answer (for the log), as text; the rest is not waited for. */
async function readSome(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  // A receiver that trickles its answer byte by byte does not hold the box either.
  const slow = setTimeout(() => body.destroy(), ANSWER_MS);
  try {
    for await (const chunk of body) {
      text += Buffer.from(chunk as Buffer).toString('utf8');
      if (text.length >= MAX_ANSWER) break;
    }
  } catch {
    /* an answer cut short says no less */
  }
  clearTimeout(slow);
  body.destroy();
  return text.slice(0, 300).replace(/\s+/g, ' ').trim();
}
