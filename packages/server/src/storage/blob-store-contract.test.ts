// One contract, both blob stores: the same cases run against a real server storing blobs as
// local files (served by its signed /blobs routes) and a real server storing them in S3
// (s3rver on loopback), so the two cannot drift apart. Each store is the server's own, selected
// by its configuration, on whichever engines the run uses (testing/harness.ts).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { offsetClock } from '../clock.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { startS3, type TestS3 } from '../testing/s3rver.ts';
import type { BlobStore, UploadGrant } from './blob-store.ts';
import { LocalBlobStore } from './local-store.ts';
import { S3BlobStore } from './s3-store.ts';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const bytes = (n: number, seed = 1) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));
const PDF = 'application/pdf';
let n = 0;
const fresh = () => `t${++n}${Date.now().toString(36)}`;

async function read(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function upload(g: UploadGrant, body: Buffer): Promise<Response> {
  return fetch(g.url, { method: g.method, headers: g.headers, body });
}

const subjects = [
  { name: 'local files', s3: false, type: LocalBlobStore },
  { name: 'S3', s3: true, type: S3BlobStore },
] as const;

for (const subject of subjects) {
  describe(`blob store contract: ${subject.name}`, () => {
    let s3: TestS3 | undefined;
    let server: TestServer;
    let store: BlobStore;
    // The server's clock runs this far from the real one: moved back to sign links that are
    // expired by the time they are used, for both stores (S3 checks expiry on its own clock).
    let offset = 0;
    const signedLongAgo = async <T>(sign: () => Promise<T>): Promise<T> => {
      offset = -2 * 3_600_000;
      try {
        return await sign();
      } finally {
        offset = 0;
      }
    };

    before(async () => {
      if (subject.s3) s3 = await startS3();
      server = await startTestServer({ clock: offsetClock(() => offset), env: s3?.env ?? {} });
      store = server.server.blobs;
    });
    after(async () => {
      await server?.close();
      await s3?.close();
    });

    test('the server uses the configured store, and serves /blobs only for local files', async () => {
      assert.ok(store instanceof subject.type, `expected ${subject.type.name}, got ${store.constructor.name}`);
      // Unsigned: the local routes refuse it (403); with S3 there is no such route, and it is a
      // plain 404 (never the API's envelope in a 200: docs/storage.md).
      const res = await fetch(`${server.url}/blobs/scan/x/1.pdf`);
      if (subject.s3) {
        assert.equal(res.status, 404);
        assert.equal(await res.text(), 'not found\n');
      } else {
        assert.equal(res.status, 403);
        await res.arrayBuffer();
      }
    });

    test('an upload through the grant stores its bytes; the download link serves them as a named attachment', async () => {
      const key = `scan/${fresh()}/1.pdf`;
      const body = bytes(50_000);
      const g = await store.uploadUrl(key, {
        size: body.length,
        md5: md5(body),
        contentType: PDF,
        expiresInMs: 900_000,
      });
      assert.equal(g.method, 'PUT');
      assert.equal(g.headers['content-type'], PDF);
      assert.ok(Math.abs(g.expiresAt - (Date.now() + 900_000)) < 2000, 'expiresAt is when the grant ends');
      const put = await upload(g, body);
      assert.equal(put.status, 200, await put.text());
      assert.deepEqual(await store.stat(key), { size: body.length, md5: md5(body) });
      assert.deepEqual(await read(await store.get(key)), body);
      assert.deepEqual(await store.getBytes(key), body);

      const url = await store.downloadUrl(key, { fileName: 'scan-1.pdf', contentType: PDF, expiresInMs: 3_600_000 });
      const whole = await fetch(url);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('content-type'), PDF);
      assert.equal(whole.headers.get('content-disposition'), 'attachment; filename="scan-1.pdf"');
      assert.equal(whole.headers.get('cache-control'), 'private, no-store');
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.deepEqual(Buffer.from(await whole.arrayBuffer()), body);
    });

    // (Suffix ranges, `bytes=-10`, are in local-routes.test.ts alone: s3rver reads one as `0-10`.)
    test('range requests on a download link: a slice, an open end; one past the end answers 416', async () => {
      const key = `scan/${fresh()}/1.pdf`;
      const body = bytes(200_000, 7);
      await store.put(key, body, { contentType: PDF });
      const url = await store.downloadUrl(key, { fileName: 'a.pdf', contentType: PDF, expiresInMs: 60_000 });
      const part = await fetch(url, { headers: { range: 'bytes=1000-1999' } });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), `bytes 1000-1999/${body.length}`);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), body.subarray(1000, 2000));
      const tail = await fetch(url, { headers: { range: 'bytes=199990-' } });
      assert.equal(tail.status, 206);
      assert.deepEqual(Buffer.from(await tail.arrayBuffer()), body.subarray(199_990));
      const beyond = await fetch(url, { headers: { range: 'bytes=300000-400000' } });
      assert.equal(beyond.status, 416);
      await beyond.arrayBuffer();
    });

    test('a download name that is not plain ASCII comes as an RFC 8187 filename* with an ASCII fallback', async () => {
      const key = `scan/${fresh()}/1.pdf`;
      await store.put(key, Buffer.from('%PDF-1.7'), { contentType: PDF });
      const res = await fetch(
        await store.downloadUrl(key, { fileName: 'Über "scan".pdf', contentType: PDF, expiresInMs: 60_000 }),
      );
      assert.equal(res.status, 200);
      assert.equal(
        res.headers.get('content-disposition'),
        'attachment; filename="_ber _scan_.pdf"; filename*=UTF-8\'\'%C3%9Cber%20%22scan%22.pdf',
      );
      await res.arrayBuffer();
    });

    test('after an upload of other bytes or another size than signed, stat never reports the signed size and MD5', async () => {
      // The server records an item only when stat matches what the box reports (scan service):
      // the local routes refuse such bytes outright; S3 refuses them with 400 BadDigest
      // (s3rver stores them, and stat then shows their own MD5).
      for (const other of [bytes(4096, 2), bytes(4000, 1), bytes(4097, 1)]) {
        const key = `scan/${fresh()}/1.pdf`;
        const signed = bytes(4096, 1);
        const g = await store.uploadUrl(key, {
          size: signed.length,
          md5: md5(signed),
          contentType: PDF,
          expiresInMs: 900_000,
        });
        const res = await upload(g, other).catch((e: unknown) => e as Error);
        if (res instanceof Response) await res.arrayBuffer();
        const stat = await store.stat(key);
        assert.ok(
          !(stat?.size === signed.length && stat.md5 === md5(signed)),
          `stat after ${other.length} other bytes: ${JSON.stringify(stat)}`,
        );
      }
    });

    test('a retried upload of the same bytes through a fresh grant succeeds and changes nothing', async () => {
      const key = `scan/${fresh()}/1.pdf`;
      const body = bytes(3000, 5);
      const first = await store.uploadUrl(key, {
        size: body.length,
        md5: md5(body),
        contentType: PDF,
        expiresInMs: 900_000,
      });
      const res = await upload(first, body);
      assert.equal(res.status, 200, await res.text());
      // The retry the way the box's uploader sends (agent transfer/upload.ts): undici, the
      // grant's headers plus its own Content-Length, the body streamed.
      const again = await store.uploadUrl(key, {
        size: body.length,
        md5: md5(body),
        contentType: PDF,
        expiresInMs: 900_000,
      });
      const r2 = await request(again.url, {
        method: 'PUT',
        headers: { ...again.headers, 'content-length': String(body.length) },
        body: Readable.from([body.subarray(0, 1000), body.subarray(1000)]),
      });
      assert.equal(r2.statusCode, 200, await r2.body.text());
      assert.deepEqual(await store.stat(key), { size: body.length, md5: md5(body) });
    });

    test('expired upload and download links are refused with 403; nothing is stored', async () => {
      const key = `scan/${fresh()}/1.pdf`;
      const body = bytes(2000);
      const g = await signedLongAgo(() =>
        store.uploadUrl(key, { size: body.length, md5: md5(body), contentType: PDF, expiresInMs: 3_600_000 }),
      );
      assert.ok(g.expiresAt < Date.now());
      const put = await upload(g, body);
      assert.equal(put.status, 403);
      assert.match(await put.text(), /expired/);
      assert.equal(await store.stat(key), undefined);
      await store.put(key, body, { contentType: PDF });
      const stale = await fetch(
        await signedLongAgo(() =>
          store.downloadUrl(key, { fileName: 'a.pdf', contentType: PDF, expiresInMs: 3_600_000 }),
        ),
      );
      assert.equal(stale.status, 403);
      assert.match(await stale.text(), /expired/);
      const fine = await fetch(
        await store.downloadUrl(key, { fileName: 'a.pdf', contentType: PDF, expiresInMs: 60_000 }),
      );
      assert.equal(fine.status, 200);
      assert.deepEqual(Buffer.from(await fine.arrayBuffer()), body);
    });

    test('put takes a buffer or a stream and reports size and MD5; stat and get agree', async () => {
      const a = `print/${fresh()}/a.pdf`;
      const b = `print/${fresh()}/b.pdf`;
      const bufferBody = bytes(10_000, 9);
      const parts = [bytes(70_000, 1), bytes(1, 2), bytes(130_000, 3)];
      const streamBody = Buffer.concat(parts);
      assert.deepEqual(await store.put(a, bufferBody, { contentType: PDF }), {
        size: bufferBody.length,
        md5: md5(bufferBody),
      });
      assert.deepEqual(await store.put(b, Readable.from(parts), { contentType: PDF }), {
        size: streamBody.length,
        md5: md5(streamBody),
      });
      assert.deepEqual(await store.stat(b), { size: streamBody.length, md5: md5(streamBody) });
      assert.deepEqual(await read(await store.get(b)), streamBody);
      const empty = `print/${fresh()}/empty.pdf`;
      assert.deepEqual(await store.put(empty, Buffer.alloc(0), { contentType: PDF }), {
        size: 0,
        md5: 'd41d8cd98f00b204e9800998ecf8427e',
      });
      assert.deepEqual(await store.stat(empty), { size: 0, md5: 'd41d8cd98f00b204e9800998ecf8427e' });
      // Served with the type it was stored with.
      const res = await fetch(await store.downloadUrl(a, { fileName: 'a.pdf', contentType: PDF, expiresInMs: 60_000 }));
      assert.equal(res.headers.get('content-type'), PDF);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), bufferBody);
    });

    test('a missing blob: stat answers undefined, get and getBytes fail clearly, its download link answers 404', async () => {
      const key = `scan/${fresh()}/none.pdf`;
      assert.equal(await store.stat(key), undefined);
      await assert.rejects(store.get(key), /no blob 'scan\/.*\/none\.pdf'/);
      await assert.rejects(store.getBytes(key), /no blob 'scan\/.*\/none\.pdf'/);
      const res = await fetch(
        await store.downloadUrl(key, { fileName: 'none.pdf', contentType: PDF, expiresInMs: 60_000 }),
      );
      assert.equal(res.status, 404);
      await res.arrayBuffer();
    });

    test("deletePrefix deletes a task's files and nothing else; a missing prefix is no error", async () => {
      const task = fresh();
      const mine = [`scan/${task}/1.pdf`, `scan/${task}/2.pdf`, `scan/${task}/pages/1.jpg`];
      const others = [`scan/${task}x/1.pdf`, `print/${task}/1.pdf`, `scan/${task}-b`];
      for (const k of [...mine, ...others]) await store.put(k, Buffer.from(k), { contentType: 'text/plain' });
      await store.deletePrefix(`scan/${task}`);
      for (const k of mine) assert.equal(await store.stat(k), undefined, k);
      for (const k of others)
        assert.deepEqual(await store.stat(k), { size: Buffer.byteLength(k), md5: md5(Buffer.from(k)) }, k);
      // A blob whose key is the prefix itself.
      await store.deletePrefix(`scan/${task}-b`);
      assert.equal(await store.stat(`scan/${task}-b`), undefined);
      await store.deletePrefix(`scan/${task}`);
      await store.deletePrefix(`scan/${fresh()}`);
    });

    test('keys outside the plain form are refused by every operation', async () => {
      for (const bad of ['../etc/passwd', 'a//b', '/a', 'a/', 'a b', 'a/../b', '', '.hidden']) {
        await assert.rejects(store.stat(bad), /bad blob key/, bad);
        await assert.rejects(store.get(bad), /bad blob key/, bad);
        await assert.rejects(store.put(bad, Buffer.from('x'), { contentType: PDF }), /bad blob key/, bad);
        await assert.rejects(
          store.uploadUrl(bad, { size: 1, md5: md5(Buffer.from('x')), contentType: PDF, expiresInMs: 60_000 }),
          /bad blob key/,
          bad,
        );
        await assert.rejects(
          store.downloadUrl(bad, { fileName: 'x', contentType: PDF, expiresInMs: 60_000 }),
          /bad blob key/,
          bad,
        );
        await assert.rejects(store.deletePrefix(bad), /bad blob key/, bad);
      }
    });
  });
}
