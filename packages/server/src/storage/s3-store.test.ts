// The S3 blob store against a real S3 server on loopback (s3rver, testing/s3rver.ts): what is
// S3's own. Presigned URLs and their metadata, the signed download type, the spool, S3 errors,
// deletePrefix across listing pages and DeleteObjects requests. What every store must do
// (uploads, downloads and ranges, expiry, put/get/stat, missing blobs, bad keys) is in
// blob-store-contract.test.ts, which runs on this store too. s3rver checks neither signatures
// nor Content-MD5 (sigv4.test.ts covers the signatures); what the store itself must do when
// other bytes arrive is tested here.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, test } from 'node:test';
import { systemClock } from '../clock.ts';
import { startS3, type TestS3 } from '../testing/s3rver.ts';
import { S3Error, type S3Target } from './s3-client.ts';
import { attachment } from './content-disposition.ts';
import { md5FromHead, S3BlobStore } from './s3-store.ts';

// A full collection on demand, to measure live memory (node:test gives no --expose-gc).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let s3: TestS3;
let spool: string;
const stores: S3BlobStore[] = [];

before(async () => {
  s3 = await startS3();
  spool = mkdtempSync(join(tmpdir(), 'boxhub-spool-'));
});
after(async () => {
  for (const s of stores) await s.close();
  await s3.close();
  rmSync(spool, { recursive: true, force: true });
});

function store(o: { listPageSize?: number; target?: Partial<S3Target> } = {}): S3BlobStore {
  const s = new S3BlobStore({
    target: { ...s3.target, ...o.target },
    clock: systemClock,
    spoolDir: spool,
    ...(o.listPageSize ? { listPageSize: o.listPageSize } : {}),
  });
  stores.push(s);
  return s;
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const bytes = (n: number, seed = 1) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));
let n = 0;
const fresh = () => `t${++n}${Date.now().toString(36)}`;

test('an upload through the presigned PUT goes to the bucket and carries the signed MD5 as metadata', async () => {
  const st = store();
  const key = `scan/${fresh()}/1.pdf`;
  const body = bytes(70_000);
  const g = await st.uploadUrl(key, {
    size: body.length,
    md5: md5(body),
    contentType: 'application/pdf',
    expiresInMs: 900_000,
  });
  assert.equal(g.method, 'PUT');
  assert.ok(g.url.startsWith(`${s3.endpoint}/${s3.bucket}/${key}?`), g.url);
  const res = await fetch(g.url, { method: 'PUT', headers: g.headers, body });
  assert.equal(res.status, 200, await res.text());
  const head = await fetch(
    await st.downloadUrl(key, { fileName: 'x.pdf', contentType: 'application/pdf', expiresInMs: 60_000 }),
    { method: 'HEAD' },
  );
  assert.equal(head.headers.get('x-amz-meta-md5'), md5(body));
});

test('after an upload of other bytes than signed, stat reports what is stored, not what was signed', async () => {
  // S3 itself refuses these bytes (400 BadDigest: Content-MD5 is signed); s3rver stores them,
  // which shows the second line of defence: stat takes the MD5 from the stored object's ETag,
  // not from the x-amz-meta-md5 the uploader sent, so the server's size-and-MD5 check fails.
  const st = store();
  const key = `scan/${fresh()}/1.pdf`;
  const signed = bytes(4096, 1);
  const other = bytes(4096, 2);
  const g = await st.uploadUrl(key, {
    size: signed.length,
    md5: md5(signed),
    contentType: 'application/pdf',
    expiresInMs: 900_000,
  });
  const res = await fetch(g.url, { method: 'PUT', headers: g.headers, body: other });
  await res.arrayBuffer();
  const stat = await st.stat(key);
  assert.deepEqual(stat, { size: other.length, md5: md5(other) });
  assert.notEqual(stat?.md5, md5(signed));
});

test('a presigned GET serves the type it was signed with, whatever type the object was stored with', async () => {
  const st = store();
  const key = `scan/${fresh()}/2.pdf`;
  const body = bytes(2000, 7);
  await st.put(key, body, { contentType: 'application/octet-stream' });
  const res = await fetch(
    await st.downloadUrl(key, { fileName: 'scan-2.pdf', contentType: 'application/pdf', expiresInMs: 3_600_000 }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/pdf');
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), body);
});

test('put streams a large file through the spool without holding it in memory', async () => {
  const st = store();
  const key = `print/${fresh()}/big.pdf`;
  const total = 64;
  const hash = createHash('md5');
  let sent = 0;
  // Fresh 1 MiB chunks, so a store that gathered them would hold 64 MiB alive.
  const source = new Readable({
    read() {
      if (sent === total) {
        this.push(null);
        return;
      }
      const c = Buffer.allocUnsafe(1 << 20).fill(sent++ & 0xff);
      hash.update(c);
      this.push(c);
    },
  });
  // Live memory, after a full collection, sampled while the put runs.
  const live = () => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const base = live();
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, live() - base);
  }, 25);
  let stored;
  try {
    stored = await st.put(key, source, { contentType: 'application/pdf' });
  } finally {
    clearInterval(timer);
  }
  const want = { size: total << 20, md5: hash.digest('hex') };
  assert.deepEqual(stored, want);
  assert.ok(peak < 16 << 20, `live memory grew by ${(peak / 2 ** 20).toFixed(1)} MiB while storing 64 MiB`);
  assert.deepEqual(await st.stat(key), want);
  assert.deepEqual(readdirSync(spool), [], 'the spool file is removed');
});

test('a stream that fails midway stores nothing and leaves no spool file', async () => {
  const st = store();
  const key = `print/${fresh()}/broken.pdf`;
  let i = 0;
  const source = new Readable({
    read() {
      if (i++ < 3) this.push(bytes(10_000));
      else this.destroy(new Error('disk gone'));
    },
  });
  await assert.rejects(st.put(key, source, { contentType: 'application/pdf' }), /disk gone/);
  assert.equal(await st.stat(key), undefined);
  assert.deepEqual(readdirSync(spool), []);
});

test('S3 errors carry the status and S3 code, never the secret', async () => {
  const st = store({ target: { bucket: 'no-such-bucket', secretAccessKey: 'SECRET-THAT-MUST-NOT-SHOW' } });
  const err = await st.put('a/b', Buffer.from('x'), { contentType: 'text/plain' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof S3Error);
  assert.equal(err.status, 404);
  assert.equal(err.code, 'NoSuchBucket');
  assert.match(err.message, /^S3 put a\/b: HTTP 404 NoSuchBucket/);
  assert.doesNotMatch(`${err.message} ${err.stack}`, /SECRET-THAT/);
});

test('deletePrefix deletes every key below the prefix across listing pages, and nothing beside it', async () => {
  const st = store({ listPageSize: 7 });
  const task = fresh();
  // (Not also an object named exactly scan/<task>: s3rver lists such a key after the ones below
  // it, out of S3's binary order, so a listing page that starts after those skips it. The
  // contract test deletes a key that is its own prefix, on both stores.)
  const keys = Array.from({ length: 40 }, (_, i) => `scan/${task}/${i + 1}.pdf`).concat(`scan/${task}/pages/1.jpg`);
  const keep = [`scan/${task}x/1.pdf`, `scan/${task}-2/1.pdf`, `print/${task}/1.pdf`];
  for (let i = 0; i < keys.length + keep.length; i += 8) {
    await Promise.all(
      [...keys, ...keep].slice(i, i + 8).map((k) => st.put(k, Buffer.from(k), { contentType: 'text/plain' })),
    );
  }
  await st.deletePrefix(`scan/${task}`);
  for (const k of keys) assert.equal(await st.stat(k), undefined, k);
  for (const k of keep) assert.deepEqual(await st.stat(k), { size: Buffer.byteLength(k), md5: md5(Buffer.from(k)) }, k);
  // Nothing left to delete is not an error.
  await st.deletePrefix(`scan/${task}`);
});

test('deletePrefix with more keys than one DeleteObjects request takes', async () => {
  const st = store();
  const task = fresh();
  const keys = Array.from({ length: 1010 }, (_, i) => `scan/${task}/${i}.jpg`);
  for (let i = 0; i < keys.length; i += 16) {
    await Promise.all(keys.slice(i, i + 16).map((k) => st.put(k, Buffer.from('p'), { contentType: 'image/jpeg' })));
  }
  const before = await st.client.listPage(`scan/${task}/`, undefined);
  assert.equal(before.keys.length, 1000);
  assert.ok(before.next, 'the listing has a second page');
  await st.deletePrefix(`scan/${task}`);
  assert.deepEqual(await st.client.listPage(`scan/${task}/`, undefined), { keys: [], next: undefined });
});

test('md5FromHead: the ETag where it is an MD5, otherwise the MD5 signed into the upload', () => {
  const m = '5eb63bbbe01eeed093cb22bb8f5acdc3';
  const other = '00000000000000000000000000000001';
  assert.equal(md5FromHead('k', { etag: `"${m.toUpperCase()}"` }), m);
  // Single-part and unencrypted: the ETag is the MD5 of the bytes, whatever the metadata says.
  assert.equal(md5FromHead('k', { etag: `"${m}"`, 'x-amz-meta-md5': other }), m);
  // Multipart ETags and SSE-KMS / SSE-C ETags are no MD5 (AWS "Checking object integrity").
  assert.equal(md5FromHead('k', { etag: `"${other}-3"`, 'x-amz-meta-md5': m }), m);
  assert.equal(
    md5FromHead('k', { etag: `"${other}"`, 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-meta-md5': m }),
    m,
  );
  assert.equal(
    md5FromHead('k', {
      etag: `"${other}"`,
      'x-amz-server-side-encryption-customer-algorithm': 'AES256',
      'x-amz-meta-md5': m,
    }),
    m,
  );
  // SSE-S3 (AES256) keeps MD5 ETags.
  assert.equal(md5FromHead('k', { etag: `"${m}"`, 'x-amz-server-side-encryption': 'AES256' }), m);
  assert.throws(() => md5FromHead('scan/x', { etag: `"${other}-2"` }), /cannot tell the MD5 of blob 'scan\/x'/);
});

test('attachment names: quoted as given when plain ASCII, with an RFC 8187 form otherwise', () => {
  assert.equal(attachment('scan-1.pdf'), 'attachment; filename="scan-1.pdf"');
  assert.equal(
    attachment('naïve "x".pdf'),
    'attachment; filename="na_ve _x_.pdf"; filename*=UTF-8\'\'na%C3%AFve%20%22x%22.pdf',
  );
  assert.equal(attachment('100%.pdf'), 'attachment; filename="100_.pdf"; filename*=UTF-8\'\'100%25.pdf');
});
