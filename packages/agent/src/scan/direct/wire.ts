// The bytes of `boxhub direct v1` (docs/direct-transfer.md): one multipart/form-data request per
// batch of pages, the JSON manifest `meta` first, then the JPEG parts; a final `scan.end`
// request with the manifest alone. The manifest is signed with Standard Webhooks headers.
// The manifest's shape and rules are @boxhub/protocol's direct-wire.ts, which receivers check it with.
import { createHmac, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { webhookId, type Manifest } from '@boxhub/protocol/direct-wire.ts';

/** Standard Webhooks' signature: v1,base64(HMAC-SHA256(key, "{id}.{timestamp}.{payload}")),
 *  the key being the base64 after `whsec_`. */
export function sign(secret: string, id: string, timestamp: number, payload: Buffer): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(payload).digest('base64');
  return `v1,${mac}`;
}

export interface BuiltRequest {
  headers: Record<string, string>;
  /** The body's length in bytes (sent as Content-Length). */
  length: number;
  /** The body, part by part: an image is read from its file only when its turn comes, so a
   *  batch never sits in memory whole (one page at a time, however often it is sent). */
  body(): AsyncGenerator<Buffer>;
}

/**
 * One request: the manifest as the `meta` part, then each page's bytes as the part the manifest
 * names (given as bytes, or as the path of the file that holds exactly `bytes` of them).
 * `timestamp` is this attempt's (Unix seconds): a new signature every attempt, the same id.
 */
export function buildRequest(o: {
  manifest: Manifest;
  images: Array<Buffer | string>;
  secret: string;
  timestamp: number;
  userAgent: string;
}): BuiltRequest {
  const meta = Buffer.from(JSON.stringify(o.manifest), 'utf8');
  const boundary = `boxhub-${randomBytes(16).toString('hex')}`;
  const head = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n`,
    ),
    meta,
  ]);
  const pages = o.manifest.type === 'pages' ? o.manifest.pages : [];
  if (pages.length !== o.images.length)
    throw new Error(`${pages.length} pages in the manifest, ${o.images.length} images`);
  const partHeads = pages.map((p) =>
    Buffer.from(
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="${p.part}"; filename="${p.page_number}.jpg${p.cipher ? '.enc' : ''}"\r\nContent-Type: ${p.content_type}\r\n\r\n`,
    ),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = head.length + tail.length + partHeads.reduce((n, h, i) => n + h.length + pages[i]!.bytes, 0);
  const id = webhookId(o.manifest.scan_uuid, o.manifest.batch);
  return {
    length,
    async *body() {
      yield head;
      for (let i = 0; i < pages.length; i++) {
        yield partHeads[i]!;
        const img = o.images[i]!;
        // A file that changed on the disk no longer fits Content-Length: the HTTP client refuses
        // to send it (a failed attempt), and the receiver would refuse it anyway (its SHA-256).
        yield typeof img === 'string' ? await readFile(img) : img;
      }
      yield tail;
    },
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(length),
      'webhook-id': id,
      'webhook-timestamp': String(o.timestamp),
      'webhook-signature': sign(o.secret, id, o.timestamp, meta),
      'idempotency-key': id,
      'user-agent': o.userAgent,
    },
  };
}

/** The whole body as bytes (tests, small requests). */
export async function requestBytes(r: BuiltRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r.body()) chunks.push(c);
  return Buffer.concat(chunks);
}
