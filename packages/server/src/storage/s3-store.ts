// Blobs in S3-compatible object storage (docs/storage.md): selected by the BOXHUB_S3_* settings,
// shared by every server node. Boxes upload and applications download straight from the store
// with presigned URLs; the server's own requests go through s3-client.ts.
//
// An upload URL is bound to one object of one size and MD5: Content-Length, Content-MD5 and
// Content-Type are signed headers, so the uploader must send them as given (S3 answers 403
// SignatureDoesNotMatch otherwise), and S3 answers 400 BadDigest to bytes whose MD5 is not the
// signed one (AWS PutObject, "Content-MD5"). The MD5 also goes in as x-amz-meta-md5, which keeps
// `stat` exact where the ETag is not an MD5.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../clock.ts';
import { checkKey, type BlobStore, type StoredBlob, type UploadGrant } from './blob-store.ts';
import { attachment } from './content-disposition.ts';
import { S3Client, S3Error, type S3Target } from './s3-client.ts';

/** S3's largest single PUT (AWS "Uploading objects"): the most one URL or `put` can store. */
export const S3_MAX_PUT_BYTES = 5 * 1024 ** 3;

export interface S3BlobStoreOptions {
  target: S3Target;
  /** The service's clock: dates of presigned URLs (S3 checks their expiry against its own clock). */
  clock: Clock;
  /** Where `put` spools a stream to learn its size and MD5 before sending it (S3 wants both first). */
  spoolDir: string;
  /** Keys per listing page and per DeleteObjects request (S3's most, 1000, unless a test pages). */
  listPageSize?: number;
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly #clock: Clock;
  readonly #spoolDir: string;
  readonly #pageSize: number;

  constructor(o: S3BlobStoreOptions) {
    this.client = new S3Client(o.target);
    this.#clock = o.clock;
    this.#spoolDir = o.spoolDir;
    this.#pageSize = o.listPageSize ?? 1000;
  }

  async uploadUrl(
    key: string,
    u: { size: number; md5: string; contentType: string; expiresInMs: number },
  ): Promise<UploadGrant> {
    checkKey(key);
    if (!Number.isInteger(u.size) || u.size < 0 || u.size > S3_MAX_PUT_BYTES)
      throw new RangeError(`an S3 upload is 0 to ${S3_MAX_PUT_BYTES} bytes, not ${u.size}`);
    if (!/^[0-9a-f]{32}$/.test(u.md5)) throw new RangeError(`'${u.md5}' is not an MD5 in lowercase hex`);
    const at = this.#clock.now();
    const expiresSec = Math.max(1, Math.floor(u.expiresInMs / 1000));
    const headers = {
      'content-md5': Buffer.from(u.md5, 'hex').toString('base64'),
      'content-type': u.contentType,
      'x-amz-meta-md5': u.md5,
    };
    // Content-Length is signed as well but not handed over: every HTTP client sends it for a body
    // of `size` bytes, and fetch refuses a request that sets it itself.
    const url = await this.client.presign('PUT', this.client.objectUrl(key), {
      headers: { ...headers, 'content-length': String(u.size) },
      at,
      expiresSec,
    });
    return { url, method: 'PUT', headers, expiresAt: Math.floor(at / 1000) * 1000 + expiresSec * 1000 };
  }

  async downloadUrl(key: string, d: { fileName: string; contentType: string; expiresInMs: number }): Promise<string> {
    checkKey(key);
    const u = this.client.objectUrl(key);
    // S3's response-* overrides (AWS GetObject): part of the signature, so nobody can change the
    // name or type a link serves (a rename to x.html would let the file run as a page).
    u.searchParams.set('response-content-disposition', attachment(d.fileName));
    u.searchParams.set('response-content-type', d.contentType);
    u.searchParams.set('response-cache-control', 'private, no-store');
    return this.client.presign('GET', u, {
      at: this.#clock.now(),
      expiresSec: Math.max(1, Math.floor(d.expiresInMs / 1000)),
    });
  }

  async put(key: string, body: Buffer | Readable, p: { contentType: string }): Promise<StoredBlob> {
    checkKey(key);
    if (Buffer.isBuffer(body)) {
      const md5 = createHash('md5').update(body).digest('hex');
      await this.send(key, body, { size: body.length, md5, contentType: p.contentType });
      return { size: body.length, md5 };
    }
    // A stream's size and MD5 are known only at its end, and S3 needs both before the first
    // byte (no chunked PUT): it goes to a file first, hashed on the way, never into memory.
    await mkdir(this.#spoolDir, { recursive: true, mode: 0o700 });
    const file = join(this.#spoolDir, `${randomBytes(8).toString('hex')}.part`);
    try {
      const hash = createHash('md5');
      let size = 0;
      await pipeline(
        body,
        new Transform({
          transform(chunk: Buffer, _enc, done) {
            size += chunk.length;
            if (size > S3_MAX_PUT_BYTES) {
              done(new RangeError(`more than the ${S3_MAX_PUT_BYTES} bytes one S3 PUT can store`));
              return;
            }
            hash.update(chunk);
            done(null, chunk);
          },
        }),
        createWriteStream(file, { mode: 0o600 }),
      );
      const md5 = hash.digest('hex');
      await this.send(key, createReadStream(file), { size, md5, contentType: p.contentType });
      return { size, md5 };
    } finally {
      await rm(file, { force: true });
    }
  }

  private async send(
    key: string,
    body: Buffer | Readable,
    o: { size: number; md5: string; contentType: string },
  ): Promise<void> {
    const res = await this.client.send(`put ${key}`, 'PUT', this.client.objectUrl(key), {
      headers: {
        'content-length': String(o.size),
        'content-md5': Buffer.from(o.md5, 'hex').toString('base64'),
        'content-type': o.contentType,
        'x-amz-meta-md5': o.md5,
      },
      body,
    });
    await res.body.dump();
  }

  async stat(key: string): Promise<StoredBlob | undefined> {
    checkKey(key);
    let res;
    try {
      res = await this.client.send(`stat ${key}`, 'HEAD', this.client.objectUrl(key));
    } catch (e) {
      if (e instanceof S3Error && e.status === 404) return undefined;
      throw e;
    }
    await res.body.dump();
    const size = Number(res.headers['content-length']);
    if (!Number.isSafeInteger(size))
      throw new S3Error(`stat ${key}`, res.statusCode, 'MalformedResponse', 'no Content-Length');
    return { size, md5: md5FromHead(key, res.headers) };
  }

  async get(key: string): Promise<Readable> {
    checkKey(key);
    try {
      const res = await this.client.send(`get ${key}`, 'GET', this.client.objectUrl(key));
      return res.body;
    } catch (e) {
      if (e instanceof S3Error && e.status === 404) throw new Error(`no blob '${key}'`);
      throw e;
    }
  }

  async getBytes(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of await this.get(key)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  async deletePrefix(prefix: string): Promise<void> {
    checkKey(prefix);
    // Listed under `prefix` and kept when the key is the prefix or below it as a folder, the way
    // the local store's directories work: deleting scan/ab leaves scan/abc alone.
    let token: string | undefined;
    do {
      const page = await this.client.listPage(prefix, token, this.#pageSize);
      await this.client.deleteMany(page.keys.filter((k) => k === prefix || k.startsWith(`${prefix}/`)));
      token = page.next;
    } while (token);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

type HeadHeaders = Record<string, string | string[] | undefined>;

function one(h: HeadHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The MD5 of an object from its HEAD (AWS "Checking object integrity", ETag): the ETag of an
 * object stored by one PUT is the MD5 of its bytes, except under SSE-KMS or SSE-C encryption,
 * and a multipart object's ETag ends in -<parts>. Where the ETag is not an MD5, the MD5 we
 * signed into the upload as x-amz-meta-md5 (checked by S3 against Content-MD5) is used.
 */
export function md5FromHead(key: string, h: HeadHeaders): string {
  const etag = (one(h, 'etag') ?? '').replace(/^W\//, '').replace(/"/g, '').toLowerCase();
  const sse = one(h, 'x-amz-server-side-encryption') ?? '';
  const encrypted =
    sse.startsWith('aws:kms') || one(h, 'x-amz-server-side-encryption-customer-algorithm') !== undefined;
  if (/^[0-9a-f]{32}$/.test(etag) && !encrypted) return etag;
  const meta = (one(h, 'x-amz-meta-md5') ?? '').toLowerCase();
  if (/^[0-9a-f]{32}$/.test(meta)) return meta;
  throw new Error(
    `cannot tell the MD5 of blob '${key}': its ETag '${etag}' is not an MD5 and it has no x-amz-meta-md5 (it was not stored through boxhub)`,
  );
}
