// The operator's console over plain HTTP (docs/console.md "Operators"): its own sign-in with the
// operator token and its own sealed session, which no application key and no application
// session can stand in for; applications (create, keys), devices of the deployment (register,
// new secret, revoke); CSRF and escaping on its forms, the API's validation messages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { SecretBox } from '../../secret-box.ts';
import { ConsoleClient, cookieOf, cookieValue, fieldOf } from '../../testing/console-client.ts';
import { ApiClient, startTestServer, type TestServer } from '../../testing/harness.ts';
import { escapeHtml } from './html.ts';
import { openOperatorSession, openSession, sealOperatorSession, sealSession, operatorTokenDigest } from './session.ts';

const OPERATOR_TOKEN = `op-${randomBytes(16).toString('hex')}`;
let t: TestServer;
let app: { id: string; api_key: string; api: ApiClient };
const logLines: string[] = [];

before(async () => {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  t = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: OPERATOR_TOKEN }, logger: pino({ level: 'trace' }, sink) });
  app = await t.createApp('school');
});
after(() => t.close());

const operatorApi = () => new ApiClient(t.url, OPERATOR_TOKEN);

describe('operator sign-in', () => {
  test("operator pages need the operator's session: an application key or session is no credential", async () => {
    for (const p of ['/console/operator', '/console/operator/applications', '/console/operator/devices']) {
      const r = await fetch(`${t.url}${p}`, { redirect: 'manual' });
      assert.equal(r.status, 303, p);
      assert.equal(r.headers.get('location'), '/console/operator/login');
    }
    // Signed in as an application: still sent to the operator's sign-in.
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const r = await c.get('/console/operator/applications');
    assert.equal(r.status, 303);
    assert.equal(r.res.headers.get('location'), '/console/operator/login');
    // The application's session token put in the operator's cookie does not open.
    const forged = await fetch(`${t.url}/console/operator/applications`, {
      redirect: 'manual',
      headers: { cookie: `bh_console_op=${c.cookie.split('=').slice(1).join('=')}` },
    });
    assert.equal(forged.status, 303);
    // Nor by spelling the path another way (the router decodes percent-escapes).
    for (const p of [
      '/console/%6Fperator/applications',
      '/console/operator%2Fapplications',
      '/console/%6fperator/devices',
    ]) {
      const r2 = await c.get(p);
      assert.ok(r2.status === 303 || r2.status === 404, `${p}: ${r2.status}`);
      assert.ok(!r2.body.includes('id="applications"') && !r2.body.includes('id="all-devices"'), p);
    }
    const before = (await t.server.services.applications.list(1)).total;
    const sneaky = await c.post('/console/%6Fperator/applications/create', { name: 'sneaky' });
    assert.ok(sneaky.status === 303 || sneaky.status === 403, `${sneaky.status}`);
    assert.equal((await t.server.services.applications.list(1)).total, before, 'no application was created');
    // The application's key typed into the operator's sign-in is refused.
    const page = await fetch(`${t.url}/console/operator/login`);
    const login = cookieValue(cookieOf(page, 'bh_console_op_login'));
    const token = fieldOf(await page.text(), '_csrf')!;
    for (const wrong of [app.api_key, `${OPERATOR_TOKEN}x`, '']) {
      const res = await fetch(`${t.url}/console/operator/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `bh_console_op_login=${login}` },
        body: new URLSearchParams({ _csrf: token, operator_token: wrong }).toString(),
      });
      assert.equal(res.status, 401, wrong);
      assert.equal(cookieOf(res, 'bh_console_op'), undefined);
    }
    // No login token: refused before the token is looked at.
    const noToken = await fetch(`${t.url}/console/operator/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ operator_token: OPERATOR_TOKEN }).toString(),
    });
    assert.equal(noToken.status, 403);
  });

  test("the operator's cookie: its own name, HttpOnly, SameSite=Strict, sent to /console/operator only, never the token; not an application session", async () => {
    const c = await new ConsoleClient(t.url).signInOperator(OPERATOR_TOKEN);
    assert.match(c.setCookie, /^bh_console_op=/);
    assert.match(c.setCookie, /; Path=\/console\/operator;/);
    assert.match(c.setCookie, /; HttpOnly/);
    assert.match(c.setCookie, /; SameSite=Strict/);
    assert.ok(!c.setCookie.includes(OPERATOR_TOKEN));
    assert.ok(!logLines.some((l) => l.includes(OPERATOR_TOKEN)), 'the operator token is in no log line');
    // The operator's session is no application session.
    const asApp = await fetch(`${t.url}/console/devices`, {
      redirect: 'manual',
      headers: { cookie: `bh_console=${c.cookie.split('=').slice(1).join('=')}` },
    });
    assert.equal(asApp.status, 303);
    assert.equal(asApp.headers.get('location'), '/console/login');
    assert.match((await c.get('/console/operator/applications')).body, /id="operator-badge"/);
  });

  test('a session is sealed for one kind and one operator token: a new token ends it', () => {
    const box = new SecretBox(randomBytes(32));
    const opSession = sealOperatorSession(box, { token: operatorTokenDigest('one'), exp: 2000, csrf: 'c' });
    assert.ok(openOperatorSession(box, opSession, 1000, 'one'));
    assert.equal(openOperatorSession(box, opSession, 1000, 'two'), undefined, 'the operator token changed');
    assert.equal(openOperatorSession(box, opSession, 1000, undefined), undefined, 'the operator console is off');
    assert.equal(openOperatorSession(box, opSession, 2000, 'one'), undefined, 'expired');
    assert.equal(openSession(box, opSession, 1000), undefined, 'not an application session');
    const appSession = sealSession(box, { app: 'a', key: 'k', exp: 2000, csrf: 'c' });
    assert.equal(
      openOperatorSession(box, appSession, 1000, 'one'),
      undefined,
      'an application session is not an operator session',
    );
  });

  test('without BOXHUB_OPERATOR_TOKEN the operator console is off', async () => {
    const t2 = await startTestServer();
    try {
      const page = await fetch(`${t2.url}/console/operator/login`);
      assert.match(await page.text(), /id="operator-off"/);
      const r = await fetch(`${t2.url}/console/operator/applications`, { redirect: 'manual' });
      assert.equal(r.headers.get('location'), '/console/operator/login');
    } finally {
      await t2.close();
    }
  });
});

describe('applications', () => {
  test('create an application: its key and secret shown once, working on the API; hostile names are text', async () => {
    const c = await new ConsoleClient(t.url).signInOperator(OPERATOR_TOKEN);
    const hostile = '<script>alert("app")</script><img src=x onerror=alert(1)>';
    const r = await c.post('/console/operator/applications/create', { name: hostile, ess: '1' });
    assert.equal(r.status, 200, r.body);
    const key = /id="new-app-key">([^<]+)</.exec(r.body)?.[1];
    const id = /id="new-app-id">([^<]+)</.exec(r.body)?.[1];
    assert.ok(key && id && /id="new-app-secret">whsec_/.test(r.body));
    assert.ok(!r.body.includes('<script>alert') && !r.body.includes('<img src=x'));
    assert.ok(r.body.includes(escapeHtml(hostile)));
    assert.ok(!logLines.some((l) => l.includes(key)), 'the new key is in no log line');
    assert.equal((await new ApiClient(t.url, key).get('/api/client/list', { page: 1 })).code, 0);
    const list = await c.get('/console/operator/applications');
    assert.ok(list.body.includes(`data-id="${id}"`) && !list.body.includes(key), 'listed, without the key');
    assert.ok(!list.body.includes('<script>alert'));
    // Its own console shows the name as text too.
    const own = await new ConsoleClient(t.url).signIn(key);
    const devices = await own.get('/console/devices');
    assert.ok(devices.body.includes(`<b id="app-name">${escapeHtml(hostile)}</b>`));
    // Feedback cards were allowed.
    assert.match(r.body, /<dt>Feedback cards<\/dt><dd>allowed<\/dd>/);
    assert.equal((await t.server.services.applications.info(id)).ess, true);
  });

  test("a bad name gets the operator API's message", async () => {
    const c = await new ConsoleClient(t.url).signInOperator(OPERATOR_TOKEN);
    for (const name of ['', '   ', 'n'.repeat(201)]) {
      const api = await operatorApi().post('/api/operator/app/create', { name });
      assert.notEqual(api.code, 0);
      const r = await c.post('/console/operator/applications/create', { name });
      assert.equal(r.status, 400);
      assert.ok(r.body.includes(`${escapeHtml(api.msg)} (code ${api.code})`), api.msg);
    }
  });

  test("an application's keys: create, rotate (shown once), revoke", async () => {
    const c = await new ConsoleClient(t.url).signInOperator(OPERATOR_TOKEN);
    const made = await t.createApp('keys');
    const page = await c.get(`/console/operator/applications/${made.id}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /id="application-title">keys</);
    const created = await c.post(`/console/operator/applications/${made.id}/keys/create`, { name: 'ci' });
    assert.equal(created.status, 200);
    const ci = /id="new-api-key">([^<]+)</.exec(created.body)?.[1] ?? assert.fail('the new key is shown');
    assert.equal((await new ApiClient(t.url, ci).get('/api/client/list', { page: 1 })).code, 0);
    const ciId = (await t.server.services.applications.listKeys(made.id)).find((k) => k.name === 'ci')!.id;
    const rotated = await c.post(`/console/operator/keys/${ciId}/rotate`, { _confirmed: '1' });
    assert.equal(rotated.status, 200);
    const ci2 = /id="new-api-key">([^<]+)</.exec(rotated.body)?.[1] ?? assert.fail('the rotated key is shown');
    assert.notEqual(ci2, ci);
    assert.equal((await new ApiClient(t.url, ci).get('/api/client/list', { page: 1 })).code, 20001);
    assert.equal((await new ApiClient(t.url, ci2).get('/api/client/list', { page: 1 })).code, 0);
    const defaultKey = (await t.server.services.applications.listKeys(made.id)).find((k) => k.name === 'default')!;
    const revoked = await c.post(`/console/operator/keys/${defaultKey.id}/revoke`, { _confirmed: '1' });
    assert.equal(revoked.status, 303);
    assert.equal(revoked.res.headers.get('location'), `/console/operator/applications/${made.id}?msg=key_revoked`);
    assert.equal((await made.api.get('/api/client/list', { page: 1 })).code, 20001);
    assert.equal((await c.get('/console/operator/applications/nope')).status, 404);
  });
});

describe('devices of the deployment', () => {
  test('register a box (secret shown once), see every device with its application, new secret, revoke', async () => {
    const c = await new ConsoleClient(t.url).signInOperator(OPERATOR_TOKEN);
    const code = `OP${randomBytes(4).toString('hex').toUpperCase()}`;
    const hostileModel = '<img src=x onerror=alert(3)>';
    const r = await c.post('/console/operator/devices/register', { code, model: hostileModel });
    assert.equal(r.status, 200, r.body);
    const uuid = /id="new-device-uuid">([^<]+)</.exec(r.body)?.[1] ?? assert.fail('the new device uuid is shown');
    const secret = /id="new-device-secret">([^<]+)</.exec(r.body)?.[1] ?? assert.fail('the new device secret is shown');
    assert.ok(uuid && secret);
    const row = await t.server.repos.devices.findByUuid(uuid);
    assert.equal(row?.code, code);
    assert.equal(
      row?.secret_hash,
      createHash('sha256').update(secret).digest('hex'),
      'the box logs in with the secret shown',
    );
    assert.ok(!r.body.includes('<img src=x') && r.body.includes(escapeHtml(hostileModel)));
    assert.ok(!logLines.some((l) => l.includes(secret)), 'the secret is in no log line');
    // The same code again: the operator API's answer.
    const api = await operatorApi().post('/api/operator/device/register', { code, model: 'x' });
    const again = await c.post('/console/operator/devices/register', { code, model: 'x' });
    assert.equal(again.status, 400);
    assert.ok(again.body.includes(escapeHtml(api.msg)), api.msg);
    const bad = await operatorApi().post('/api/operator/device/register', { code: '', model: 'x' });
    assert.ok(
      (await c.post('/console/operator/devices/register', { code: '', model: 'x' })).body.includes(escapeHtml(bad.msg)),
      bad.msg,
    );
    // An application binds it: the list shows which one.
    assert.equal((await app.api.post('/api/client/bind', { uuid, name: 'Front desk' })).code, 0);
    const list = await c.get('/console/operator/devices');
    assert.match(
      list.body,
      new RegExp(`data-uuid="${uuid}"[\\s\\S]*?>school</a> <span class="muted">as</span> Front desk`),
    );
    const rotated = await c.post(`/console/operator/devices/${uuid}/rotate_secret`, { _confirmed: '1' });
    const secret2 =
      /id="new-device-secret">([^<]+)</.exec(rotated.body)?.[1] ?? assert.fail('the rotated secret is shown');
    assert.ok(secret2 && secret2 !== secret);
    assert.equal(
      (await t.server.repos.devices.findByUuid(uuid))?.secret_hash,
      createHash('sha256').update(secret2).digest('hex'),
    );
    const revoked = await c.post(`/console/operator/devices/${uuid}/revoke`, { _confirmed: '1' });
    assert.equal(revoked.status, 303);
    assert.equal((await t.server.repos.devices.findByUuid(uuid))?.secret_hash, 'revoked');
    assert.match(
      (await c.get('/console/operator/devices')).body,
      new RegExp(`data-uuid="${uuid}"[\\s\\S]*?secret revoked`),
    );
  });
});

describe('operator CSRF', () => {
  test("operator forms refuse a POST without the operator session's token, with an application session's token, or from another origin", async () => {
    const c = await new ConsoleClient(t.url).signInOperator(OPERATOR_TOKEN);
    const appSession = await new ConsoleClient(t.url).signIn(app.api_key);
    const [key] = await t.server.services.applications.listKeys(app.id);
    const device = await t.registerDevice();
    const before = (await t.server.services.applications.list(1)).total;
    const forms: Array<[string, Record<string, string>]> = [
      ['/console/operator/applications/create', { name: 'csrf-app' }],
      [`/console/operator/applications/${app.id}/keys/create`, { name: 'csrf-key' }],
      [`/console/operator/keys/${key!.id}/rotate`, { _confirmed: '1' }],
      [`/console/operator/keys/${key!.id}/revoke`, { _confirmed: '1' }],
      ['/console/operator/devices/register', { code: 'CSRF1', model: 'm' }],
      [`/console/operator/devices/${device.uuid}/rotate_secret`, { _confirmed: '1' }],
      [`/console/operator/devices/${device.uuid}/revoke`, { _confirmed: '1' }],
      ['/console/operator/logout', {}],
    ];
    for (const [path, fields] of forms) {
      assert.equal((await c.post(path, fields, { csrf: null })).status, 403, `${path} without a token`);
      assert.equal(
        (await c.post(path, fields, { csrf: appSession.csrf })).status,
        403,
        `${path} with an application session's token`,
      );
      assert.equal(
        (await c.post(path, fields, { headers: { 'sec-fetch-site': 'cross-site' } })).status,
        403,
        `${path} cross-site`,
      );
    }
    assert.equal((await t.server.services.applications.list(1)).total, before);
    assert.equal((await app.api.get('/api/client/list', { page: 1 })).code, 0, 'the key was not rotated or revoked');
    assert.equal(await t.server.repos.devices.findByCode('CSRF1'), undefined);
    assert.notEqual((await t.server.repos.devices.findByUuid(device.uuid))?.secret_hash, 'revoked');
    // With the token, sign-out works and ends the operator's session in this browser.
    const out = await c.post('/console/operator/logout');
    assert.equal(out.status, 303);
    assert.match(cookieOf(out.res, 'bh_console_op') ?? '', /Max-Age=0/);
  });
});
