// The download of a release, resumed where it broke off (docs/updates.md): the bytes go to
// `releases/downloads/<sha256>.part`; a later attempt (after a dropped connection or a restart
// of the agent) asks for the rest with a Range header and appends it. The finished file is
// checked against the manifest's size and SHA-256 before anything else looks at it.
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

export interface DownloadCheck { size: number; sha256: string }

/** Downloads `url` to `dir`, resuming a partial file; returns the path of the checked file. */
export async function downloadRelease(url: string, dir: string, want: DownloadCheck, o: { attempts?: number } = {}): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${want.sha256}.part`);
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < (o.attempts ?? 5); attempt++) {
    const have = await sizeOf(path);
    if (have > want.size) await rm(path, { force: true });
    if (have === want.size) break;
    try {
      await fetchInto(url, path, have > want.size ? 0 : have);
    } catch (e) {
      lastError = e as Error;
    }
  }
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
  try { return (await stat(path)).size; } catch { return 0; }
}

/** One GET from `from` on: appends on 206, starts over on 200. */
async function fetchInto(url: string, path: string, from: number): Promise<void> {
  const res = await get(url, from > 0 ? { range: `bytes=${from}-` } : {});
  const append = res.statusCode === 206 && from > 0;
  if (!append && res.statusCode !== 200) {
    res.resume();
    throw new Error(`download answered HTTP ${res.statusCode ?? '?'}`);
  }
  // Each chunk written as it comes (not through a stream buffer a broken connection would
  // discard): what arrived before a break is on disk for the next attempt to resume from.
  const h = await open(path, append ? 'a' : 'w', 0o600);
  try {
    for await (const chunk of res) if (Buffer.isBuffer(chunk)) await h.write(chunk);
  } finally {
    await h.close();
  }
}

function get(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, timeout: 60_000 }, resolve);
    req.on('timeout', () => req.destroy(new Error('download timed out')));
    req.on('error', reject);
    req.end();
  });
}
