// The local store's signed /blobs routes on a real server (both engines): every way a link can
// be wrong answers 403, a key outside the blob tree 404, a suffix range works, and an upload of
// other bytes than signed is refused and leaves nothing behind. What both stores share is in
// blob-store-contract.test.ts.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { offsetClock } from '../clock.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import type { LocalBlobStore } from './local-store.ts';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const bytes = (n: number, seed = 1) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));
const PDF = 'application/pdf';
const MAX = 8192;
let n = 0;
const fresh = () => `t${++n}${Date.now().toString(36)}`;

let server: TestServer;
let store: LocalBlobStore;
let offset = 0;

before(async () => {
  server = await startTestServer({ clock: offsetClock(() => offset), env: { BOXHUB_BLOB_MAX_BYTES: String(MAX) } });
  store = server.server.blobs as LocalBlobStore;
});
after(() => server?.close());

/** A GET with the path exactly as written (fetch would resolve ../ itself). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    httpRequest({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => {
          body += c;
        })
        .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

/** The blob tree's files (sidecars and leftovers of failed uploads included). */
function filesUnder(prefix: string): string[] {
  try {
    return readdirSync(join(store.o.root, prefix), { recursive: true }).map(String);
  } catch {
    return [];
  }
}

async function stored(key: string, body: Buffer): Promise<void> {
  await store.put(key, body, { contentType: PDF });
}

test('a download link that is wrong, altered or expired answers 403', async () => {
  const key = `scan/${fresh()}/1.pdf`;
  const other = `scan/${fresh()}/2.pdf`;
  await stored(key, bytes(500));
  await stored(other, bytes(600));
  const good = new URL(
    await store.downloadUrl(key, { fileName: 'scan-1.pdf', contentType: PDF, expiresInMs: 3_600_000 }),
  );
  const put = new URL(
    (await store.uploadUrl(key, { size: 500, md5: md5(bytes(500)), contentType: PDF, expiresInMs: 3_600_000 })).url,
  );
  assert.equal((await fetch(good)).status, 200);
  const variants: [string, (u: URL) => void][] = [
    [
      'another key',
      (u) => {
        u.pathname = `/blobs/${other}`;
      },
    ],
    [
      'a renamed download',
      (u) => {
        u.searchParams.set('dn', 'scan-1.html');
      },
    ],
    [
      'a later expiry',
      (u) => {
        u.searchParams.set('exp', String(Number(u.searchParams.get('exp')) + 3600));
      },
    ],
    [
      'a changed signature',
      (u) => {
        const s = u.searchParams.get('sig') ?? '';
        u.searchParams.set('sig', (s[0] === 'A' ? 'B' : 'A') + s.slice(1));
      },
    ],
    [
      'a truncated signature',
      (u) => {
        u.searchParams.set('sig', (u.searchParams.get('sig') ?? '').slice(0, 20));
      },
    ],
    [
      'no signature',
      (u) => {
        u.searchParams.delete('sig');
      },
    ],
    [
      'no expiry',
      (u) => {
        u.searchParams.delete('exp');
      },
    ],
    [
      'no name',
      (u) => {
        u.searchParams.delete('dn');
      },
    ],
    // An upload URL's signature for the same key and expiry does not open a download.
    [
      'an upload signature',
      (u) => {
        u.searchParams.set('sig', put.searchParams.get('sig') ?? '');
        u.searchParams.set('exp', put.searchParams.get('exp') ?? '');
      },
    ],
  ];
  for (const [what, change] of variants) {
    const u = new URL(good);
    change(u);
    const res = await fetch(u);
    assert.equal(res.status, 403, what);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL byte in the answer would be the file's bytes leaking
    assert.doesNotMatch(await res.text(), /PDF|\u0000/, what);
  }
  // Expired: the link was good for an hour, and an hour and a second have passed.
  offset = 3_601_000;
  try {
    const res = await fetch(good);
    assert.equal(res.status, 403);
    assert.match(await res.text(), /expired/);
  } finally {
    offset = 0;
  }
});

test('paths outside the blob tree answer 404, whatever the signature', async () => {
  const key = `scan/${fresh()}/1.pdf`;
  await stored(key, bytes(100));
  const q = new URL(await store.downloadUrl(key, { fileName: 'a.pdf', contentType: PDF, expiresInMs: 60_000 })).search;
  for (const path of [
    `/blobs/../../etc/passwd${q}`,
    `/blobs/..%2f..%2fetc%2fpasswd${q}`,
    `/blobs/scan/..%2F..%2F..%2Fetc/passwd${q}`,
    `/blobs/%2e%2e/%2e%2e/etc/passwd${q}`,
    `/blobs/scan//x${q}`,
    `/blobs/${key}%00${q}`,
    `/blobs/scan/.meta${q}`,
    // The signed key itself, its slashes or a letter written as escapes: the router decodes
    // them to the key the signature is for; the plain key form has no escapes.
    `/blobs/${key.replaceAll('/', '%2f')}${q}`,
    `/blobs/${key.replaceAll('/', '%2F')}${q}`,
    `/blobs/%73${key.slice(1)}${q}`,
  ]) {
    const res = await rawGet(path);
    assert.equal(res.status, 404, path);
    assert.doesNotMatch(res.body, /root:/);
  }
  // A sidecar is no blob, even with a genuine signature for its name.
  const sidecar = await fetch(
    await store.downloadUrl(`${key}.meta`, { fileName: 'a.json', contentType: PDF, expiresInMs: 60_000 }),
  );
  assert.equal(sidecar.status, 404);
  assert.doesNotMatch(await sidecar.text(), /md5/);
});

test('a suffix range (slices, open ends and unsatisfiable ranges are in the contract, for both stores)', async () => {
  // Not in the contract: s3rver reads `bytes=-10` as `0-10` (S3 itself serves the suffix).
  const key = `scan/${fresh()}/1.pdf`;
  const body = bytes(10_000, 4);
  await stored(key, body);
  const url = await store.downloadUrl(key, { fileName: 'a.pdf', contentType: PDF, expiresInMs: 60_000 });
  const suffix = await fetch(url, { headers: { range: 'bytes=-10' } });
  assert.equal(suffix.status, 206);
  assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), body.subarray(9990));
});

test('an upload of other bytes than signed is refused and stores nothing', async () => {
  const signed = bytes(4096, 1);
  // [what, the status it gets, how it is sent]
  const cases: [string, number, (g: { url: string; headers: Record<string, string> }) => Promise<number>][] = [
    [
      'other bytes of the same size',
      400,
      (g) =>
        fetch(g.url, { method: 'PUT', headers: g.headers, body: bytes(4096, 2) }).then(async (r) => {
          await r.text();
          return r.status;
        }),
    ],
    [
      'fewer bytes',
      400,
      (g) =>
        fetch(g.url, { method: 'PUT', headers: g.headers, body: signed.subarray(0, 4000) }).then(async (r) => {
          await r.text();
          return r.status;
        }),
    ],
    [
      'more bytes',
      400,
      (g) =>
        fetch(g.url, { method: 'PUT', headers: g.headers, body: Buffer.concat([signed, Buffer.from('x')]) }).then(
          async (r) => {
            await r.text();
            return r.status;
          },
        ),
    ],
    // Chunked, so no Content-Length to refuse it by: stopped once past the signed size.
    [
      'more bytes without a Content-Length',
      400,
      (g) =>
        request(g.url, { method: 'PUT', headers: g.headers, body: Readable.from([signed, bytes(2000)]) }).then(
          async (r) => {
            await r.body.text();
            return r.statusCode;
          },
        ),
    ],
    [
      'another Content-Type',
      403,
      (g) =>
        fetch(g.url, { method: 'PUT', headers: { 'content-type': 'text/html' }, body: signed }).then(async (r) => {
          await r.text();
          return r.status;
        }),
    ],
    [
      'another MD5 in the URL',
      403,
      (g) => {
        const u = new URL(g.url);
        u.searchParams.set('md5', md5(bytes(4096, 2)));
        return fetch(u, { method: 'PUT', headers: g.headers, body: bytes(4096, 2) }).then(async (r) => {
          await r.text();
          return r.status;
        });
      },
    ],
    [
      'another size in the URL',
      403,
      (g) => {
        const u = new URL(g.url);
        u.searchParams.set('size', '4000');
        return fetch(u, { method: 'PUT', headers: g.headers, body: signed.subarray(0, 4000) }).then(async (r) => {
          await r.text();
          return r.status;
        });
      },
    ],
  ];
  for (const [what, want, send] of cases) {
    const task = fresh();
    const key = `scan/${task}/1.pdf`;
    const g = await store.uploadUrl(key, {
      size: signed.length,
      md5: md5(signed),
      contentType: PDF,
      expiresInMs: 900_000,
    });
    assert.equal(await send(g), want, what);
    assert.equal(await store.stat(key), undefined, what);
    assert.deepEqual(filesUnder(`scan/${task}`), [], `${what}: files left behind`);
  }
});

test('an upload larger than BOXHUB_BLOB_MAX_BYTES is refused with 413 before its body', async () => {
  const body = bytes(MAX + 1);
  const key = `scan/${fresh()}/1.pdf`;
  const g = await store.uploadUrl(key, { size: body.length, md5: md5(body), contentType: PDF, expiresInMs: 60_000 });
  const res = await fetch(g.url, { method: 'PUT', headers: g.headers, body });
  assert.equal(res.status, 413);
  await res.text();
  assert.equal(await store.stat(key), undefined);
});

test('a different object under a key stored already is refused with 409 and leaves it unchanged', async () => {
  const key = `scan/${fresh()}/1.pdf`;
  const first = bytes(1000, 1);
  await stored(key, first);
  const second = bytes(1000, 2);
  const g = await store.uploadUrl(key, {
    size: second.length,
    md5: md5(second),
    contentType: PDF,
    expiresInMs: 60_000,
  });
  const res = await fetch(g.url, { method: 'PUT', headers: g.headers, body: second });
  assert.equal(res.status, 409);
  await res.text();
  assert.deepEqual(await store.stat(key), { size: first.length, md5: md5(first) });
});
