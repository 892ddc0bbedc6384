// Retries for network failures only. A request that got an answer (any answer: an envelope
// error, HTTP 500 from a proxy) is never sent again. A request that failed on the network is
// sent again with exponential backoff and jitter when sending it twice cannot do harm:
//
// - the connection was never made (refused, no route, DNS failure, connect timeout): the
//   service cannot have seen the request, so any method is retried;
// - the connection broke or timed out after the request may have gone out: only GET is
//   retried. POST operations act on devices (buzz, reboot, print) and the API has no
//   idempotency keys, so a POST that may have arrived is reported, not repeated.

export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 turns retrying off). */
  retries?: number;
  /** Delay before the first retry, doubled for each further one (default 500 ms). */
  baseDelayMs?: number;
  /** Longest delay between attempts (default 5000 ms). */
  maxDelayMs?: number;
}

export const RETRY_DEFAULTS: Required<RetryOptions> = { retries: 2, baseDelayMs: 500, maxDelayMs: 5000 };

/** Socket errors that happen before anything is sent. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export type NetworkFailure = 'not-sent' | 'maybe-sent';

/**
 * How a failed fetch() failed. Node's fetch (undici) rejects with `TypeError('fetch failed')`
 * whose `cause` holds the socket error (an AggregateError when several addresses were tried);
 * our own per-attempt timeout rejects with a DOMException named TimeoutError.
 */
export function classifyNetworkError(e: unknown): NetworkFailure {
  const codes: string[] = [];
  const collect = (x: unknown) => {
    if (!x || typeof x !== 'object') return;
    const code = 'code' in x ? x.code : undefined;
    if (typeof code === 'string') codes.push(code);
    if (x instanceof AggregateError) for (const inner of x.errors) collect(inner);
  };
  collect(typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined);
  return codes.length > 0 && codes.every((c) => NOT_SENT.has(c)) ? 'not-sent' : 'maybe-sent';
}

export function shouldRetry(method: string, failure: NetworkFailure): boolean {
  return failure === 'not-sent' || method === 'GET';
}

/** Delay before retry number `retry` (0 = the first): exponential, with "equal jitter" (half fixed, half random). */
export function backoffDelay(retry: number, o: Required<RetryOptions>, random: () => number = Math.random): number {
  const ceiling = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** retry);
  return ceiling / 2 + random() * (ceiling / 2);
}
