// Our SigV4 signatures against the two references that exist offline, since no S3 server that
// verifies signatures can run here (s3rver does not; docs/storage.md, "Signing"): AWS's published
// example signatures (S3 API reference, "Authenticating Requests: Using Query Parameters" and
// "Examples: Signature Calculations", credentials AKIAIOSFODNN7EXAMPLE), and URLs the AWS SDK's
// presigner computes for the same request, for the store's exact upload and download URLs.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { test } from 'node:test';
import { GetObjectCommand, PutObjectCommand, S3Client as SdkClient } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { S3BlobStore } from './s3-store.ts';
import { SigV4 } from './sigv4.ts';
import type { S3Target } from './s3-client.ts';

const AWS_EXAMPLE = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
};
const MAY_24_2013 = Date.UTC(2013, 4, 24, 0, 0, 0);

test("a presigned GET reproduces AWS's published example (examplebucket/test.txt, 86400 s)", async () => {
  const url = new URL(
    await new SigV4(AWS_EXAMPLE).presign('GET', new URL('https://examplebucket.s3.amazonaws.com/test.txt'), {
      at: MAY_24_2013,
      expiresSec: 86400,
    }),
  );
  const q = url.searchParams;
  assert.equal(q.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
  assert.equal(q.get('X-Amz-Credential'), 'AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request');
  assert.equal(q.get('X-Amz-Date'), '20130524T000000Z');
  assert.equal(q.get('X-Amz-Expires'), '86400');
  assert.equal(q.get('X-Amz-SignedHeaders'), 'host');
  assert.equal(q.get('X-Amz-Signature'), 'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404');
});

test("header-signed requests reproduce AWS's GET Object (Range) and PUT Object examples", async () => {
  const signer = new SigV4(AWS_EXAMPLE);
  const get = await signer.sign(
    'GET',
    new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
    {
      range: 'bytes=0-9',
      'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    },
    MAY_24_2013,
  );
  assert.equal(
    get.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
      'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  );
  const put = await signer.sign(
    'PUT',
    new URL('https://examplebucket.s3.amazonaws.com/test$file.text'),
    {
      date: 'Fri, 24 May 2013 00:00:00 GMT',
      'x-amz-storage-class': 'REDUCED_REDUNDANCY',
      'x-amz-content-sha256': '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072',
    },
    MAY_24_2013,
  );
  assert.match(
    put.authorization ?? '',
    /SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd$/,
  );
  // Unless told otherwise the payload is declared unsigned (bodies are streamed).
  const plain = await signer.sign('HEAD', new URL('https://examplebucket.s3.amazonaws.com/test.txt'), {}, MAY_24_2013);
  assert.equal(plain['x-amz-content-sha256'], 'UNSIGNED-PAYLOAD');
});

test('a presigned URL lasts 1 s to 7 days, as S3 allows', async () => {
  const signer = new SigV4(AWS_EXAMPLE);
  const u = new URL('https://examplebucket.s3.amazonaws.com/test.txt');
  await assert.rejects(signer.presign('GET', u, { at: MAY_24_2013, expiresSec: 604_801 }), /1 to 604800 seconds/);
  await assert.rejects(signer.presign('GET', u, { at: MAY_24_2013, expiresSec: 0 }), /1 to 604800 seconds/);
  assert.match(await signer.presign('GET', u, { at: MAY_24_2013, expiresSec: 604_800 }), /X-Amz-Expires=604800/);
});

// The SDK configured as docs/storage.md, "Signing", says a user of the SDK must (WHEN_REQUIRED checksums).
function sdk(t: S3Target): SdkClient {
  // The SDK is a pinned reference for this test only; its notice that later versions need
  // Node 22 concerns nothing we ship.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  return new SdkClient({
    region: t.region,
    credentials: { accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey },
    forcePathStyle: t.pathStyle,
    ...(t.pathStyle ? { endpoint: t.endpoint } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

const AUTH_PARAMS = [
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
];

/** The SDK's URL minus its signature, signed again by our signer: the two signatures must agree. */
async function resign(
  store: S3BlobStore,
  sdkUrl: string,
  method: 'GET' | 'PUT',
  headers: Record<string, string>,
  at: number,
): Promise<URL> {
  const unsigned = new URL(sdkUrl);
  for (const p of AUTH_PARAMS) unsigned.searchParams.delete(p);
  const expiresSec = Number(new URL(sdkUrl).searchParams.get('X-Amz-Expires'));
  return new URL(await store.client.presign(method, unsigned, { headers, at, expiresSec }));
}

for (const pathStyle of [true, false]) {
  test(`the store's upload and download URLs are signed as the AWS SDK signs them (${pathStyle ? 'path-style' : 'virtual-hosted'})`, async () => {
    const at = Date.UTC(2026, 10, 22, 12, 0, 0);
    const target: S3Target = {
      endpoint: pathStyle ? 'http://127.0.0.1:9000' : 'https://s3.eu-west-1.amazonaws.com',
      region: 'eu-west-1',
      bucket: 'boxhub',
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalr/EXAMPLE+KEY',
      pathStyle,
    };
    const store = new S3BlobStore({
      target,
      clock: { now: () => at, setTimer: () => ({ cancel() {} }) },
      spoolDir: '/nonexistent',
    });
    const client = sdk(target);
    try {
      const md5 = '5eb63bbbe01eeed093cb22bb8f5acdc3';
      const grant = await store.uploadUrl('scan/t/1.pdf', {
        size: 11,
        md5,
        contentType: 'application/pdf',
        expiresInMs: 900_000,
      });
      assert.deepEqual(grant.headers, {
        'content-md5': 'XrY7u+Ae7tCTyyK7j1rNww==',
        'content-type': 'application/pdf',
        'x-amz-meta-md5': md5,
      });
      assert.equal(grant.expiresAt, at + 900_000);
      const sdkPut = await getSignedUrl(
        client,
        new PutObjectCommand({
          Bucket: 'boxhub',
          Key: 'scan/t/1.pdf',
          ContentLength: 11,
          ContentMD5: grant.headers['content-md5'],
          ContentType: 'application/pdf',
          Metadata: { md5 },
        }),
        {
          expiresIn: 900,
          signingDate: new Date(at),
          signableHeaders: new Set(['content-length', 'content-md5', 'content-type']),
          unhoistableHeaders: new Set(['x-amz-meta-md5']),
        },
      );
      const ours = new URL(grant.url);
      const theirs = new URL(sdkPut);
      assert.equal(`${ours.origin}${ours.pathname}`, `${theirs.origin}${theirs.pathname}`);
      // The SignedHeaders: Content-Length and Content-MD5 pin the bytes, Content-Type the type.
      assert.equal(
        ours.searchParams.get('X-Amz-SignedHeaders'),
        'content-length;content-md5;content-type;host;x-amz-meta-md5',
      );
      assert.equal(theirs.searchParams.get('X-Amz-SignedHeaders'), ours.searchParams.get('X-Amz-SignedHeaders'));
      // Besides the auth parameters the SDK adds exactly x-id and X-Amz-Content-Sha256 (which
      // S3 takes as read for presigned URLs): signed with those, ours is the SDK's signature.
      const extra = [...theirs.searchParams.keys()]
        .filter((k) => !AUTH_PARAMS.includes(k) && !ours.searchParams.has(k))
        .sort();
      assert.deepEqual(extra, ['X-Amz-Content-Sha256', 'x-id']);
      const again = await resign(store, sdkPut, 'PUT', { ...grant.headers, 'content-length': '11' }, at);
      assert.equal(again.searchParams.get('X-Amz-Signature'), theirs.searchParams.get('X-Amz-Signature'));

      const dl = new URL(
        await store.downloadUrl('scan/t/1.pdf', {
          fileName: 'scan-1.pdf',
          contentType: 'application/pdf',
          expiresInMs: 3_600_000,
        }),
      );
      const sdkGet = new URL(
        await getSignedUrl(
          client,
          new GetObjectCommand({
            Bucket: 'boxhub',
            Key: 'scan/t/1.pdf',
            ResponseContentDisposition: 'attachment; filename="scan-1.pdf"',
            ResponseContentType: 'application/pdf',
            ResponseCacheControl: 'private, no-store',
          }),
          { expiresIn: 3600, signingDate: new Date(at) },
        ),
      );
      for (const p of [
        'response-content-disposition',
        'response-content-type',
        'response-cache-control',
        'X-Amz-Credential',
        'X-Amz-Date',
        'X-Amz-Expires',
        'X-Amz-SignedHeaders',
      ]) {
        assert.equal(dl.searchParams.get(p), sdkGet.searchParams.get(p), p);
      }
      const againGet = await resign(store, sdkGet.toString(), 'GET', {}, at);
      assert.equal(againGet.searchParams.get('X-Amz-Signature'), sdkGet.searchParams.get('X-Amz-Signature'));
      // And a wrong secret gives another signature: the comparison can fail.
      const wrong = new S3BlobStore({
        target: { ...target, secretAccessKey: 'other' },
        clock: { now: () => at, setTimer: () => ({ cancel() {} }) },
        spoolDir: '/nonexistent',
      });
      assert.notEqual(
        (await resign(wrong, sdkGet.toString(), 'GET', {}, at)).searchParams.get('X-Amz-Signature'),
        sdkGet.searchParams.get('X-Amz-Signature'),
      );
      await wrong.close();
    } finally {
      client.destroy();
      await store.close();
    }
  });
}

test('the signer never shows its secret', async () => {
  const signer = new SigV4({ ...AWS_EXAMPLE, secretAccessKey: 'TOPSECRET-KEY' });
  // After signing, when its cache of signing keys (keyed by the secret) is filled.
  await signer.presign('GET', new URL('https://examplebucket.s3.amazonaws.com/test.txt'), {
    at: MAY_24_2013,
    expiresSec: 60,
  });
  assert.doesNotMatch(JSON.stringify(signer), /TOPSECRET/);
  assert.doesNotMatch(inspect(signer, { depth: 5, showHidden: true }), /TOPSECRET/);
  const store = new S3BlobStore({
    target: {
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      bucket: 'b-1',
      accessKeyId: 'AK',
      secretAccessKey: 'TOPSECRET-KEY',
      pathStyle: true,
    },
    clock: { now: () => 0, setTimer: () => ({ cancel() {} }) },
    spoolDir: '/x',
  });
  await store.downloadUrl('a/b', { fileName: 'b.pdf', contentType: 'application/pdf', expiresInMs: 60_000 });
  assert.doesNotMatch(inspect(store, { depth: 8, showHidden: true }), /TOPSECRET/);
  await store.close();
});
