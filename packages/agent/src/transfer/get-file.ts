// A GET into a file (a print file's download, docs/printing.md "On the box"), hashed as it
// streams, refusing redirects and more than `max` bytes. One attempt: the retries, a fresh signed
// URL and what a failure means for the task are the caller's (transfer/retry.ts).
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errnoCode, messageOf } from '@boxhub/protocol/caught.ts';
import { E2eError, openStream } from '@boxhub/protocol/e2e.ts';
import { retryableStatus } from './retry.ts';

export type GetFileResult =
  | { ok: true; tag?: false; size: number; md5: string }
  | { ok: false; tag: true; size: number; md5: string; error: string }
  | { ok: false; tag?: false; retry: boolean; status?: number; error: string };

/**
 * GET to a file, hashing as it streams, refusing redirects and more than `max` bytes. With `key`
 * the bytes are an encrypted file: hashed as they come, decrypted into `path` (the caller gives
 * a temporary name); a file that fails its GCM tag answers `tag: true` with its MD5 and size.
 */
export async function getFile(
  url: string,
  path: string,
  max: number,
  signal: AbortSignal,
  key?: Buffer,
): Promise<GetFileResult> {
  let size = 0;
  const hash = createHash('md5');
  // undici is loaded with the first print file, not at the agent's start (docs/box-protocol.md,
  // "Memory on the box").
  const { request } = await import('undici');
  try {
    const res = await request(url, { method: 'GET', signal, headersTimeout: 60_000, bodyTimeout: 60_000 });
    if (res.statusCode !== 200) {
      res.body.on('error', ignore).destroy();
      const retry = retryableStatus(res.statusCode);
      return {
        ok: false,
        retry,
        status: res.statusCode,
        error: `HTTP ${res.statusCode}${res.statusCode >= 300 && res.statusCode < 400 ? ' (redirects are not followed)' : ''}`,
      };
    }
    const meter = new Transform({
      transform(chunk: Buffer, _e, done) {
        size += chunk.length;
        if (size > max) {
          done(new Error(`the file is larger than the ${max} bytes the box takes`));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    if (key) await pipeline(res.body, meter, openStream(key), createWriteStream(path, { mode: 0o600 }));
    else await pipeline(res.body, meter, createWriteStream(path, { mode: 0o600 }));
    return { ok: true, size, md5: hash.digest('hex') };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof E2eError) return { ok: false, tag: true, size, md5: hash.digest('hex'), error: err.message };
    const code = errnoCode(err);
    const message = messageOf(err);
    const tooBig = /larger than/.test(message);
    return { ok: false, retry: !tooBig, error: `${code ? `${code}: ` : ''}${message}` };
  }
}

/** An answer body dropped unread: its "aborted" error must not become an uncaught exception. */
const ignore = (): void => undefined;
