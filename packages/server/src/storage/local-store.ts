// Blobs as files under <data dir>/blobs (the default store). Each file has a `.meta` sidecar
// with its size, MD5 and type, written after the file is complete, so a blob without its
// sidecar is an upload that never finished and does not exist. The files are served and
// received by routes.ts through HMAC-signed URLs (signed-url.ts); one node only: several nodes
// need a shared store (S3, s3-store.ts).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../clock.ts';
import { checkKey, type BlobStore, type StoredBlob, type UploadGrant } from './blob-store.ts';
import { sign } from './signed-url.ts';

export interface LocalBlobStoreOptions {
  root: string;
  /** HMAC key of the signed URLs. */
  secret: Buffer;
  /** Base URL the URLs point at (the server's public URL). */
  baseUrl: () => string;
  clock: Clock;
}

export interface BlobMeta extends StoredBlob {
  contentType: string;
}

export class UploadMismatch extends Error {}

export class LocalBlobStore implements BlobStore {
  readonly o: LocalBlobStoreOptions;
  constructor(o: LocalBlobStoreOptions) {
    this.o = o;
  }

  path(key: string): string {
    checkKey(key);
    return join(this.o.root, key);
  }

  async uploadUrl(
    key: string,
    u: { size: number; md5: string; contentType: string; expiresInMs: number },
  ): Promise<UploadGrant> {
    checkKey(key);
    const exp = Math.floor((this.o.clock.now() + u.expiresInMs) / 1000);
    const extra = `${u.size}:${u.md5}:${u.contentType}`;
    const sig = sign(this.o.secret, { method: 'PUT', key, exp, extra });
    const q = new URLSearchParams({ exp: String(exp), size: String(u.size), md5: u.md5, sig });
    return {
      url: `${this.o.baseUrl()}/blobs/${key}?${q}`,
      method: 'PUT',
      headers: { 'content-type': u.contentType },
      expiresAt: exp * 1000,
    };
  }

  async downloadUrl(key: string, d: { fileName: string; contentType: string; expiresInMs: number }): Promise<string> {
    checkKey(key);
    const exp = Math.floor((this.o.clock.now() + d.expiresInMs) / 1000);
    const sig = sign(this.o.secret, { method: 'GET', key, exp, extra: d.fileName });
    const q = new URLSearchParams({ exp: String(exp), dn: d.fileName, sig });
    return `${this.o.baseUrl()}/blobs/${key}?${q}`;
  }

  async put(key: string, body: Buffer | Readable, p: { contentType: string }): Promise<StoredBlob> {
    return this.receive(key, Buffer.isBuffer(body) ? Readable.from([body]) : body, { contentType: p.contentType });
  }

  /**
   * Writes a stream to `key` through a temporary file, hashing it on the way; with `expect`,
   * more bytes than `size` stop the stream at once and a different size or MD5 throws
   * UploadMismatch and keeps nothing.
   */
  async receive(
    key: string,
    body: Readable,
    r: { contentType: string; expect?: { size: number; md5: string } },
  ): Promise<StoredBlob> {
    const file = this.path(key);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${randomBytes(6).toString('hex')}.part`;
    const hash = createHash('md5');
    let size = 0;
    const limit = r.expect?.size;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (limit !== undefined && size > limit) {
          done(new UploadMismatch(`more than the ${limit} bytes the upload URL allows`));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, meter, createWriteStream(tmp, { mode: 0o600 }));
      const md5 = hash.digest('hex');
      if (r.expect && (size !== r.expect.size || md5 !== r.expect.md5)) {
        throw new UploadMismatch(
          `received ${size} bytes with MD5 ${md5}; the upload URL is for ${r.expect.size} bytes with MD5 ${r.expect.md5}`,
        );
      }
      await rename(tmp, file);
      const meta: BlobMeta = { size, md5, contentType: r.contentType };
      await writeFile(`${file}.meta`, JSON.stringify(meta), { mode: 0o600 });
      return { size, md5 };
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async meta(key: string): Promise<BlobMeta | undefined> {
    try {
      return JSON.parse(await readFile(`${this.path(key)}.meta`, 'utf8')) as BlobMeta;
    } catch {
      return undefined;
    }
  }

  async stat(key: string): Promise<StoredBlob | undefined> {
    checkKey(key);
    const m = await this.meta(key);
    if (!m) return undefined;
    // The sidecar says what was received; the file must still be that size.
    const s = await stat(this.path(key)).catch(() => undefined);
    return s && s.size === m.size ? { size: m.size, md5: m.md5 } : undefined;
  }

  async get(key: string): Promise<Readable> {
    checkKey(key);
    if (!(await this.meta(key))) throw new Error(`no blob '${key}'`);
    return createReadStream(this.path(key));
  }

  async getBytes(key: string): Promise<Buffer> {
    checkKey(key);
    if (!(await this.meta(key))) throw new Error(`no blob '${key}'`);
    // One read into one buffer: a stream and its chunks cost the recognition workers' main
    // thread more than the read itself.
    return readFile(this.path(key));
  }

  async deletePrefix(prefix: string): Promise<void> {
    checkKey(prefix);
    // The prefix is a directory of blobs, or a blob itself with its sidecar.
    await rm(join(this.o.root, prefix), { recursive: true, force: true });
    await rm(join(this.o.root, `${prefix}.meta`), { force: true });
  }
}
