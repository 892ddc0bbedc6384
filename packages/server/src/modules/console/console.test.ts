// The web console's rules over plain HTTP (docs/console.md "Security"): sign-in, the session
// cookie, CSRF on every form, escaping of device-supplied text, one application's data only,
// revocation, and that the API stays bearer-only. The browser tests are packages/e2e/src/console*.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startTestServer, type ApiClient, type TestServer } from '../../testing/harness.ts';
import { ManualClock } from '../../testing/manual-clock.ts';
import { SESSION_TTL_MS } from './session.ts';

let t: TestServer;
let a: { id: string; api_key: string; api: ApiClient };
let b: { id: string; api_key: string; api: ApiClient };
let devA: { uuid: string; code: string };
let devB: { uuid: string; code: string };
const logLines: string[] = [];

before(async () => {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  t = await startTestServer({ logger: pino({ level: 'trace' }, sink) });
  a = await t.createApp('school-a');
  b = await t.createApp('school-b');
  devA = await t.registerDevice();
  devB = await t.registerDevice();
  assert.equal((await a.api.post('/api/client/bind', { uuid: devA.uuid, name: 'Room A' })).code, 0);
  assert.equal((await b.api.post('/api/client/bind', { uuid: devB.uuid, name: 'Room B secret' })).code, 0);
});
after(() => t.close());

let base = '';
const req = (path: string, init: RequestInit = {}) => fetch(`${base || t.url}${path}`, { redirect: 'manual', ...init });
const cookieOf = (r: Response, name: string) => r.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
const value = (setCookie: string | undefined) => setCookie?.split(';')[0]?.split('=').slice(1).join('=') ?? '';
const field = (body: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];
const form = (o: Record<string, string>) => ({
  'content-type': 'application/x-www-form-urlencoded',
  body: new URLSearchParams(o).toString(),
});

/** Signs in through the form; returns the session cookie header and the page's CSRF token. */
async function signIn(key: string): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const page = await req('/console/login');
  const loginCookie = value(cookieOf(page, 'bh_console_login'));
  const token = field(await page.text(), '_csrf')!;
  const { body, ...h } = form({ _csrf: token, api_key: key });
  const r = await req('/console/login', {
    method: 'POST',
    headers: { ...h, cookie: `bh_console_login=${loginCookie}` },
    body,
  });
  assert.equal(r.status, 303);
  assert.equal(r.headers.get('location'), '/console/devices');
  const setCookie = cookieOf(r, 'bh_console')!;
  const cookie = `bh_console=${value(setCookie)}`;
  const devices = await req('/console/devices', { headers: { cookie } });
  const csrf = field(await devices.text(), '_csrf')!;
  return { cookie, csrf, setCookie };
}

describe('sign-in and the session', () => {
  test('pages need a session: they send to the sign-in page', async () => {
    for (const p of [
      '/console',
      '/console/devices',
      `/console/devices/${devA.uuid}`,
      '/console/callbacks',
      '/console/tasks',
      '/console/recognition',
      '/console/templates',
      '/console/keys',
    ]) {
      const r = await req(p);
      assert.equal(r.status, 303, p);
      assert.match(r.headers.get('location') ?? '', /\/console\/(login|devices)$/);
    }
    const r = await req('/console/devices', { headers: { 'hx-request': 'true' } });
    assert.equal(r.status, 204);
    assert.equal(r.headers.get('hx-redirect'), '/console/login');
  });

  test('the cookie is HttpOnly, SameSite=Strict, scoped to /console, and never holds the key; the key appears in no log line', async () => {
    const s = await signIn(a.api_key);
    assert.match(s.setCookie, /; HttpOnly/);
    assert.match(s.setCookie, /; SameSite=Strict/);
    assert.match(s.setCookie, /; Path=\/console/);
    assert.doesNotMatch(s.setCookie, /; Secure/, 'plain http: no Secure flag (https sets it)');
    assert.ok(!s.setCookie.includes(a.api_key) && !s.setCookie.includes(a.api_key.slice(4, 20)));
    assert.ok(logLines.length > 0, 'the server logged the requests');
    assert.ok(!logLines.some((l) => l.includes(a.api_key)), 'the API key is in no log line');
  });

  test('a wrong key, a missing login token and a forged cookie get no session', async () => {
    const page = await req('/console/login');
    const loginCookie = value(cookieOf(page, 'bh_console_login'));
    const token = field(await page.text(), '_csrf')!;
    const wrong = form({ _csrf: token, api_key: 'bhk_wrong' });
    const r1 = await req('/console/login', {
      method: 'POST',
      headers: { 'content-type': wrong['content-type'], cookie: `bh_console_login=${loginCookie}` },
      body: wrong.body,
    });
    assert.equal(r1.status, 401);
    assert.equal(cookieOf(r1, 'bh_console'), undefined);
    assert.match(await r1.text(), /not valid/);
    const noToken = form({ api_key: a.api_key });
    const r2 = await req('/console/login', {
      method: 'POST',
      headers: { 'content-type': noToken['content-type'] },
      body: noToken.body,
    });
    assert.equal(r2.status, 403);
    assert.equal(cookieOf(r2, 'bh_console'), undefined);
    const r3 = await req('/console/devices', { headers: { cookie: 'bh_console=v1:AAAA:BBBB' } });
    assert.equal(r3.status, 303);
  });

  test('revoking the key ends its sessions at once', async () => {
    const c = await t.createApp('school-c');
    const s = await signIn(c.api_key);
    assert.equal((await req('/console/devices', { headers: { cookie: s.cookie } })).status, 200);
    const keys = await t.server.services.applications.listKeys(c.id);
    await t.server.services.applications.revokeKey(keys[0]!.id);
    const r = await req('/console/devices', { headers: { cookie: s.cookie } });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/console/login');
  });

  test('security headers on every page; assets come from the server', async () => {
    const r = await req('/console/login');
    assert.match(r.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
    const js = await req('/console/assets/htmx.min.js');
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.ok((await js.text()).length > 10_000);
    assert.equal((await req('/console/assets/console.css')).status, 200);
  });
});

describe("one application's data, escaped", () => {
  test("the device list shows this application's devices only; another's device page is 404", async () => {
    const s = await signIn(a.api_key);
    const body = await (await req('/console/devices', { headers: { cookie: s.cookie } })).text();
    assert.match(body, /Room A/);
    assert.ok(!body.includes(devB.uuid) && !body.includes('Room B secret'));
    const nowhere = await req('/console/no/such/page', { headers: { cookie: s.cookie } });
    assert.equal(nowhere.status, 404);
    assert.match(nowhere.headers.get('content-type') ?? '', /text\/html/);
    const other = await req(`/console/devices/${devB.uuid}`, { headers: { cookie: s.cookie } });
    assert.equal(other.status, 404);
    assert.ok(!(await other.text()).includes('Room B secret'));
    const { body: f, ...h } = form({ _csrf: s.csrf, name: 'taken over' });
    assert.equal(
      (
        await req(`/console/devices/${devB.uuid}/rename`, {
          method: 'POST',
          headers: { ...h, cookie: s.cookie },
          body: f,
        })
      ).status,
      404,
    );
    assert.equal(
      (await b.api.get<{ client: { name: string } }>('/api/client/info', { uuid: devB.uuid })).data.client.name,
      'Room B secret',
    );
  });

  test('hostile device names and remarks are shown as text', async () => {
    const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'';
    assert.equal(
      (await a.api.post('/api/client/edit', { uuid: devA.uuid, name: hostile, remark: '</textarea><b>bold</b>' })).code,
      0,
    );
    const s = await signIn(a.api_key);
    for (const p of ['/console/devices', `/console/devices/${devA.uuid}`]) {
      const body = await (await req(p, { headers: { cookie: s.cookie } })).text();
      assert.ok(!body.includes('<script>alert') && !body.includes('<img src=x') && !body.includes('<b>bold'), p);
      assert.ok(body.includes('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;'), p);
    }
    assert.equal((await a.api.post('/api/client/edit', { uuid: devA.uuid, name: 'Room A', remark: '' })).code, 0);
  });
});

describe('binding', () => {
  test("bind a box by its code, unbind it; another application's box cannot be bound", async () => {
    const s = await signIn(a.api_key);
    const fresh = await t.registerDevice();
    const post = (path: string, fields: Record<string, string>) => {
      const { body, ...h } = form({ _csrf: s.csrf, ...fields });
      return req(path, { method: 'POST', headers: { ...h, cookie: s.cookie }, body });
    };
    const bound = await post('/console/devices/bind', { code: fresh.code, name: 'New room' });
    assert.equal(bound.status, 303);
    assert.equal(bound.headers.get('location'), `/console/devices/${fresh.uuid}?msg=bound`);
    assert.equal(
      (await a.api.get<{ client: { name: string } }>('/api/client/info', { uuid: fresh.uuid })).data.client.name,
      'New room',
    );
    const taken = await post('/console/devices/bind', { code: devB.code, name: 'mine now' });
    assert.equal(taken.status, 400);
    assert.match(await taken.text(), /bound by another application \(code 30003\)/);
    const missing = await post('/console/devices/bind', { code: 'NOPE-NOPE', name: 'x' });
    assert.equal(missing.status, 404);
    const unbound = await post(`/console/devices/${fresh.uuid}/unbind`, { _confirmed: '1' });
    assert.equal(unbound.status, 303);
    assert.equal((await a.api.get('/api/client/info', { uuid: fresh.uuid })).code, 30002);
    const list = await (await req('/console/devices?msg=unbound', { headers: { cookie: s.cookie } })).text();
    assert.ok(!list.includes(fresh.uuid));
    assert.match(list, /no longer belongs to this application/);
  });
});

describe('callback settings', () => {
  test("rotate the callback secret (shown once, signing with it at once); a test callback to a private address is refused with the guard's reason", async () => {
    const c = await t.createApp('school-e');
    const s = await signIn(c.api_key);
    const { body, ...h } = form({ _csrf: s.csrf, _confirmed: '1' });
    const r = await req('/console/callbacks/rotate_secret', {
      method: 'POST',
      headers: { ...h, cookie: s.cookie },
      body,
    });
    assert.equal(r.status, 200);
    const secret = /id="callback-secret">(whsec_[^<]+)</.exec(await r.text())?.[1];
    assert.ok(secret && secret !== c.callback_secret);
    const stored = (await t.server.repos.applications.callbackSecrets([c.id])).get(c.id);
    assert.equal(stored?.current, secret, 'callbacks are signed with the new secret');
    assert.equal(stored?.previous, c.callback_secret, 'the previous one signs during its grace period');
    assert.ok(!logLines.some((l) => l.includes(secret)), 'the new secret is in no log line');
    const test = form({ _csrf: s.csrf, callback_url: 'http://127.0.0.1:9/hook' });
    const refused = await req('/console/callbacks/test', {
      method: 'POST',
      headers: { 'content-type': test['content-type'], cookie: s.cookie },
      body: test.body,
    });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /private|loopback|not allowed/i);
  });
});

describe('CSRF', () => {
  test("a form without the session's token, with another token or from another origin is refused; with it, it works", async () => {
    const s = await signIn(a.api_key);
    const other = await signIn(a.api_key);
    assert.notEqual(s.csrf, other.csrf, 'each session has its own token');
    const rename = (fields: Record<string, string>, extra: Record<string, string> = {}) => {
      const { body, ...h } = form(fields);
      return req(`/console/devices/${devA.uuid}/rename`, {
        method: 'POST',
        headers: { ...h, cookie: s.cookie, ...extra },
        body,
      });
    };
    assert.equal((await rename({ name: 'csrf-1' })).status, 403);
    assert.equal((await rename({ name: 'csrf-2', _csrf: other.csrf })).status, 403);
    assert.equal((await rename({ name: 'csrf-3', _csrf: s.csrf }, { origin: 'http://evil.example' })).status, 403);
    assert.equal((await rename({ name: 'csrf-4', _csrf: s.csrf }, { 'sec-fetch-site': 'cross-site' })).status, 403);
    const name = async () =>
      (await a.api.get<{ client: { name: string } }>('/api/client/info', { uuid: devA.uuid })).data.client.name;
    assert.equal(await name(), 'Room A');
    const ok = await rename({ name: 'Room A2', _csrf: s.csrf }, { origin: t.url });
    assert.equal(ok.status, 303);
    assert.equal(await name(), 'Room A2');
    // The print upload checks the token as its first part.
    const fd = new FormData();
    fd.append('_csrf', 'wrong');
    fd.append('file', new Blob([Buffer.from('%PDF-1.4')], { type: 'application/pdf' }), 'a.pdf');
    assert.equal(
      (await req(`/console/devices/${devA.uuid}/print`, { method: 'POST', headers: { cookie: s.cookie }, body: fd }))
        .status,
      403,
    );
    // Only the print upload reads its token from a multipart body: elsewhere multipart carries none.
    const mp = new FormData();
    mp.append('_csrf', s.csrf);
    assert.equal(
      (await req(`/console/devices/${devA.uuid}/buzz`, { method: 'POST', headers: { cookie: s.cookie }, body: mp }))
        .status,
      403,
    );
    // Replay and sign-out need it too.
    assert.equal(
      (await req('/console/callbacks/x/replay', { method: 'POST', headers: { cookie: s.cookie } })).status,
      403,
    );
    assert.equal((await req('/console/logout', { method: 'POST', headers: { cookie: s.cookie } })).status, 403);
  });

  test('the API stays bearer-only: a console cookie is no credential there', async () => {
    const s = await signIn(a.api_key);
    const r = await req('/api/client/list?page=1', { headers: { cookie: s.cookie } });
    assert.equal(((await r.json()) as { code: number }).code, 20001);
    // The console's form and multipart parsers stay in its scope: the API still takes JSON only.
    for (const body of [
      new URLSearchParams({ client_uuid: devA.uuid }),
      (() => {
        const f = new FormData();
        f.append('client_uuid', devA.uuid);
        return f;
      })(),
    ]) {
      const api = await req('/api/scan/current', {
        method: 'POST',
        headers: { authorization: `Bearer ${a.api_key}` },
        body,
      });
      assert.equal(((await api.json()) as { code: number }).code, 10004);
    }
  });

  test('console pages are not in /openapi.json', async () => {
    const doc = (await (await req('/openapi.json')).json()) as { paths: Record<string, unknown> };
    assert.ok(Object.keys(doc.paths).length > 10);
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => p.startsWith('/console')),
      [],
    );
  });
});

describe('expiry and HTTPS', () => {
  test('a session ends after 12 hours; behind an HTTPS proxy the cookie is Secure', async () => {
    const clock = new ManualClock();
    const t2 = await startTestServer({ clock, env: { BOXHUB_TRUST_PROXY: '127.0.0.1' } });
    try {
      base = t2.url;
      const c = await t2.createApp('school-d');
      const page = await req('/console/login', { headers: { 'x-forwarded-proto': 'https' } });
      assert.match(cookieOf(page, 'bh_console_login') ?? '', /; Secure/);
      const s = await signIn(c.api_key);
      assert.equal((await req('/console/devices', { headers: { cookie: s.cookie } })).status, 200);
      await clock.advance(SESSION_TTL_MS - 1000);
      assert.equal((await req('/console/devices', { headers: { cookie: s.cookie } })).status, 200);
      await clock.advance(2000);
      const r = await req('/console/devices', { headers: { cookie: s.cookie } });
      assert.equal(r.status, 303);
      assert.equal(r.headers.get('location'), '/console/login');
    } finally {
      base = '';
      await t2.close();
    }
  });
});

describe('rate limits', () => {
  test("console pages count against the application's limit, as API calls do", async () => {
    const t3 = await startTestServer({ env: { BOXHUB_RATE_LIMIT_APP: '3/1h' } });
    try {
      base = t3.url;
      const c = await t3.createApp('school-f');
      const s = await signIn(c.api_key); // one page (the device list)
      assert.equal((await req('/console/devices', { headers: { cookie: s.cookie } })).status, 200);
      assert.equal((await c.api.get('/api/client/list', { page: 1 })).code, 0);
      const r = await req('/console/devices', { headers: { cookie: s.cookie } });
      assert.equal(r.status, 429);
      assert.match(await r.text(), /too many requests from this application/);
    } finally {
      base = '';
      await t3.close();
    }
  });
});
