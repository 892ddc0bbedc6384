// Sign-out and the Origin check (docs/console.md "Security"): a signed-out session is dead on
// every node (two server nodes on one database and one secret key), only that session; the
// Origin check compares the scheme too, with the scheme a trusted proxy reports.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsoleClient } from '../../testing/console-client.ts';
import { startTestServer, type TestServer } from '../../testing/harness.ts';

const OPERATOR = 'operator-token-for-signout-tests-0123456789';

describe('sign-out', () => {
  let a: TestServer;
  let b: TestServer;
  let key: string;
  before(async () => {
    a = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: OPERATOR } });
    // A second node on the same data (database and secret key), running at the same time.
    b = await startTestServer({
      env: { BOXHUB_OPERATOR_TOKEN: OPERATOR },
      reuse: { dataDir: a.dataDir, pgSchema: a.pgSchema },
    });
    key = (await a.createApp('signout')).api_key;
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  const on = (t: TestServer, cookie: string, path: string) =>
    fetch(`${t.url}${path}`, { redirect: 'manual', headers: { cookie } });

  test('a signed-out application session opens nothing on any node; another session of the same key is untouched', async () => {
    const ui = await new ConsoleClient(a.url).signIn(key);
    const other = await new ConsoleClient(b.url).signIn(key);
    const old = ui.cookie;
    assert.equal((await on(b, old, '/console/devices')).status, 200, 'a session works on every node');
    const out = await ui.post('/console/logout');
    assert.equal(out.status, 303);
    for (const t of [a, b]) {
      const r = await on(t, old, '/console/devices');
      assert.equal(r.status, 303, 'the old cookie, replayed');
      assert.equal(r.headers.get('location'), '/console/login');
    }
    assert.equal((await other.get('/console/devices')).status, 200);
  });

  test('a signed-out operator session opens nothing on any node', async () => {
    const op = await new ConsoleClient(a.url).signInOperator(OPERATOR);
    const old = op.cookie;
    assert.equal((await on(b, old, '/console/operator/applications')).status, 200);
    assert.equal((await op.post('/console/operator/logout')).status, 303);
    for (const t of [a, b]) {
      const r = await on(t, old, '/console/operator/applications');
      assert.equal(r.status, 303);
      assert.equal(r.headers.get('location'), '/console/operator/login');
    }
  });
});

describe('the Origin check compares the scheme', () => {
  test('behind a trusted HTTPS proxy an http:// Origin of the same host is another origin; without one, an https:// Origin is', async () => {
    const proxied = await startTestServer({
      env: { BOXHUB_TRUST_PROXY: '127.0.0.1', BOXHUB_PUBLIC_URL: 'https://boxhub.example' },
    });
    const direct = await startTestServer();
    try {
      const key1 = (await proxied.createApp()).api_key;
      const ui = await new ConsoleClient(proxied.url).signIn(key1);
      const host = new URL(proxied.url).host;
      const viaProxy = (origin: string) =>
        ui.post('/console/devices/bind', { code: 'NOPE' }, { headers: { origin, 'x-forwarded-proto': 'https' } });
      for (const origin of [`http://${host}`, 'http://boxhub.example', `https://${host}.evil.example`, 'null']) {
        const r = await viaProxy(origin);
        assert.equal(r.status, 403, origin);
        assert.match(r.body, /cross-origin request refused/);
      }
      // The same host by the scheme the proxy reports, and the public URL's origin, are this server.
      for (const origin of [`https://${host}`, 'https://boxhub.example'])
        assert.notEqual((await viaProxy(origin)).status, 403, origin);

      const key2 = (await direct.createApp()).api_key;
      const plain = await new ConsoleClient(direct.url).signIn(key2);
      const dHost = new URL(direct.url).host;
      const r = await plain.post(
        '/console/devices/bind',
        { code: 'NOPE' },
        { headers: { origin: `https://${dHost}` } },
      );
      assert.equal(r.status, 403, 'served over http: an https Origin is another origin');
      assert.notEqual(
        (await plain.post('/console/devices/bind', { code: 'NOPE' }, { headers: { origin: `http://${dHost}` } }))
          .status,
        403,
      );
    } finally {
      await proxied.close();
      await direct.close();
    }
  });
});
