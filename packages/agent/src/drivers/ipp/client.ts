// IPP over HTTP (RFC 8010 §4 "Encoding of the Transport Layer"): one POST of application/ipp
// per operation. ipp:// maps to http and ipps:// to https (RFC 7472), default port 631.
import http from 'node:http';
import https from 'node:https';
import { decodeMessage } from './decode.ts';
import { encodeMessage } from './encode.ts';
import { IppHttpError, IppTransportError } from './errors.ts';
import type { IppGroup, IppMessage } from './model.ts';
import { operationGroup, uri as uriAttr } from './attributes.ts';
import { Operation, type OperationName } from './tags.ts';

export interface IppClientOptions {
  /** Per-request timeout in ms (connect + answer). */
  timeoutMs?: number;
  /**
   * Verify the printer's TLS certificate. Off by default: IPP Everywhere printers ship
   * self-signed certificates and the box reaches them on its own LAN or loopback.
   */
  rejectUnauthorized?: boolean;
  /** On HTTP 426 Upgrade Required over ipp://, retry once (and from then on) over TLS. */
  upgradeOn426?: boolean;
  /** Largest response accepted, bytes; a printer answer is tens of KB. */
  maxResponseBytes?: number;
  /** IPP version sent; 2.0 is what IPP Everywhere printers speak (PWG 5100.14 §4.1). */
  version?: readonly [number, number];
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

const defaults = {
  timeoutMs: 10_000,
  rejectUnauthorized: false,
  upgradeOn426: true,
  maxResponseBytes: 8 << 20,
  version: [2, 0] as const,
};

export class IppClient {
  /** The printer URI as given (ipp:// or ipps://); sent as printer-uri. */
  readonly printerUri: string;
  private readonly opts: Required<IppClientOptions>;
  private readonly url: URL;
  private tls: boolean;
  private requestId = 0;
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  private readonly httpsAgent: https.Agent;

  constructor(printerUri: string, options: IppClientOptions = {}) {
    const url = new URL(printerUri);
    if (url.protocol !== 'ipp:' && url.protocol !== 'ipps:')
      throw new TypeError(`not an ipp:// or ipps:// URI: ${printerUri}`);
    this.printerUri = printerUri;
    this.url = url;
    this.tls = url.protocol === 'ipps:';
    this.opts = { ...defaults, ...options };
    this.httpsAgent = new https.Agent({
      keepAlive: true,
      maxSockets: 2,
      rejectUnauthorized: this.opts.rejectUnauthorized,
    });
  }

  /** Whether requests currently go over TLS (ipps://, or after a 426 upgrade). */
  get secure(): boolean {
    return this.tls;
  }

  /**
   * Sends one operation. `groups` follow the operation group that this method starts with
   * attributes-charset, attributes-natural-language and printer-uri (RFC 8011 §4.1.5);
   * `operation` holds further operation attributes.
   */
  async request(
    op: OperationName,
    parts: { operation?: IppGroup['attributes']; groups?: IppGroup[]; data?: Uint8Array } = {},
    ro: RequestOptions = {},
  ): Promise<IppMessage> {
    this.requestId = (this.requestId % 0x7fffffff) + 1;
    const msg: IppMessage = {
      version: this.opts.version,
      code: Operation[op],
      requestId: this.requestId,
      groups: [
        operationGroup(uriAttr('printer-uri', this.printerUri), ...(parts.operation ?? [])),
        ...(parts.groups ?? []),
      ],
      ...(parts.data ? { data: parts.data } : {}),
    };
    const body = encodeMessage(msg);
    try {
      return await this.post(body, ro);
    } catch (e) {
      if (e instanceof IppHttpError && e.status === 426 && !this.tls && this.opts.upgradeOn426) {
        this.tls = true;
        return this.post(body, ro);
      }
      throw e;
    }
  }

  private post(body: Buffer, ro: RequestOptions): Promise<IppMessage> {
    const timeoutMs = ro.timeoutMs ?? this.opts.timeoutMs;
    const signals = [AbortSignal.timeout(timeoutMs), ...(ro.signal ? [ro.signal] : [])];
    const signal = AbortSignal.any(signals);
    const lib = this.tls ? https : http;
    const target = `${this.tls ? 'https' : 'http'}://${this.url.host}${this.url.pathname || '/'}${this.url.search}`;
    return new Promise<IppMessage>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError(signal, timeoutMs, target));
        return;
      }
      const req = lib.request(
        target,
        {
          method: 'POST',
          agent: this.tls ? this.httpsAgent : this.httpAgent,
          // RFC 8010 §4: the default port of ipp/ipps is 631, not 80/443.
          port: this.url.port || 631,
          headers: { 'content-type': 'application/ipp', 'content-length': body.length, accept: 'application/ipp' },
          signal,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status !== 200) {
            res.resume();
            const hint = status === 426 ? ' (printer requires TLS: use ipps://)' : '';
            reject(new IppHttpError(status, `HTTP ${status} ${res.statusMessage ?? ''} from ${target}${hint}`.trim()));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > this.opts.maxResponseBytes) {
              req.destroy(new IppTransportError(`response from ${target} exceeds ${this.opts.maxResponseBytes} bytes`));
              return;
            }
            chunks.push(c);
          });
          res.on('end', () => {
            try {
              resolve(decodeMessage(Buffer.concat(chunks)));
            } catch (e) {
              reject(e);
            }
          });
          res.on('error', (e) => reject(wrap(e, signal, timeoutMs, target)));
        },
      );
      req.on('error', (e) => reject(wrap(e, signal, timeoutMs, target)));
      req.end(body);
    });
  }

  /** Frees pooled keep-alive sockets. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function abortError(signal: AbortSignal, timeoutMs: number, target: string): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof DOMException && reason.name === 'TimeoutError') {
    return new IppTransportError(`no answer from ${target} within ${timeoutMs} ms`, { cause: reason });
  }
  return reason instanceof Error ? reason : new IppTransportError(`request to ${target} aborted`, { cause: reason });
}

function wrap(e: unknown, signal: AbortSignal, timeoutMs: number, target: string): Error {
  if (signal.aborted) return abortError(signal, timeoutMs, target);
  if (e instanceof IppTransportError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return new IppTransportError(`${target}: ${msg}`, { cause: e });
}
