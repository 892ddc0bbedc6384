// Every malformed, oversized or hostile request gets HTTP 200, the envelope, a non-zero code
// and a message that says what is wrong (docs/api.md, "Conventions"; docs/errors.md).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorCatalog } from '@boxhub/protocol';
import { ApiClient, startTestServer, type TestServer } from '../testing/harness.ts';

let t: TestServer;
let api: ApiClient;
let uuid: string;

before(async () => {
  t = await startTestServer({ env: { BOXHUB_BODY_LIMIT: '4096' } });
  api = (await t.createApp()).api;
  uuid = (await t.registerDevice()).uuid;
});
after(() => t.close());

async function expectError(r: { status: number; text: string }, code: number, msgPart: RegExp) {
  assert.equal(r.status, 200, r.text);
  const body = JSON.parse(r.text) as { code: number; msg: string; data: unknown };
  assert.deepEqual(Object.keys(body).sort(), ['code', 'data', 'msg']);
  assert.equal(body.code, code, r.text);
  assert.match(body.msg, msgPart);
  assert.equal(body.data, null);
  assert.doesNotMatch(r.text, /at .*\.ts:\d+|node_modules|Error:/, 'no stack or internals in the answer');
}

const json = { 'content-type': 'application/json' };

describe('request problems', () => {
  test('malformed JSON', async () => {
    await expectError(
      await api.raw('POST', '/api/client/bind', { body: '{"uuid": ', headers: json }),
      10002,
      /not valid JSON/,
    );
  });
  test('empty body with a JSON content type', async () => {
    await expectError(await api.raw('POST', '/api/client/bind', { body: '', headers: json }), 10002, /empty/);
  });
  test('body that is not an object', async () => {
    await expectError(
      await api.raw('POST', '/api/client/bind', { body: '[1,2]', headers: json }),
      10001,
      /body must be object/,
    );
    await expectError(await api.raw('POST', '/api/client/bind', { body: 'null', headers: json }), 10001, /body/);
  });
  test('wrong content type', async () => {
    await expectError(
      await api.raw('POST', '/api/client/bind', {
        body: 'uuid=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      10004,
      /application\/json/,
    );
    await expectError(
      await api.raw('POST', '/api/client/bind', {
        body: `{"uuid":"${uuid}","name":"a"}`,
        headers: { 'content-type': 'text/plain' },
      }),
      10004,
      /unsupported Content-Type 'text\/plain'; send application\/json/,
    );
  });
  test('oversized body', async () => {
    const big = JSON.stringify({ uuid, name: 'x'.repeat(10_000) });
    await expectError(
      await api.raw('POST', '/api/client/bind', { body: big, headers: json }),
      10003,
      /larger than the 4096 bytes/,
    );
  });
  test('unknown path and wrong method', async () => {
    await expectError(await api.raw('GET', '/api/client/nope'), 10005, /no endpoint GET \/api\/client\/nope/);
    await expectError(await api.raw('GET', '/api/client/bind'), 10006, /use POST/);
    await expectError(await api.raw('DELETE', '/api/client/info'), 10006, /use GET/);
  });
  test('prototype poisoning is refused', async () => {
    await expectError(
      await api.raw('POST', '/api/client/bind', {
        body: `{"uuid":"${uuid}","name":"a","__proto__":{"admin":true}}`,
        headers: json,
      }),
      10001,
      /forbidden property/,
    );
  });
});

describe('strict validation', () => {
  test('unknown fields are rejected, naming the field', async () => {
    const r = await api.post('/api/client/bind', { uuid, name: 'a', colour: 'red' });
    assert.equal(r.code, 10001);
    assert.match(r.msg, /unknown field 'colour'/);
  });
  test('no silent type coercion in bodies', async () => {
    const r = await api.post('/api/control/buzz', { client_uuid: uuid, buzz: ['100'], gap: '5' });
    assert.equal(r.code, 10001);
    assert.match(r.msg, /body\.buzz\.0 must be integer/);
    assert.match(r.msg, /body\.gap must be integer/);
  });
  test('missing required field', async () => {
    const r = await api.post('/api/client/bind', { name: 'a' });
    assert.equal(r.code, 10001);
    assert.match(r.msg, /missing required field 'uuid'/);
  });
  test('query strings: exact integers only, in range', async () => {
    for (const page of [
      '0',
      '1001',
      '1.5',
      'abc',
      '2abc',
      '',
      '0x1',
      '1e0',
      '+1',
      '01',
      ' 1',
      '1 ',
      '1.0',
      'Infinity',
    ]) {
      const r = await api.get('/api/client/list', { page });
      assert.equal(r.code, 10001, `page=${page}: ${r.msg}`);
    }
    assert.equal((await api.get('/api/client/list', { page: '3' })).code, 0);
    const extra = await api.get('/api/client/list', { page: 1, debug: 1 });
    assert.equal(extra.code, 10001);
    assert.match(extra.msg, /unknown field 'debug'/);
  });
  test('blank and overlong names', async () => {
    assert.match((await api.post('/api/client/bind', { uuid, name: '   ' })).msg, /name must not be blank/);
    assert.equal((await api.post('/api/client/bind', { uuid, name: 'n'.repeat(101) })).code, 10001);
    assert.equal((await api.post('/api/client/bind', { uuid: 'u'.repeat(65), name: 'a' })).code, 10001);
  });
  test('buzz bounds', async () => {
    for (const body of [
      { buzz: [] },
      { buzz: Array(11).fill(100) },
      { buzz: [0] },
      { buzz: [5001] },
      { buzz: [100], gap: -1 },
      { buzz: [100], gap: 5001 },
    ]) {
      const r = await api.post('/api/control/buzz', { client_uuid: uuid, ...body });
      assert.equal(r.code, 10001, JSON.stringify(body));
    }
  });
});

describe('authentication', () => {
  test('missing, malformed and wrong keys get 20001 before any validation', async () => {
    const anon = new ApiClient(t.url);
    await expectError(await anon.raw('GET', '/api/client/list?page=1'), 20001, /missing Authorization/);
    await expectError(
      await anon.raw('POST', '/api/client/bind', { body: '{bad', headers: { ...json, authorization: 'Basic abc' } }),
      20001,
      /Bearer/,
    );
    await expectError(
      await new ApiClient(t.url, 'bhk_wrong').raw('GET', '/api/client/list?page=1'),
      20001,
      /invalid API key/,
    );
  });
});

describe('outside the envelope', () => {
  test('/healthz, /metrics, /openapi.json and /docs', async () => {
    const anon = new ApiClient(t.url);
    const h = await anon.raw('GET', '/healthz');
    assert.equal(h.status, 200);
    assert.deepEqual(JSON.parse(h.text), { status: 'ok' });
    await api.get('/api/client/list', { page: 1 });
    const m = await anon.raw('GET', '/metrics');
    assert.match(m.text, /boxhub_api_requests_total\{route="\/api\/client\/list",code="0"\} \d+/);
    assert.match(m.text, /boxhub_api_requests_total\{route="\/api\/client\/list",code="10001"\} \d+/);
    const doc = JSON.parse((await anon.raw('GET', '/openapi.json')).text) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    assert.equal(doc.openapi, '3.1.0');
    for (const p of [
      '/api/client/get_uuid',
      '/api/client/bind',
      '/api/client/unbind',
      '/api/client/info',
      '/api/client/list',
      '/api/client/edit',
      '/api/control/buzz',
      '/api/control/reboot',
      '/api/control/head_clean',
      '/api/control/power_ink_flush',
      '/api/control/nozzle_check',
    ]) {
      assert.ok(doc.paths[p], `OpenAPI lists ${p}`);
    }
    assert.equal((await anon.raw('GET', '/docs/')).status, 200);
  });
});

test('an internal failure is logged and answered 10500 without internals', async () => {
  const t2 = await startTestServer();
  const a = await t2.createApp();
  await t2.server.db.close(); // the database goes away under the running server
  const r = await a.api.raw('GET', '/api/client/list?page=1');
  await expectError(r, errorCatalog.INTERNAL_ERROR.code, /internal error \(request id/);
  const h = await a.api.raw('GET', '/healthz');
  assert.equal(h.status, 503);
  await t2.close();
});
