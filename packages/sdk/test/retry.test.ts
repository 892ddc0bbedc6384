// Retries for network failures only: real refused connections, real resets (a TCP proxy that
// answers connections with RST), real silent and non-boxhub HTTP servers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startTestServer } from '@boxhub/server/testing/harness.ts';
import { startReceiver } from '@boxhub/server/testing/receiver.ts';
import { startTcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';
import { Boxhub, BoxhubError, type RetryEvent } from '@boxhub/sdk';
import { backoffDelay, classifyNetworkError, RETRY_DEFAULTS } from '../src/retry.ts';

// Short backoff: these tests are about which attempts are made, not how long they wait.
const retry = { retries: 2, baseDelayMs: 5, maxDelayMs: 20 };

/** A loopback port with nothing listening: connections to it are refused. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test('a refused connection is retried for every method (nothing was sent), then reported', async () => {
  const port = await closedPort();
  const retries: RetryEvent[] = [];
  const boxhub = new Boxhub({
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey: 'k',
    retry,
    onRetry: (e) => retries.push(e),
  });
  const e = await boxhub.control.buzz({ client_uuid: 'x', buzz: [100] }).catch((x: unknown) => x);
  assert.ok(e instanceof BoxhubError);
  assert.deepEqual([e.kind, e.code, e.status], ['network', null, undefined]);
  assert.match(e.msg, /ECONNREFUSED.*attempt 3/);
  assert.deepEqual(
    retries.map((r) => [r.method, r.attempt, r.failure]),
    [
      ['POST', 1, 'not-sent'],
      ['POST', 2, 'not-sent'],
    ],
  );
});

test('a connection reset after connecting: GET is retried and succeeds, POST is reported at once', async () => {
  const server = await startTestServer();
  const proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port));
  try {
    const app = await server.createApp();
    const reg = await server.registerDevice();
    const retries: RetryEvent[] = [];
    const boxhub = new Boxhub({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      apiKey: app.api_key,
      retry,
      // The network comes back while the SDK waits to retry.
      onRetry: (e) => {
        retries.push(e);
        proxy.down(false);
      },
    });
    proxy.down(true);
    const { uuid } = await boxhub.devices.getUuid({ code: reg.code });
    assert.equal(uuid, reg.uuid);
    assert.deepEqual(
      retries.map((r) => [r.method, r.attempt, r.failure]),
      [['GET', 1, 'maybe-sent']],
    );
    assert.equal(proxy.accepted, 2);

    retries.length = 0;
    proxy.down(true);
    const before = proxy.accepted;
    const e = await boxhub.devices.bind({ uuid: reg.uuid, name: 'Room 4' }).catch((x: unknown) => x);
    assert.ok(e instanceof BoxhubError);
    assert.equal(e.kind, 'network');
    assert.match(e.msg, /not retried: the request may have reached the service/);
    assert.deepEqual(retries, []);
    assert.equal(proxy.accepted - before, 1);
  } finally {
    await proxy.close();
    await server.close();
  }
});

test('an answer is never retried, even one that is not an envelope', async () => {
  const receiver = await startReceiver();
  try {
    const retries: RetryEvent[] = [];
    const boxhub = new Boxhub({ baseUrl: receiver.url, apiKey: 'k', retry, onRetry: (e) => retries.push(e) });

    receiver.answer({ status: 502, body: '<html>Bad Gateway</html>' });
    const bad = await boxhub.devices.list({ page: 1 }).catch((x: unknown) => x);
    assert.ok(bad instanceof BoxhubError);
    assert.deepEqual([bad.kind, bad.code, bad.status], ['http', null, 502]);
    assert.match(bad.msg, /HTTP 502.*Bad Gateway/);

    receiver.answer({ status: 200, body: 'hello' });
    const text = await boxhub.devices.list({ page: 1 }).catch((x: unknown) => x);
    assert.ok(text instanceof BoxhubError);
    assert.deepEqual([text.kind, text.status], ['http', 200]);
    assert.match(text.msg, /not JSON: hello/);

    receiver.answer({ status: 200, body: '{"ok":true}', headers: { 'content-type': 'application/json' } });
    const json = await boxhub.devices.list({ page: 1 }).catch((x: unknown) => x);
    assert.ok(json instanceof BoxhubError);
    assert.match((json as BoxhubError).msg, /not a \{code, msg, data\} envelope/);

    assert.equal(receiver.received.length, 3);
    assert.deepEqual(retries, []);
    // What the SDK sends: the key as a bearer token, a User-Agent naming it.
    assert.equal(receiver.received[0]!.headers.authorization, 'Bearer k');
    assert.match(String(receiver.received[0]!.headers['user-agent']), /^boxhub-sdk\/\d+\.\d+\.\d+ node\//);
    // The receiver's URL has a path: a base URL's path prefix is kept.
    assert.equal(receiver.received[0]!.path, `${new URL(receiver.url).pathname}/api/client/list?page=1`);
  } finally {
    await receiver.close();
  }
});

test('no answer in time: GET is retried, POST is not (it may have arrived)', async () => {
  const receiver = await startReceiver();
  try {
    receiver.answer('silent');
    // Retries are counted by the SDK's own hook: on a loaded machine a request can time out
    // before the receiver has read all of it, so the receiver's count would prove nothing.
    const retried: string[] = [];
    const boxhub = new Boxhub({
      baseUrl: receiver.url,
      apiKey: 'k',
      retry,
      timeoutMs: 200,
      onRetry: (e) => retried.push(`${e.attempt}`),
    });
    const get = await boxhub.devices.list({ page: 1 }).catch((x: unknown) => x);
    assert.ok(get instanceof BoxhubError);
    assert.match(get.msg, /no answer within 200 ms \(attempt 3\)/);
    assert.equal(retried.length, 2, 'two retries of the GET');

    const post = await boxhub.control.reboot({ client_uuid: 'x' }).catch((x: unknown) => x);
    assert.ok(post instanceof BoxhubError);
    assert.match(post.msg, /no answer within 200 ms \(attempt 1; not retried/);
    assert.equal(retried.length, 2, 'the POST was not retried');
  } finally {
    await receiver.close();
  }
});

test("a call cancelled by its signal stops retrying and rejects with the signal's reason", async () => {
  const port = await closedPort();
  const controller = new AbortController();
  const attempts: number[] = [];
  const boxhub = new Boxhub({
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey: 'k',
    retry: { retries: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 },
    onRetry: (e) => {
      attempts.push(e.attempt);
      controller.abort(new Error('shutting down'));
    },
  });
  const e = await boxhub.devices.list({ page: 1 }, { signal: controller.signal }).catch((x: unknown) => x);
  assert.equal((e as Error).message, 'shutting down');
  assert.deepEqual(attempts, [1]);
});

test('backoff doubles up to the cap, with half of each delay random', () => {
  const o = { ...RETRY_DEFAULTS, baseDelayMs: 100, maxDelayMs: 1000 };
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((n) => backoffDelay(n, o, () => 0)),
    [50, 100, 200, 400, 500],
  );
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((n) => backoffDelay(n, o, () => 1)),
    [100, 200, 400, 800, 1000],
  );
});

test('network errors are told apart by their socket error codes', () => {
  const failed = (cause: unknown) => new TypeError('fetch failed', { cause });
  const sock = (code: string) => Object.assign(new Error(code), { code });
  assert.equal(classifyNetworkError(failed(sock('ECONNREFUSED'))), 'not-sent');
  assert.equal(classifyNetworkError(failed(sock('ENOTFOUND'))), 'not-sent');
  assert.equal(
    classifyNetworkError(failed(new AggregateError([sock('ECONNREFUSED'), sock('EHOSTUNREACH')]))),
    'not-sent',
  );
  assert.equal(
    classifyNetworkError(failed(new AggregateError([sock('ECONNREFUSED'), sock('ECONNRESET')]))),
    'maybe-sent',
  );
  assert.equal(classifyNetworkError(failed(sock('ECONNRESET'))), 'maybe-sent');
  assert.equal(classifyNetworkError(failed(sock('UND_ERR_SOCKET'))), 'maybe-sent');
  assert.equal(classifyNetworkError(new Error('something else')), 'maybe-sent');
});
