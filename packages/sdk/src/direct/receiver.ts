// Receiving direct transfers (docs/direct-transfer.md, "What a receiver does"): the box posts
// each batch of scanned pages as multipart/form-data, the signed JSON manifest `meta` first,
// then the JPEGs. This helper verifies the Standard Webhooks signature over the manifest's
// exact bytes (with the reference library `standardwebhooks`), checks every page's length and
// SHA-256 against it, answers a batch sent again (same webhook-id) 200 without storing it
// twice, refuses a batch out of order (409), and calls your `onPages` / `onEnd`, answering 2xx
// only once they have resolved (store the pages durably there: until then the box keeps them).
//
//   const rx = new DirectTransferReceiver({ secret: scan.direct_secret, onPages: async (b) => save(b) });
//   http.createServer(rx.handler()).listen(8080);
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  checkManifest,
  MAX_PAGES_PER_BATCH,
  webhookId,
  type DirectPageMeta,
  type EndManifest,
  type Manifest,
  type PagesManifest,
} from '@boxhub/protocol/direct-wire.ts';
import { messageOf } from '@boxhub/protocol/caught.ts';

/** A page of a batch: its manifest entry (`part` p1 … p10; `content_type` image/jpeg, or
 *  application/octet-stream with `cipher` for a page of an encrypted scan, which
 *  decryptDirectPage opens: docs/encryption.md) and its bytes. */
export interface DirectPage extends DirectPageMeta {
  /** The JPEG (encrypted when `cipher` is set), checked against `bytes` and `sha256`. */
  data: Buffer;
}

export interface DirectPagesBatch extends Omit<PagesManifest, 'v' | 'pages'> {
  /** webhook-id: `dt_{scan_uuid}_{batch}`, the same on every attempt. */
  id: string;
  pages: DirectPage[];
}

/** The end of the scan: `error_code` (docs/errors.md, "Scan error codes"; 0 when it ended
 *  normally) and the `totals` the box had acknowledged. */
export interface DirectScanEnd extends Omit<EndManifest, 'v'> {
  id: string;
}

/** What the receiver remembers per scan; in memory by default. Give your own to share it
 *  between processes or keep it across restarts (commit it with the pages you store). */
export interface DirectReceiverState {
  /** The batch number expected next (1 for a scan never seen). */
  next(scanUuid: string): number | Promise<number>;
  /** The webhook-id was accepted before. */
  seen(id: string): boolean | Promise<boolean>;
  /** Accepted: `batch` was stored under `id`. */
  accepted(scanUuid: string, batch: number, id: string): void | Promise<void>;
}

export class MemoryDirectState implements DirectReceiverState {
  readonly #next = new Map<string, number>();
  readonly #seen = new Set<string>();
  next(scanUuid: string): number {
    return this.#next.get(scanUuid) ?? 1;
  }
  seen(id: string): boolean {
    return this.#seen.has(id);
  }
  accepted(scanUuid: string, batch: number, id: string): void {
    this.#next.set(scanUuid, batch + 1);
    this.#seen.add(id);
  }
}

export interface DirectTransferReceiverOptions {
  /** The scan task's `direct_secret` (whsec_…), or a lookup by scan uuid for several tasks.
   *  Undefined (a scan not known yet: its first batch can come before scan create has answered
   *  you) is answered 503 with Retry-After: 1, and the box tries again. */
  secret: string | ((scanUuid: string) => string | undefined | Promise<string | undefined>);
  /** Store the pages durably; the box is answered 2xx once this resolves (500 if it throws). */
  onPages: (batch: DirectPagesBatch) => void | Promise<void>;
  /** The end of the scan (after the last batch). */
  onEnd?: (end: DirectScanEnd) => void | Promise<void>;
  state?: DirectReceiverState;
  /** Largest page accepted, bytes (default 50 MB); a larger part is answered 413. */
  maxPageBytes?: number;
}

/** The answer to send: status and a small JSON body. `close`: the request body was not read to
 *  its end, so an HTTP/1.1 connection should be closed (`Connection: close`). */
export interface DirectAnswer {
  status: number;
  body: { ok: boolean; duplicate?: boolean; error?: string };
  close?: boolean;
  /** Headers to send with it (Retry-After with a 503). */
  headers?: Record<string, string>;
  /** What was accepted (not on a duplicate or a refusal). */
  event?: DirectPagesBatch | DirectScanEnd;
}

export type DirectHeaders = Record<string, string | string[] | undefined>;

const MAX_META = 64 * 1024;

class Refusal extends Error {
  readonly status: number;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, message: string, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

export class DirectTransferReceiver {
  readonly #o: DirectTransferReceiverOptions & { state: DirectReceiverState; maxPageBytes: number };

  constructor(o: DirectTransferReceiverOptions) {
    this.#o = { state: new MemoryDirectState(), maxPageBytes: 50 * 1024 * 1024, ...o };
  }

  /** A request handler for node:http, node:https and node:http2's compatibility API. */
  handler(): (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void {
    return (req, res) => {
      if (req.method !== 'POST') {
        answer(req, res, { status: 405, body: { ok: false, error: 'POST only' }, close: true });
        return;
      }
      this.receive({ headers: req.headers, body: req })
        .then((a) => answer(req, res, a))
        .catch((e: unknown) =>
          answer(req, res, { status: 500, body: { ok: false, error: messageOf(e) }, close: true }),
        );
    };
  }

  /** Reads, checks and takes one request; never throws for what the sender got wrong. */
  async receive(req: {
    headers: DirectHeaders;
    body: Readable | AsyncIterable<Uint8Array> | Uint8Array;
  }): Promise<DirectAnswer> {
    const headers = flat(req.headers);
    const stream =
      req.body instanceof Uint8Array
        ? Readable.from([req.body])
        : req.body instanceof Readable
          ? req.body
          : Readable.from(req.body);
    let read = false;
    try {
      const ct = headers['content-type'] ?? '';
      if (!/^multipart\/form-data\s*;/i.test(ct))
        throw new Refusal(415, `expected multipart/form-data, got '${ct.slice(0, 100)}'`);
      const id = headers['webhook-id'];
      if (!id || !headers['webhook-timestamp'] || !headers['webhook-signature'])
        throw new Refusal(401, 'missing webhook-id, webhook-timestamp or webhook-signature header');
      const r = await this.#parse({ ...headers, 'content-type': ct }, id, stream);
      read = true;
      return r;
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      return {
        status: e.status,
        body: { ok: false, error: e.message },
        close: !read,
        ...(e.headers ? { headers: e.headers } : {}),
      };
    }
  }

  async #parse(
    headers: Record<string, string> & { 'content-type': string },
    id: string,
    stream: Readable,
  ): Promise<DirectAnswer> {
    const o = this.#o;
    let manifest: Manifest | undefined;
    let pages: Map<string, DirectPageMeta> | undefined;
    let duplicate = false;
    const data = new Map<string, Buffer>();
    let parts = 0;
    // Parts are handled one after the other, in order: the manifest first, verified before any image is kept.
    let work: Promise<void> = Promise.resolve();
    let failure: unknown;

    const takeMeta = async (bytes: Buffer) => {
      let m: unknown;
      try {
        m = JSON.parse(bytes.toString('utf8'));
      } catch {
        throw new Refusal(400, 'the meta part is not JSON');
      }
      if (!isObject(m) || typeof m.scan_uuid !== 'string') throw new Refusal(400, 'the manifest has no scan_uuid');
      const secret = typeof o.secret === 'string' ? o.secret : await o.secret(m.scan_uuid);
      if (!secret)
        throw new Refusal(503, `scan ${m.scan_uuid.slice(0, 64)} is not known (yet)`, { 'retry-after': '1' });
      try {
        new Webhook(secret).verify(bytes.toString('utf8'), headers);
      } catch (e) {
        if (!(e instanceof WebhookVerificationError)) throw e;
        throw new Refusal(401, `signature: ${e.message}`);
      }
      const checked = checkManifest(m, { encrypted: true });
      if (typeof checked === 'string') throw new Refusal(422, checked);
      if (id !== webhookId(checked.scan_uuid, checked.batch))
        throw new Refusal(422, `webhook-id ${id} does not name scan ${checked.scan_uuid} batch ${checked.batch}`);
      manifest = checked;
      duplicate = await o.state.seen(id);
      if (checked.type === 'pages') {
        pages = new Map(checked.pages.map((p) => [p.part, p]));
        const tooBig = checked.pages.find((p) => p.bytes > o.maxPageBytes);
        if (tooBig)
          throw new Refusal(
            413,
            `page ${tooBig.part} of ${tooBig.bytes} bytes is larger than the ${o.maxPageBytes} bytes accepted`,
          );
      }
      if (!duplicate) {
        const next = await o.state.next(checked.scan_uuid);
        // scan.end may follow a batch never acknowledged (after a stop or a give-up): its totals
        // say what the receiver should have. Pages must come in order, with no gap.
        if (checked.type === 'pages' ? checked.batch !== next : checked.batch < next)
          throw new Refusal(409, `batch ${checked.batch} of scan ${checked.scan_uuid}: batch ${next} is expected next`);
      }
    };

    await new Promise<void>((resolve, reject) => {
      let bb: InstanceType<typeof Busboy>;
      try {
        bb = new Busboy({
          headers,
          isPartAFile: () => true,
          limits: {
            files: MAX_PAGES_PER_BATCH + 1,
            parts: MAX_PAGES_PER_BATCH + 1,
            fileSize: Math.max(o.maxPageBytes, MAX_META),
            fields: 0,
            headerPairs: 20,
          },
        });
      } catch (e) {
        reject(new Refusal(400, `multipart: ${messageOf(e)}`));
        return;
      }
      const fail = (e: unknown) => {
        if (failure) return;
        failure = e;
        stream.unpipe(bb);
        stream.resume();
        reject(e);
      };
      bb.on('file', (name, file) => {
        const index = parts++;
        const hash = createHash('sha256');
        const chunks: Buffer[] = [];
        let size = 0;
        let tooBig = false;
        file.on('data', (c: Buffer) => {
          size += c.length;
          if (index === 0 ? size > MAX_META : size > o.maxPageBytes) {
            tooBig = true;
            return;
          }
          hash.update(c);
          chunks.push(c);
        });
        file.on('limit', () => {
          tooBig = true;
        });
        file.on('end', () => {
          work = work
            .then(async () => {
              if (failure) return;
              if (index === 0) {
                if (name !== 'meta') throw new Refusal(400, `the first part must be 'meta', got '${name}'`);
                if (tooBig) throw new Refusal(413, `the meta part is larger than ${MAX_META} bytes`);
                await takeMeta(Buffer.concat(chunks));
                return;
              }
              if (!manifest) return;
              const p = pages?.get(name);
              if (!p) throw new Refusal(422, `part '${name}' is not in the manifest`);
              if (data.has(name)) throw new Refusal(422, `part '${name}' sent twice`);
              if (tooBig) throw new Refusal(413, `part ${name} is larger than ${o.maxPageBytes} bytes`);
              if (size !== p.bytes) throw new Refusal(422, `part ${name}: ${size} bytes, the manifest says ${p.bytes}`);
              const digest = hash.digest('hex');
              if (digest !== p.sha256)
                throw new Refusal(422, `part ${name}: SHA-256 ${digest}, the manifest says ${p.sha256}`);
              data.set(name, Buffer.concat(chunks));
            })
            .catch(fail);
        });
      });
      bb.on('partsLimit', () => fail(new Refusal(413, `more than ${MAX_PAGES_PER_BATCH + 1} parts`)));
      bb.on('error', (e: Error) => fail(new Refusal(400, `multipart: ${e.message}`)));
      bb.on('finish', () => {
        work.then(() => {
          if (!failure) resolve();
        }, fail);
      });
      stream.on('error', (e) => fail(e));
      stream.pipe(bb);
    });

    if (!manifest) throw new Refusal(400, 'no meta part');
    const m = manifest;
    if (m.type === 'pages') {
      const missing = [...new Set(m.pages.map((p) => p.part))].filter((k) => !data.has(k));
      if (missing.length > 0) throw new Refusal(422, `part(s) ${missing.join(', ')} of the manifest are missing`);
    }
    if (duplicate) return { status: 200, body: { ok: true, duplicate: true } };
    const { v: _v, ...rest } = m;
    if (rest.type === 'pages') {
      const event: DirectPagesBatch = {
        ...rest,
        id,
        pages: rest.pages.map((p) => {
          const bytes = data.get(p.part);
          if (!bytes) throw new Refusal(422, `part ${p.part} of the manifest is missing`);
          return { ...p, data: bytes };
        }),
      };
      await this.#o.onPages(event);
      await this.#o.state.accepted(event.scan_uuid, event.batch, id);
      return { status: 200, body: { ok: true }, event };
    }
    const event: DirectScanEnd = { ...rest, id };
    await this.#o.onEnd?.(event);
    await this.#o.state.accepted(event.scan_uuid, event.batch, id);
    return { status: 200, body: { ok: true }, event };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function flat(h: DirectHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h))
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

function answer(
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
  a: DirectAnswer,
): void {
  const body = JSON.stringify(a.body);
  const h: Record<string, string | number> = {
    ...a.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  };
  // HTTP/1.1: a body left unread would stall the connection; HTTP/2 has no Connection header.
  if (a.close && req.httpVersionMajor === 1) h.connection = 'close';
  // The same two calls either way: TypeScript cannot call a union of the two classes' overloads.
  if ('stream' in res) {
    res.writeHead(a.status, h);
    res.end(body);
  } else {
    res.writeHead(a.status, h);
    res.end(body);
  }
}
