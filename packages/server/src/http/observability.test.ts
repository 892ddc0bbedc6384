// Logging by outcome, /healthz without internals, and /metrics behind a token or on a
// listener of its own (docs/configuration.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ApiClient, startTestServer } from '../testing/harness.ts';

function memoryLogger() {
  const lines: { level: number; msg: string; code?: number; err?: unknown }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as (typeof lines)[number]);
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}
const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

test('client errors are logged at info or warn, server faults at error', async () => {
  const { logger, lines } = memoryLogger();
  const t = await startTestServer({ logger });
  try {
    const { api } = await t.createApp();
    const d = await t.registerDevice();
    assert.equal((await api.post('/api/client/bind', { uuid: d.uuid, name: 'x' })).code, 0);
    assert.equal((await api.get('/api/client/info', { uuid: d.uuid })).code, 0);
    assert.equal((await new ApiClient(t.url, 'bhk_wrong').get('/api/client/list', { page: 1 })).code, 20001);
    assert.equal((await api.get('/api/client/info', { uuid: 'nope' })).code, 30002);
    assert.equal((await api.get('/api/client/list', { page: 0 })).code, 10001);
    await t.server.db.close(); // a fault of the service
    assert.equal((await api.get('/api/client/list', { page: 1 })).code, 10500);
    const byCode = (code: number) => lines.filter((l) => l.code === code).map((l) => l.level);
    assert.deepEqual(byCode(0), [LEVEL.debug, LEVEL.debug]);
    assert.deepEqual(byCode(20001), [LEVEL.warn]);
    assert.deepEqual(byCode(30002), [LEVEL.info]);
    assert.deepEqual(byCode(10001), [LEVEL.info]);
    assert.deepEqual(byCode(10500), [LEVEL.error]);
    assert.ok(
      lines.some((l) => l.level === LEVEL.error && l.msg === 'unhandled error'),
      'the fault itself is logged with its error',
    );
  } finally {
    await t.close();
  }
});

test('/healthz says unavailable without internal error text; the log has the reason', async () => {
  const { logger, lines } = memoryLogger();
  const t = await startTestServer({ logger });
  try {
    const anon = new ApiClient(t.url);
    assert.deepEqual(JSON.parse((await anon.raw('GET', '/healthz')).text), { status: 'ok' });
    await t.server.db.close();
    const h = await anon.raw('GET', '/healthz');
    assert.equal(h.status, 503);
    assert.deepEqual(JSON.parse(h.text), { status: 'unavailable' });
    const logged = lines.find((l) => l.msg === 'health check: database unreachable');
    assert.ok(logged && logged.level === LEVEL.error && logged.err, 'the reason is logged');
  } finally {
    await t.close();
  }
});

test('/metrics with BOXHUB_METRICS_TOKEN wants the token', async () => {
  const token = 'metrics-token-0123456789abcdef';
  const t = await startTestServer({ env: { BOXHUB_METRICS_TOKEN: token } });
  try {
    for (const key of [undefined, 'wrong-token-0123456789abcdef']) {
      const r = await new ApiClient(t.url, key).raw('GET', '/metrics');
      assert.equal(r.status, 401);
      assert.doesNotMatch(r.text, /boxhub_|process_cpu/);
    }
    const ok = await new ApiClient(t.url, token).raw('GET', '/metrics');
    assert.equal(ok.status, 200);
    assert.match(ok.text, /process_cpu_user_seconds_total/);
  } finally {
    await t.close();
  }
});

test('/metrics with BOXHUB_METRICS_PORT is served there and not on the API listener', async () => {
  const t = await startTestServer({ env: { BOXHUB_METRICS_PORT: '0', BOXHUB_METRICS_HOST: '127.0.0.1' } });
  try {
    assert.ok(t.server.metricsUrl && t.server.metricsUrl !== t.url);
    const main = await new ApiClient(t.url).raw('GET', '/metrics');
    assert.doesNotMatch(main.text, /process_cpu_user_seconds_total/);
    const own = await new ApiClient(t.server.metricsUrl).raw('GET', '/metrics');
    assert.equal(own.status, 200);
    assert.match(own.text, /process_cpu_user_seconds_total/);
    assert.equal(
      (await new ApiClient(t.server.metricsUrl).raw('GET', '/api/client/list')).status,
      404,
      'the metrics listener serves nothing else',
    );
  } finally {
    await t.close();
  }
});
