// Refusals that name the fix (docs/errors.md): a field sent at the wrong level says where it
// belongs; a registered box that is not bound says to bind it and how, while another
// application's box still looks like one that does not exist. Real server, real HTTP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type ApiClient, type TestServer } from '../testing/harness.ts';
import { placesOf } from './validation.ts';

let t: TestServer;
let a: ApiClient;
let b: ApiClient;

before(async () => {
  t = await startTestServer();
  a = (await t.createApp('fix-a')).api;
  b = (await t.createApp('fix-b')).api;
});
after(() => t.close());

test('an unknown field that the schema takes elsewhere names where it belongs', async () => {
  const d = await t.registerDevice();
  await a.post('/api/client/bind', { uuid: d.uuid, name: 'Room 4' });
  const r = await a.post('/api/scan/create', { client_uuid: d.uuid, callback_url: 'https://app.example/cb' });
  assert.equal(r.code, 10001);
  assert.equal(r.msg, "body has unknown field 'callback_url' (it belongs in body.options)");
  // A field the schema has nowhere stays a plain unknown field.
  const plain = await a.post('/api/scan/create', { client_uuid: d.uuid, colour: 1 });
  assert.equal(plain.msg, "body has unknown field 'colour'");
  // Nested: options.resolution sent at the top of a print create.
  const print = await a.post('/api/print/create', {
    client_uuid: d.uuid,
    file_type: 'pdf',
    file_url: 'https://app.example/x.pdf',
    duplex: 'SVC_DP_NONE',
  });
  assert.equal(print.code, 10001);
  assert.match(print.msg, /body has unknown field 'duplex' \(it belongs in body\.options\)/);
});

test('placesOf: every place a name is a property, through anyOf and items', () => {
  const schema = {
    properties: {
      a: { properties: { x: {} } },
      b: { anyOf: [{ properties: { x: {} } }] },
      c: { items: { properties: { x: {} } } },
    },
  };
  assert.deepEqual(placesOf(schema, 'x'), ['a', 'b', 'c']);
  assert.deepEqual(placesOf(schema, 'y'), []);
});

test('a registered box that is not bound: bind it first, and how; another application\'s box is still "no device"', async () => {
  const d = await t.registerDevice();
  const r = await a.get('/api/client/info', { uuid: d.uuid });
  assert.equal(r.code, 30002);
  assert.equal(
    r.msg,
    `device '${d.uuid}' is registered but not bound to this application: bind it first (POST /api/client/bind with {"uuid":"${d.uuid}","name":"…"}, README "Quick start")`,
  );
  const buzz = await a.post('/api/control/buzz', { client_uuid: d.uuid, buzz: [100] });
  assert.equal(buzz.msg, r.msg, 'the same for every device call');
  await a.post('/api/client/bind', { uuid: d.uuid, name: 'mine' });
  const foreign = await b.get('/api/client/info', { uuid: d.uuid });
  assert.equal(foreign.code, 30002);
  assert.equal(foreign.msg, `no device with uuid '${d.uuid}'`);
});
