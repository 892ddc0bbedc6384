// BOXHUB_TRUST_PROXY (docs/configuration.md "Behind a proxy"), each form through a real proxy
// hop (testing/http-proxy.ts) with clients on their own loopback addresses: who is counted by
// the per-address limits (refused keys here) and whether the console cookie is Secure. Every
// client also forges X-Forwarded-For and X-Forwarded-Proto, which must not help it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError } from '../config.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { requestFrom, startHttpProxy, type HttpProxy } from '../testing/http-proxy.ts';
import { ManualClock } from '../testing/manual-clock.ts';

const ATTACKER = '127.0.0.2';
const VICTIM = '127.0.0.3';
const DIRECT = '127.0.0.4';
const forged = (i: number) => ({ 'x-forwarded-for': `198.51.100.${i}`, 'x-forwarded-proto': 'https' });

async function codeOf(from: string, base: string, key: string, headers: Record<string, string> = {}): Promise<number> {
  const r = await requestFrom(from, `${base}/api/client/list?page=1`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  return (JSON.parse(r.text) as { code: number }).code;
}
async function loginCookie(from: string, base: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await requestFrom(from, `${base}/console/login`, { headers });
  const c = ([] as string[]).concat(r.headers['set-cookie'] ?? []).find((x) => x.startsWith('bh_console_login='));
  assert.ok(c, 'the sign-in page sets its cookie');
  return c;
}

/** Three refused keys from the attacker (each with a forged X-Forwarded-For), through `entry`. */
async function attack(entry: string): Promise<void> {
  for (let i = 1; i <= 3; i++)
    assert.equal(await codeOf(ATTACKER, entry, 'not-a-key-at-all-0000000', forged(i)), 20001);
  assert.equal(
    await codeOf(ATTACKER, entry, 'not-a-key-at-all-0000000', forged(9)),
    10007,
    'the attacker is blocked whatever it forges',
  );
}

async function withServer(
  trust: string | undefined,
  hops: number,
  fn: (t: TestServer, entry: string, key: string) => Promise<void>,
): Promise<void> {
  const t = await startTestServer({
    clock: new ManualClock(Date.now()),
    env: { BOXHUB_RATE_LIMIT_AUTH_FAILURES: '3/5m', ...(trust === undefined ? {} : { BOXHUB_TRUST_PROXY: trust }) },
  });
  const proxies: HttpProxy[] = [];
  try {
    let entry = t.url;
    // The proxy next to the server connects from 127.0.0.1; one further out from 127.0.0.5.
    for (let i = 0; i < hops; i++) {
      proxies.push(await startHttpProxy(entry, { from: i === 0 ? '127.0.0.1' : '127.0.0.5' }));
      entry = proxies.at(-1)!.url;
    }
    const { api_key } = await t.createApp();
    await fn(t, entry, api_key);
  } finally {
    for (const p of proxies) await p.close();
    await t.close();
  }
}

describe('BOXHUB_TRUST_PROXY', () => {
  test('off: every client behind the proxy is the proxy; forwarded headers are ignored', async () => {
    await withServer(undefined, 1, async (t, entry, key) => {
      await attack(entry);
      assert.equal(
        await codeOf(VICTIM, entry, key),
        10007,
        "documented: without it, every request counts against the proxy's address",
      );
      assert.doesNotMatch(await loginCookie(VICTIM, entry), /Secure/);
      // Straight to the server, another address: not blocked, and its forged headers change nothing.
      assert.equal(await codeOf(DIRECT, t.url, key, forged(1)), 0);
      assert.doesNotMatch(await loginCookie(DIRECT, t.url, forged(1)), /Secure/);
    });
  });

  test('1 hop: the client is the address the proxy appended; the cookie is Secure behind TLS', async () => {
    await withServer('1', 1, async (_t, entry, key) => {
      await attack(entry);
      assert.equal(await codeOf(VICTIM, entry, key), 0, 'another client through the same proxy is not blocked');
      assert.match(await loginCookie(VICTIM, entry), /; Secure/);
    });
  });

  test('2 hops: two proxies in a chain; the client is the entry the outer one appended', async () => {
    await withServer('2', 2, async (_t, entry, key) => {
      await attack(entry);
      assert.equal(await codeOf(VICTIM, entry, key), 0);
      assert.match(await loginCookie(VICTIM, entry), /; Secure/);
    });
  });

  test('proxy addresses/CIDRs: only a listed peer is believed; a client reaching the server itself forges nothing', async () => {
    await withServer('10.0.0.0/8, 127.0.0.1', 1, async (t, entry, key) => {
      await attack(entry);
      assert.equal(await codeOf(VICTIM, entry, key), 0);
      assert.match(await loginCookie(VICTIM, entry), /; Secure/);
      // 127.0.0.4 is no listed proxy: its X-Forwarded-For and -Proto are its own words.
      for (let i = 1; i <= 3; i++)
        assert.equal(await codeOf(DIRECT, t.url, 'not-a-key-at-all-0000000', forged(10 + i)), 20001);
      assert.equal(await codeOf(DIRECT, t.url, key, forged(20)), 10007, 'counted as 127.0.0.4, whatever it forged');
      assert.doesNotMatch(await loginCookie(DIRECT, t.url, forged(1)), /Secure/);
    });
  });

  test('"true" (trust every hop: the client would choose its address) and malformed values are refused at start', () => {
    const base = { BOXHUB_DATA_DIR: '/tmp/unused' };
    assert.throws(
      () => loadConfig({ ...base, BOXHUB_TRUST_PROXY: 'true' }),
      (e: unknown) => e instanceof ConfigError && /choose its own address/.test((e as Error).message),
    );
    for (const bad of ['loopback', '10.0.0.0/33', '1.2.3', '99', 'fe80::/129']) {
      assert.throws(() => loadConfig({ ...base, BOXHUB_TRUST_PROXY: bad }), ConfigError, bad);
    }
    assert.deepEqual(loadConfig({ ...base, BOXHUB_TRUST_PROXY: '2' }).trustProxy, { hops: 2 });
    assert.deepEqual(loadConfig({ ...base, BOXHUB_TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy, {
      proxies: ['10.0.0.0/8', '::1'],
    });
    assert.equal(loadConfig({ ...base, BOXHUB_TRUST_PROXY: 'false' }).trustProxy, undefined);
  });
});
