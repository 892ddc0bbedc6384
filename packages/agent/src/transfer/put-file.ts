// One HTTP(S) PUT of an item file, for the job runner's upload (signed URL, retries and the
// rest are the runner's). Memory: the file goes out through two reused 256 KB buffers, so an
// upload allocates nothing per chunk. (fs.createReadStream allocates a new 64 KB buffer per
// chunk; at loopback or LAN speed that is hundreds of MB a minute of garbage that V8 frees only
// in batches, which measured 10-20 MB more peak RSS in the 600 dpi bench.)
import { open } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';

export interface PutFileOptions {
  /** Headers the PUT must carry (a signed URL's), besides content-length. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** No progress (connect, a chunk written, the answer) for this long fails the upload, ms. */
  timeoutMs?: number;
  rejectUnauthorized?: boolean;
}

export interface PutFileResult {
  status: number;
  /** The answer's body, at most 64 KB of it. */
  body: string;
  bytes: number;
  ms: number;
}

const CHUNK = 256 * 1024;
const MAX_ANSWER = 64 * 1024;

export async function putFile(url: string, path: string, o: PutFileOptions = {}): Promise<PutFileResult> {
  o.signal?.throwIfAborted();
  const target = new URL(url);
  const lib = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
  if (!lib) throw new TypeError(`upload URL must be http or https, not ${target.protocol}`);
  const fh = await open(path, 'r');
  const t0 = performance.now();
  try {
    const size = (await fh.stat()).size;
    return await new Promise<PutFileResult>((resolve, reject) => {
      const req = lib.request(
        target,
        {
          method: 'PUT',
          agent: false,
          rejectUnauthorized: o.rejectUnauthorized ?? true,
          headers: { ...o.headers, 'content-length': String(size) },
          ...(o.signal ? { signal: o.signal } : {}),
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            if (body.length < MAX_ANSWER) body += c;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: body.slice(0, MAX_ANSWER),
              bytes: size,
              ms: performance.now() - t0,
            }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(o.timeoutMs ?? 30_000, () =>
        req.destroy(new Error(`upload to ${target.host} made no progress for ${o.timeoutMs ?? 30_000} ms`)),
      );
      req.on('error', (e) => reject(o.signal?.aborted ? o.signal.reason : e));
      // Two buffers in turn: one is read into while the socket takes the other.
      let slot = { buffer: Buffer.allocUnsafe(CHUNK), free: Promise.resolve() };
      let other = { buffer: Buffer.allocUnsafe(CHUNK), free: Promise.resolve() };
      void (async () => {
        let pos = 0;
        for (; pos < size; [slot, other] = [other, slot]) {
          await slot.free;
          if (req.destroyed) return;
          const { bytesRead } = await fh.read(slot.buffer, 0, Math.min(CHUNK, size - pos), pos);
          if (bytesRead === 0) throw new Error(`${path} ended at ${pos} of ${size} bytes`);
          pos += bytesRead;
          // The buffer is used again only once the socket has taken this chunk.
          const chunk = slot.buffer.subarray(0, bytesRead);
          slot.free = new Promise<void>((r) => req.write(chunk, () => r()));
        }
        req.end();
      })().catch((e: unknown) => req.destroy(e instanceof Error ? e : new Error(String(e))));
    });
  } finally {
    await fh.close();
  }
}
