// Files that are either the old or the new content, never half of each: written to a temporary
// name, flushed to the disk, then renamed over the old one (rename is atomic on POSIX file
// systems), and the directory flushed so the rename itself survives a power cut. A box's
// outbox and job journal are built on this: what the agent said it has, it has after a reboot.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

async function syncDir(dir: string): Promise<void> {
  const h = await open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  const tmp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const h = await open(tmp, 'w', 0o600);
    try {
      await h.writeFile(data);
      await h.sync();
    } finally {
      await h.close();
    }
    await rename(tmp, path);
  } catch (e) {
    // A write that failed (a full disk) leaves no half-written temporary file taking space.
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await syncDir(dirname(path));
}

export async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** Parsed JSON files of a directory, by name; unreadable or half-written ones are skipped. */
export async function readJsonDir<T>(dir: string): Promise<Array<{ name: string; value: T }>> {
  const names = (await readdir(dir).catch(() => [] as string[]))
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .sort();
  const out: Array<{ name: string; value: T }> = [];
  for (const name of names) {
    try {
      out.push({ name, value: JSON.parse(await readFile(join(dir, name), 'utf8')) as T });
    } catch {
      /* skipped */
    }
  }
  return out;
}
