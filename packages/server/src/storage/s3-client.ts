// A small S3 client: the six calls the S3 blob store makes (PUT, HEAD and GET object,
// ListObjectsV2, DeleteObjects, presigned URLs), signed by sigv4.ts and sent with undici.
// Why not the AWS SDK: see sigv4.ts. Requests are not retried here: every caller retries at its
// own level (the box re-asks for an upload URL, a job event is re-sent until applied, the expiry
// job runs again after its lease), and a retry here would only hide a store that is down.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { SigV4 } from './sigv4.ts';

export interface S3Target {
  /** Origin of the S3 API, e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000. */
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Bucket in the path (https://host/bucket/key) rather than the host name (https://bucket.host/key). */
  pathStyle: boolean;
}

/** An answer from S3 other than success: its HTTP status and S3 error code (AWS "Error Responses"). */
export class S3Error extends Error {
  readonly status: number;
  readonly code: string;
  constructor(what: string, status: number, code: string, message: string) {
    super(`S3 ${what}: HTTP ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`);
    this.status = status;
    this.code = code;
  }
}

const TIMEOUT_MS = 30_000;

export class S3Client {
  readonly target: Omit<S3Target, 'secretAccessKey'>;
  readonly signer: SigV4;
  readonly #dispatcher: Agent;

  constructor(t: S3Target) {
    // Read field by field: the secret goes to the signer only, never into an object we may log.
    this.target = {
      endpoint: t.endpoint,
      region: t.region,
      bucket: t.bucket,
      accessKeyId: t.accessKeyId,
      pathStyle: t.pathStyle,
    };
    this.signer = new SigV4({ accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey, region: t.region });
    this.#dispatcher = new Agent({ connections: 64, keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });
  }

  /** The URL of an object (keys are plain ASCII, checkKey in blob-store.ts, but encode anyway). */
  objectUrl(key: string): URL {
    const path = key.split('/').map(encodeURIComponent).join('/');
    return new URL(`${this.bucketUrl().toString().replace(/\/$/, '')}/${path}`);
  }

  bucketUrl(): URL {
    const e = new URL(this.target.endpoint);
    return this.target.pathStyle
      ? new URL(`${e.origin}/${encodeURIComponent(this.target.bucket)}/`)
      : new URL(`${e.protocol}//${this.target.bucket}.${e.host}/`);
  }

  presign(
    method: 'GET' | 'PUT',
    url: URL,
    o: { headers?: Record<string, string>; at: number; expiresSec: number },
  ): Promise<string> {
    return this.signer.presign(method, url, o);
  }

  /**
   * Sends a request signed with the real time: S3 refuses a signed request whose date is more
   * than 15 minutes from its own clock, whatever clock the service runs on.
   */
  async send(
    what: string,
    method: Dispatcher.HttpMethod,
    url: URL,
    o: { headers?: Record<string, string>; body?: Buffer | Readable; ok?: number[] } = {},
  ): Promise<Dispatcher.ResponseData> {
    const headers = await this.signer.sign(method, url, o.headers ?? {}, Date.now());
    const res = await request(url, {
      method,
      headers,
      dispatcher: this.#dispatcher,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      ...(o.body !== undefined ? { body: o.body } : {}),
    });
    if ((o.ok ?? [200]).includes(res.statusCode)) return res;
    const text = method === 'HEAD' ? '' : await res.body.text().catch(() => '');
    if (method === 'HEAD') res.body.resume();
    throw new S3Error(what, res.statusCode, xmlText(text, 'Code') ?? '', xmlText(text, 'Message') ?? '');
  }

  /** One page of ListObjectsV2 under `prefix`. */
  async listPage(
    prefix: string,
    token: string | undefined,
    maxKeys = 1000,
  ): Promise<{ keys: string[]; next: string | undefined }> {
    const u = this.bucketUrl();
    u.searchParams.set('list-type', '2');
    u.searchParams.set('prefix', prefix);
    u.searchParams.set('max-keys', String(maxKeys));
    if (token) u.searchParams.set('continuation-token', token);
    const res = await this.send(`list ${prefix}`, 'GET', u);
    const xml = await res.body.text();
    const keys = [...xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)]
      .map((m) => xmlText(m[1] ?? '', 'Key') ?? '')
      .filter((k) => k !== '');
    const truncated = xmlText(xml, 'IsTruncated') === 'true';
    const next = truncated ? xmlText(xml, 'NextContinuationToken') : undefined;
    if (truncated && !next)
      throw new S3Error(
        `list ${prefix}`,
        res.statusCode,
        'MalformedResponse',
        'a truncated listing without NextContinuationToken',
      );
    return { keys, next };
  }

  /** DeleteObjects (up to 1000 keys); a key that does not exist counts as deleted. */
  async deleteMany(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    if (keys.length > 1000) throw new RangeError('DeleteObjects takes at most 1000 keys');
    const body = Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>${keys
        .map((k) => `<Object><Key>${xmlEscape(k)}</Key></Object>`)
        .join('')}</Delete>`,
    );
    const u = this.bucketUrl();
    u.searchParams.set('delete', '');
    // S3 requires Content-MD5 (or a checksum header) on DeleteObjects.
    const res = await this.send(`delete ${keys.length} objects`, 'POST', u, {
      headers: {
        'content-type': 'application/xml',
        'content-length': String(body.length),
        'content-md5': createHash('md5').update(body).digest('base64'),
      },
      body,
    });
    const xml = await res.body.text();
    // A 200 can still carry per-key failures (AccessDenied, InternalError): none may pass silently.
    const err = /<Error>([\s\S]*?)<\/Error>/.exec(xml)?.[1];
    if (err !== undefined) {
      throw new S3Error(
        `delete ${xmlText(err, 'Key') ?? '?'}`,
        res.statusCode,
        xmlText(err, 'Code') ?? '',
        xmlText(err, 'Message') ?? '',
      );
    }
  }

  close(): Promise<void> {
    return this.#dispatcher.close();
  }
}

// S3's XML answers (ListBucketResult, DeleteResult, Error) are flat documents of a fixed schema
// from which we read five elements; an XML library would be a dependency for that alone. What a
// text node can hold is limited to the predefined entities and character references (XML 1.0
// §4.6, §4.1), which xmlText decodes.
export function xmlText(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return m ? xmlUnescape(m[1] ?? '') : undefined;
}

function xmlUnescape(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e] ?? '';
  });
}

function xmlEscape(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );
}
