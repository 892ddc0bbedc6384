// The BOXHUB_S3_* settings (docs/configuration.md): S3 is chosen by setting the bucket, every
// value is checked at start with a message naming the variable, and the secret key never shows
// when the configuration is printed or logged.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.ts';

const keys = { BOXHUB_S3_ACCESS_KEY: 'AKIDEXAMPLE', BOXHUB_S3_SECRET_KEY: 'wJalr/SECRET+KEY' };

test('without BOXHUB_S3_BUCKET blobs stay local', () => {
  assert.equal(loadConfig({}).s3, undefined);
  assert.equal(loadConfig({ BOXHUB_S3_BUCKET: '' }).s3, undefined);
});

test('AWS by default: region us-east-1, its regional endpoint, virtual-hosted buckets', () => {
  const c = loadConfig({ BOXHUB_S3_BUCKET: 'boxhub-scans', ...keys }).s3;
  assert.deepEqual(
    { ...c },
    {
      endpoint: 'https://s3.us-east-1.amazonaws.com',
      region: 'us-east-1',
      bucket: 'boxhub-scans',
      accessKeyId: 'AKIDEXAMPLE',
      pathStyle: false,
    },
  );
  assert.equal(c?.secretAccessKey, 'wJalr/SECRET+KEY');
  assert.equal(
    loadConfig({ BOXHUB_S3_BUCKET: 'b.x-1', BOXHUB_S3_REGION: 'eu-central-1', ...keys }).s3?.endpoint,
    'https://s3.eu-central-1.amazonaws.com',
  );
});

test('an endpoint of its own: path-style unless told otherwise, reduced to its origin', () => {
  const c = loadConfig({ BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ENDPOINT: 'http://minio.local:9000/', ...keys }).s3;
  assert.equal(c?.endpoint, 'http://minio.local:9000');
  assert.equal(c?.pathStyle, true);
  assert.equal(
    loadConfig({
      BOXHUB_S3_BUCKET: 'boxhub',
      BOXHUB_S3_ENDPOINT: 'https://s3.example.com',
      BOXHUB_S3_PATH_STYLE: '0',
      ...keys,
    }).s3?.pathStyle,
    false,
  );
  assert.equal(loadConfig({ BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_PATH_STYLE: '1', ...keys }).s3?.pathStyle, true);
  assert.equal(
    loadConfig({
      BOXHUB_S3_BUCKET: 'boxhub',
      BOXHUB_S3_REGION: 'auto',
      BOXHUB_S3_ENDPOINT: 'https://acc.r2.cloudflarestorage.com',
      ...keys,
    }).s3?.region,
    'auto',
  );
});

test('every bad value stops the start with a message naming the variable', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ BOXHUB_S3_ENDPOINT: 'http://127.0.0.1:9000' }, /BOXHUB_S3_ENDPOINT is set but BOXHUB_S3_BUCKET is not/],
    [{ BOXHUB_S3_SECRET_KEY: 'x' }, /BOXHUB_S3_SECRET_KEY is set but BOXHUB_S3_BUCKET is not/],
    [{ BOXHUB_S3_BUCKET: 'Boxhub', ...keys }, /BOXHUB_S3_BUCKET must be a bucket name/],
    [{ BOXHUB_S3_BUCKET: 'ab', ...keys }, /BOXHUB_S3_BUCKET must be a bucket name/],
    [{ BOXHUB_S3_BUCKET: 'a..b', ...keys }, /BOXHUB_S3_BUCKET must be a bucket name/],
    [{ BOXHUB_S3_BUCKET: '192.168.1.10', ...keys }, /BOXHUB_S3_BUCKET must be a bucket name/],
    [{ BOXHUB_S3_BUCKET: 'boxhub-', ...keys }, /BOXHUB_S3_BUCKET must be a bucket name/],
    [{ BOXHUB_S3_BUCKET: 'b_x', ...keys }, /BOXHUB_S3_BUCKET must be a bucket name/],
    [{ BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_REGION: 'EU West', ...keys }, /BOXHUB_S3_REGION must be a region name/],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ENDPOINT: 'ftp://h', ...keys },
      /BOXHUB_S3_ENDPOINT must use http: or https:/,
    ],
    [{ BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ENDPOINT: 'not a url', ...keys }, /BOXHUB_S3_ENDPOINT is not a URL/],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ENDPOINT: 'https://h/s3', ...keys },
      /BOXHUB_S3_ENDPOINT must be a scheme, host and port only/,
    ],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ENDPOINT: 'https://h?x=1', ...keys },
      /BOXHUB_S3_ENDPOINT must be a scheme, host and port only/,
    ],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_SECRET_KEY: 's' },
      /BOXHUB_S3_ACCESS_KEY must be set with BOXHUB_S3_BUCKET/,
    ],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ACCESS_KEY: 'a/b', BOXHUB_S3_SECRET_KEY: 's' },
      /BOXHUB_S3_ACCESS_KEY must be/,
    ],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ACCESS_KEY: 'a' },
      /BOXHUB_S3_SECRET_KEY must be set with BOXHUB_S3_BUCKET/,
    ],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ACCESS_KEY: 'a', BOXHUB_S3_SECRET_KEY: 'has space' },
      /BOXHUB_S3_SECRET_KEY must be/,
    ],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_PATH_STYLE: 'yes', ...keys },
      /BOXHUB_S3_PATH_STYLE must be 1 or 0, got 'yes'/,
    ],
    [
      { BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_BLOB_MAX_BYTES: String(6 * 1024 ** 3), ...keys },
      /BOXHUB_BLOB_MAX_BYTES can be at most 5368709120 \(5 GiB, S3's largest single PUT\)/,
    ],
  ];
  for (const [env, message] of bad)
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      JSON.stringify(env),
    );
  // The same size is fine for local files.
  assert.equal(loadConfig({ BOXHUB_BLOB_MAX_BYTES: String(6 * 1024 ** 3) }).blobMaxBytes, 6 * 1024 ** 3);
});

test('credentials never show: not in the endpoint error, not when the configuration is printed', () => {
  assert.throws(
    () => loadConfig({ BOXHUB_S3_BUCKET: 'boxhub', BOXHUB_S3_ENDPOINT: 'https://AKID:TOPSECRET@h', ...keys }),
    (e: unknown) =>
      e instanceof ConfigError && /must not carry credentials/.test(e.message) && !e.message.includes('TOPSECRET'),
  );
  const c = loadConfig({ BOXHUB_S3_BUCKET: 'boxhub', ...keys, BOXHUB_S3_SECRET_KEY: 'TOPSECRET-42' });
  assert.doesNotMatch(JSON.stringify(c), /TOPSECRET/);
  assert.doesNotMatch(inspect(c, { depth: 10 }), /TOPSECRET/);
  assert.equal(c.s3?.secretAccessKey, 'TOPSECRET-42');
});
