// A download resumed where it broke off (a release, docs/updates.md): one GET asks for the rest
// of the file with a Range header and appends it; a server that answers the whole file (200)
// starts it over. One attempt: how many, and what is checked at the end, are the caller's.
import { open } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** One GET from `from` on: appends on 206, starts over on 200. */
export async function getFrom(url: string, path: string, from: number): Promise<void> {
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
