// One API call: URL, authentication, JSON, the envelope, timeouts and retries (retry.ts).
// Written on fetch rather than a generic OpenAPI client (openapi-fetch, say) because every
// answer of this API is HTTP 200 with an envelope whose `code` says whether the call worked;
// turning that into a result or a BoxhubError, and deciding what may be retried, is most of
// the work, and the types come from the generated `paths` either way (api-types.ts).
import { sleep } from './sleep.ts';
import type { Body, GetPath, GetResult, PostPath, PostResult, Query } from './api-types.ts';
import { BoxhubError, type BoxhubErrorInit } from './errors.ts';
import {
  backoffDelay,
  classifyNetworkError,
  RETRY_DEFAULTS,
  shouldRetry,
  type NetworkFailure,
  type RetryOptions,
} from './retry.ts';
import { SDK_VERSION } from './version.ts';

export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  failure: NetworkFailure;
  error: unknown;
  /** How long until the next attempt. */
  delayMs: number;
}

export interface TransportOptions {
  /** Where the service is, e.g. https://boxhub.example.org (a path prefix is kept). */
  baseUrl: string;
  /** The application's API key (sent as `Authorization: Bearer …`). */
  apiKey: string;
  /** Time allowed for each attempt, from sending to the whole answer (default 30000 ms). */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** Called before each retry (to log it, say). */
  onRetry?: (e: RetryEvent) => void;
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

export interface CallOptions {
  /** Cancels the call (and its retries); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export class Transport {
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #retry: Required<RetryOptions>;
  readonly #onRetry: ((e: RetryEvent) => void) | undefined;
  readonly #fetch: typeof globalThis.fetch;

  constructor(o: TransportOptions) {
    const base = new URL(o.baseUrl); // throws on a malformed URL, at once rather than on first use
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new TypeError(`baseUrl must be http(s): ${o.baseUrl}`);
    if (!o.apiKey) throw new TypeError('apiKey is required');
    this.#base = base.href.replace(/\/$/, '');
    this.#headers = {
      authorization: `Bearer ${o.apiKey}`,
      accept: 'application/json',
      'user-agent': `boxhub-sdk/${SDK_VERSION} node/${process.versions.node}`,
    };
    this.#timeoutMs = o.timeoutMs ?? 30_000;
    this.#retry = { ...RETRY_DEFAULTS, ...o.retry };
    this.#onRetry = o.onRetry;
    this.#fetch = o.fetch ?? globalThis.fetch;
  }

  /** GET `path` with `query`; resolves to the envelope's data, typed from /openapi.json. */
  async get<P extends GetPath>(path: P, query: Query<P>, o: CallOptions = {}): Promise<GetResult<P>> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query as object)) if (v !== undefined) qs.append(k, String(v));
    const s = qs.toString();
    return (await this.#call('GET', path, s ? `${path}?${s}` : path, undefined, o)) as GetResult<P>;
  }

  /** POST `body` as JSON to `path`; resolves to the envelope's data, typed from /openapi.json. */
  async post<P extends PostPath>(path: P, body: Body<P>, o: CallOptions = {}): Promise<PostResult<P>> {
    return (await this.#call('POST', path, path, JSON.stringify(body), o)) as PostResult<P>;
  }

  /** GETs a link the service handed out (signed: it carries no API key); the bytes, or an
   *  Error naming the HTTP status and the service's one-line reason. */
  async download(url: string, o: CallOptions = {}): Promise<Uint8Array> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const res = await this.#fetch(url, { signal: o.signal ? AbortSignal.any([o.signal, timeout]) : timeout });
    if (!res.ok)
      throw new Error(
        `GET ${new URL(url).pathname.slice(0, 40)}…: HTTP ${res.status} ${(await res.text()).trim().slice(0, 200)}`,
      );
    return new Uint8Array(await res.arrayBuffer());
  }

  async #call(
    method: 'GET' | 'POST',
    path: string,
    target: string,
    body: string | undefined,
    o: CallOptions,
  ): Promise<unknown> {
    const fail = (init: Omit<BoxhubErrorInit, 'method' | 'path'>) => new BoxhubError({ ...init, method, path });
    for (let attempt = 1; ; attempt++) {
      o.signal?.throwIfAborted();
      const timeout = AbortSignal.timeout(this.#timeoutMs);
      const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
      let status: number;
      let text: string;
      try {
        const res = await this.#fetch(this.#base + target, {
          method,
          signal,
          headers: body === undefined ? this.#headers : { ...this.#headers, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body }),
        });
        status = res.status;
        text = await res.text();
      } catch (e) {
        if (o.signal?.aborted) throw o.signal.reason;
        const failure = timeout.aborted ? 'maybe-sent' : classifyNetworkError(e);
        const why = timeout.aborted ? `no answer within ${this.#timeoutMs} ms` : describeNetworkError(e);
        if (attempt <= this.#retry.retries && shouldRetry(method, failure)) {
          const delayMs = backoffDelay(attempt - 1, this.#retry);
          this.#onRetry?.({ method, path, attempt, failure, error: e, delayMs });
          await sleep(delayMs, o.signal);
          continue;
        }
        throw fail({
          kind: 'network',
          code: null,
          msg: `${why} (attempt ${attempt}${failure === 'maybe-sent' && method !== 'GET' ? '; not retried: the request may have reached the service' : ''})`,
          cause: e,
        });
      }
      return unwrap(status, text, fail);
    }
  }
}

function unwrap(
  status: number,
  text: string,
  fail: (i: Omit<BoxhubErrorInit, 'method' | 'path'>) => BoxhubError,
): unknown {
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  if (status !== 200)
    throw fail({
      kind: 'http',
      code: null,
      status,
      msg: `HTTP ${status} (the service always answers 200): ${excerpt}`,
    });
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    throw fail({ kind: 'http', code: null, status, msg: `the answer is not JSON: ${excerpt}` });
  }
  const e = envelope;
  if (
    !e ||
    typeof e !== 'object' ||
    !('code' in e) ||
    typeof e.code !== 'number' ||
    !Number.isInteger(e.code) ||
    !('msg' in e) ||
    typeof e.msg !== 'string' ||
    !('data' in e)
  ) {
    throw fail({ kind: 'http', code: null, status, msg: `the answer is not a {code, msg, data} envelope: ${excerpt}` });
  }
  if (e.code !== 0) throw fail({ kind: 'api', code: e.code, msg: e.msg, data: e.data, status });
  return e.data === null ? undefined : e.data;
}

function describeNetworkError(e: unknown): string {
  const cause = typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
  if (typeof cause === 'object' && cause !== null && 'code' in cause && cause.code) {
    return `${String(cause.code)}: ${'message' in cause ? String(cause.message ?? '') : ''}`.trim();
  }
  const message = typeof e === 'object' && e !== null && 'message' in e ? e.message : undefined;
  return typeof message === 'string' ? message : String(e);
}
