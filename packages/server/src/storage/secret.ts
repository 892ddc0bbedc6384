// The local store's URL-signing key when BOXHUB_BLOB_SECRET is not set: 32 random bytes made
// on first start and kept in the data dir, owner-only, so links survive a restart.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function blobSecret(dataDir: string): Promise<Buffer> {
  const file = join(dataDir, 'blob-secret');
  try {
    const b = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (b.length >= 32) return b;
  } catch {
    /* made below */
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const b = randomBytes(32);
  // wx: two processes starting at once must not overwrite each other's key.
  try {
    await writeFile(file, b.toString('base64'), { mode: 0o600, flag: 'wx' });
    return b;
  } catch {
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  }
}
