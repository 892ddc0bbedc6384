// Encrypted files on disk, streamed (docs/encryption.md, "Decrypting"): the scheme over files an
// application reads and writes. The scheme itself, over bytes and streams, is @boxhub/protocol's
// e2e.ts; the file reading and writing lives here, in the one package that uses it.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileSealer, newContentKey, openStream, unwrapContentKey, wrapContentKey } from '@boxhub/protocol/e2e.ts';

type KeyInput = string | Uint8Array;

/** Encrypts a file to another, streamed: the cipher, and the size and MD5 of the encrypted file. */
export async function sealFile(
  src: string,
  dst: string,
  recipientPublicKey: KeyInput,
  info: string,
): Promise<{ cipher: string; size: number; md5: string }> {
  const key = newContentKey();
  const cipher = await wrapContentKey(recipientPublicKey, info, key);
  const s = new FileSealer(key);
  const md5 = createHash('md5');
  let size = 0;
  const out = (b: Buffer) => {
    md5.update(b);
    size += b.length;
    return b;
  };
  let first = true;
  await pipeline(
    createReadStream(src),
    new Transform({
      transform(chunk: Buffer, _e, done) {
        const parts = first ? [out(s.header)] : [];
        first = false;
        parts.push(out(s.update(chunk)));
        done(null, Buffer.concat(parts));
      },
      flush(done) {
        done(null, Buffer.concat([...(first ? [out(s.header)] : []), out(s.final())]));
      },
    }),
    createWriteStream(dst, { mode: 0o600 }),
  );
  return { cipher, size, md5: md5.digest('hex') };
}

/**
 * Decrypts an encrypted file to `dst`, streamed. The plaintext is written to `dst.part` and
 * renamed to `dst` only after the GCM tag verified, so `dst` exists only for an authentic file.
 */
export async function openFile(
  src: string,
  dst: string,
  privateKey: KeyInput,
  info: string,
  cipher: string,
): Promise<{ size: number }> {
  const key = await unwrapContentKey(privateKey, info, cipher);
  const part = `${dst}.part`;
  let size = 0;
  try {
    await pipeline(
      createReadStream(src),
      openStream(key),
      new Transform({
        transform(c: Buffer, _e, done) {
          size += c.length;
          done(null, c);
        },
      }),
      createWriteStream(part, { mode: 0o600 }),
    );
  } catch (e) {
    await rm(part, { force: true });
    throw e;
  }
  await rename(part, dst);
  return { size };
}
