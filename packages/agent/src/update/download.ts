// The download of a release, resumed where it broke off (docs/updates.md): the bytes go to
// `releases/downloads/<sha256>.part`; a later attempt (after a dropped connection or a restart
// of the agent) asks for the rest with a Range header and appends it. The finished file is
// checked against the manifest's size and SHA-256 before anything else looks at it. Each attempt
// is transfer/resume.ts, in the transfer loop of transfer/retry.ts; the attempts follow one
// another without a wait.
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { getFrom } from '../transfer/resume.ts';
import { retry } from '../transfer/retry.ts';

export interface DownloadCheck {
  size: number;
  sha256: string;
}

/** Downloads `url` to `dir`, resuming a partial file; returns the path of the checked file. */
export async function downloadRelease(
  url: string,
  dir: string,
  want: DownloadCheck,
  o: { attempts?: number } = {},
): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${want.sha256}.part`);
  let lastError: Error | undefined;
  const attempts = o.attempts ?? 5;
  await retry<void>({
    attempt: async (n) => {
      if (n > attempts) return { done: undefined };
      const have = await sizeOf(path);
      if (have > want.size) await rm(path, { force: true });
      if (have === want.size) return { done: undefined };
      try {
        await getFrom(url, path, have > want.size ? 0 : have);
      } catch (e) {
        lastError = e as Error;
      }
      return { now: true };
    },
  });
  const size = await sizeOf(path);
  if (size !== want.size) {
    throw new Error(`download incomplete: ${size} of ${want.size} bytes${lastError ? ` (${lastError.message})` : ''}`);
  }
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  const got = hash.digest('hex');
  if (got !== want.sha256) {
    await rm(path, { force: true });
    throw new Error(`download does not match the manifest: sha256 ${got}, expected ${want.sha256}`);
  }
  return path;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
