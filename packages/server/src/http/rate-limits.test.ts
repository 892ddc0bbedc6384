// API rate limits (docs/configuration.md "Rate limits"): each refusal is the envelope with 10007,
// Retry-After and data.retry_after; windows are crossed with the injected clock.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiClient, startTestServer } from '../testing/harness.ts';
import { addressKey } from './rate-limits.ts';
import { ManualClock } from '../testing/manual-clock.ts';

// Time moves only when a test advances it (testing/manual-clock.ts).
const frozen = () => new ManualClock(Date.now());

async function call(c: ApiClient, path = '/api/client/list?page=1', headers: Record<string, string> = {}) {
  const r = await c.raw('GET', path, { headers });
  return { code: (JSON.parse(r.text) as { code: number }).code, r };
}
function expectLimited(x: { code: number; r: { text: string } }, retryAfter: number, what: RegExp): void {
  assert.equal(x.code, 10007, x.r.text);
  const e = JSON.parse(x.r.text) as { msg: string; data: { retry_after: number } };
  assert.match(e.msg, what);
  assert.equal(e.data.retry_after, retryAfter);
}
async function retryAfterHeader(c: ApiClient, path = '/api/client/list?page=1'): Promise<string | null> {
  const res = await fetch(c.base + path, { headers: c.key ? { authorization: `Bearer ${c.key}` } : {} });
  await res.text();
  return res.headers.get('retry-after');
}

describe('per client address, before authentication', () => {
  test('past the limit every request from the address gets 10007 with Retry-After, until the window ends', async () => {
    const clock = frozen();
    const t = await startTestServer({ clock, env: { BOXHUB_RATE_LIMIT_ADDRESS: '5/1m' } });
    try {
      const { api } = await t.createApp();
      const anon = new ApiClient(t.url);
      for (let i = 0; i < 3; i++) assert.equal((await call(api)).code, 0);
      for (let i = 0; i < 2; i++) assert.equal((await call(anon)).code, 20001);
      expectLimited(await call(api), 60, /too many requests from this address \(limit 5 per 1 min\); retry after 60 s/);
      expectLimited(await call(anon, '/api/nope'), 60, /from this address/);
      await clock.advance(20_000);
      assert.equal(await retryAfterHeader(api), '40');
      await clock.advance(40_000);
      assert.equal((await call(api)).code, 0, 'a new window');
      assert.equal(await retryAfterHeader(api), null, 'no Retry-After on answers that are not refused');
      // Outside /api nothing is limited (health checks keep working).
      for (let i = 0; i < 10; i++) assert.equal((await anon.raw('GET', '/healthz')).status, 200);
    } finally {
      await t.close();
    }
  });

  test('behind a trusted proxy the forwarded address is the one counted', async () => {
    const t = await startTestServer({
      clock: frozen(),
      env: { BOXHUB_RATE_LIMIT_ADDRESS: '2/1m', BOXHUB_TRUST_PROXY: '127.0.0.1' },
    });
    try {
      const { api } = await t.createApp();
      for (const ip of ['203.0.113.7', '203.0.113.8']) {
        assert.equal((await call(api, undefined, { 'x-forwarded-for': ip })).code, 0);
        assert.equal((await call(api, undefined, { 'x-forwarded-for': ip })).code, 0);
        assert.equal((await call(api, undefined, { 'x-forwarded-for': ip })).code, 10007, ip);
      }
    } finally {
      await t.close();
    }
  });

  test('IPv6 clients are counted by their /64', () => {
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:ffff:1:2:3'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(addressKey('192.0.2.1'), '192.0.2.1');
  });
});

describe('per application', () => {
  test('one application past its limit does not hold up another', async () => {
    const clock = frozen();
    const t = await startTestServer({ clock, env: { BOXHUB_RATE_LIMIT_APP: '3/10s' } });
    try {
      const a = (await t.createApp()).api;
      const b = (await t.createApp()).api;
      for (let i = 0; i < 3; i++) assert.equal((await call(a)).code, 0);
      expectLimited(await call(a), 10, /too many requests from this application \(limit 3 per 10 s\)/);
      assert.equal((await call(b)).code, 0);
      await clock.advance(10_000);
      assert.equal((await call(a)).code, 0);
    } finally {
      await t.close();
    }
  });
});

describe('refused API keys per address', () => {
  test('past the limit the address is refused before its key is looked at, valid keys included', async () => {
    const clock = frozen();
    const t = await startTestServer({ clock, env: { BOXHUB_RATE_LIMIT_AUTH_FAILURES: '3/5m' } });
    try {
      const { api } = await t.createApp();
      const wrong = new ApiClient(t.url, 'bhk_guess');
      for (let i = 0; i < 3; i++) assert.equal((await call(wrong)).code, 20001);
      expectLimited(await call(wrong), 300, /too many refused API keys from this address \(limit 3 per 5 min\)/);
      expectLimited(await call(api), 300, /refused API keys/);
      await clock.advance(300_000);
      assert.equal((await call(api)).code, 0);
      assert.equal((await call(wrong)).code, 20001);
    } finally {
      await t.close();
    }
  });
});

describe('get_uuid lookups without a result, per application, on every node', () => {
  test('misses count on every node sharing the database; finds do not; concurrency cannot slip past', async () => {
    const clock = frozen();
    const env = { BOXHUB_RATE_LIMIT_GET_UUID_MISSES: '4/10m' };
    const n1 = await startTestServer({ clock, env });
    const n2 = await startTestServer({ clock, env, reuse: { dataDir: n1.dataDir, pgSchema: n1.pgSchema } });
    try {
      const app = await n1.createApp();
      const via1 = app.api;
      const via2 = new ApiClient(n2.url, app.api_key);
      const d = await n1.registerDevice();
      for (let i = 0; i < 10; i++)
        assert.equal(
          (await via1.get('/api/client/get_uuid', { code: d.code })).code,
          0,
          'finding a device is not a miss',
        );
      assert.equal((await via1.get('/api/client/get_uuid', { code: 'NOPE1' })).code, 30002);
      assert.equal((await via2.get('/api/client/get_uuid', { code: 'NOPE2' })).code, 30002);
      const other = await n1.createApp();
      const taken = await n1.registerDevice();
      assert.equal((await other.api.post('/api/client/bind', { uuid: taken.uuid, name: 'theirs' })).code, 0);
      assert.equal(
        (await via2.get('/api/client/get_uuid', { code: taken.code })).code,
        30003,
        'a device of another application counts too',
      );
      assert.equal((await via1.get('/api/client/get_uuid', { code: 'NOPE3' })).code, 30002);
      const r = await via2.get<{ retry_after: number }>('/api/client/get_uuid', { code: 'NOPE4' });
      assert.equal(r.code, 10007, r.msg);
      assert.match(r.msg, /too many get_uuid lookups without a result \(limit 4 per 10 min per application\)/);
      assert.equal(r.data.retry_after, 600);
      assert.equal(
        (await via1.get('/api/client/get_uuid', { code: d.code })).code,
        10007,
        'while blocked, even a good code waits',
      );
      assert.equal(
        (await other.api.get('/api/client/get_uuid', { code: 'NOPE5' })).code,
        30002,
        'another application has its own count',
      );
      await clock.advance(600_000);
      // A new window: 20 guesses at once, on both nodes; only 4 are looked up.
      const burst = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? via1 : via2).get('/api/client/get_uuid', { code: `GUESS${i}` })),
      );
      assert.deepEqual(burst.map((x) => x.code).sort(), [...Array(16).fill(10007), ...Array(4).fill(30002)]);
    } finally {
      await n2.close();
      await n1.close();
    }
  });
});
