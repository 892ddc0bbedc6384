// Credentials an operator can revoke (docs/configuration.md, "Credentials"): several named API keys
// per application with their last use, rotated and revoked through the operator API, and box
// secrets rotated and revoked the same way (the same through the CLI: credentials-cli.test.ts). A revoked credential stops working at once on
// every node: two server nodes share one database (and, on the external engine, one broker).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { ApiClient, engine, eventually, startTestServer, type TestServer } from '../../testing/harness.ts';

const OPERATOR = 'operator-token-0123456789abcdef';

let n1: TestServer;
let n2: TestServer;
let op: ApiClient;
before(async () => {
  const env = { BOXHUB_OPERATOR_TOKEN: OPERATOR };
  n1 = await startTestServer({ env });
  n2 = await startTestServer({ env, reuse: { dataDir: n1.dataDir, pgSchema: n1.pgSchema } });
  op = new ApiClient(n1.url, OPERATOR);
});
after(async () => {
  await n2.close();
  await n1.close();
});

const code = async (c: ApiClient) => (await c.get('/api/client/list', { page: 1 })).code;

describe('the operator API', () => {
  test('answers 20003 without the operator token, and to an application key', async () => {
    const { api_key } = await n1.createApp();
    for (const key of [undefined, 'wrong-operator-token-0123456789', api_key]) {
      const r = await new ApiClient(n1.url, key).get('/api/operator/app/key/list', { app_id: 'x' });
      assert.equal(r.code, 20003, r.msg);
    }
    const off = await startTestServer();
    try {
      const r = await new ApiClient(off.url, OPERATOR).post('/api/operator/app/create', { name: 'x' });
      assert.equal(r.code, 20003);
      assert.match(r.msg, /operator API is off; set BOXHUB_OPERATOR_TOKEN/);
    } finally {
      await off.close();
    }
  });
});

describe('API keys', () => {
  test('several named keys per application, each with its last use; list, rotate, revoke', async () => {
    const created = await op.post<{ id: string; api_key: string; key_id: string }>('/api/operator/app/create', {
      name: 'Keys School',
    });
    assert.equal(created.code, 0, created.msg);
    const appId = created.data.id;
    const second = await op.post<{ id: string; api_key: string; name: string }>('/api/operator/app/key/create', {
      app_id: appId,
      name: 'ci',
    });
    assert.equal(second.code, 0, second.msg);
    const k1 = new ApiClient(n1.url, created.data.api_key);
    const k2 = new ApiClient(n1.url, second.data.api_key);
    assert.equal(await code(k1), 0);
    assert.equal(await code(k2), 0);
    type Key = { id: string; name: string; prefix: string; last_used_at?: number; revoked_at?: number };
    const list = async () => (await op.get<{ keys: Key[] }>('/api/operator/app/key/list', { app_id: appId })).data.keys;
    const keys = await eventually(async () => {
      const ks = await list();
      return ks.every((k) => k.last_used_at) ? ks : undefined;
    }, 'last use recorded');
    assert.deepEqual(
      keys.map((k) => [k.id, k.name, k.prefix]),
      [
        [created.data.key_id, 'default', created.data.api_key.slice(0, 10)],
        [second.data.id, 'ci', second.data.api_key.slice(0, 10)],
      ],
    );

    const rotated = await op.post<{ id: string; api_key: string; name: string }>('/api/operator/app/key/rotate', {
      key_id: second.data.id,
    });
    assert.equal(rotated.data.name, 'ci');
    assert.equal(await code(k2), 20001, 'the rotated key stops at once');
    assert.equal(await code(new ApiClient(n1.url, rotated.data.api_key)), 0);
    assert.equal((await op.post('/api/operator/app/key/revoke', { key_id: created.data.key_id })).code, 0);
    assert.equal(await code(k1), 20001);
    const after = await list();
    assert.ok(after.find((k) => k.id === created.data.key_id)?.revoked_at);
    assert.ok(after.find((k) => k.id === second.data.id)?.revoked_at);
    assert.equal(after.find((k) => k.id === rotated.data.id)?.revoked_at, undefined);
    // Unknown and revoked keys are told apart; unknown applications too.
    assert.equal((await op.post('/api/operator/app/key/revoke', { key_id: 'key-nope' })).code, 20404);
    assert.match(
      (await op.post('/api/operator/app/key/revoke', { key_id: created.data.key_id })).msg,
      /revoked already/,
    );
    assert.equal((await op.post('/api/operator/app/key/create', { app_id: 'nope', name: 'x' })).code, 20404);
  });

  test('a key revoked through one node fails at once on the other, which had it in use', async () => {
    const app = await n1.createApp();
    const extra = await n1.server.services.applications.createKey(app.id, 'spare');
    const via1 = new ApiClient(n1.url, app.api_key);
    const via2 = new ApiClient(n2.url, app.api_key);
    for (let i = 0; i < 3; i++) {
      assert.equal(await code(via1), 0);
      assert.equal(await code(via2), 0);
    }
    const first = (await n1.server.services.applications.listKeys(app.id)).find((k) => k.name === 'default')!;
    assert.equal((await op.post('/api/operator/app/key/revoke', { key_id: first.id })).code, 0);
    assert.equal(await code(via2), 20001, 'node 2, right after the revocation returned on node 1');
    assert.equal(await code(via1), 20001);
    assert.equal(await code(new ApiClient(n2.url, extra.api_key)), 0, "the application's other key still works");
  });
});

describe('box secrets', () => {
  /** Logs in as a box; resolves the client, or rejects with the broker's refusal. */
  const login = (url: string, uuid: string, secret: string): Promise<MqttClient> =>
    mqtt.connectAsync(url, {
      clientId: uuid,
      username: uuid,
      password: secret,
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
  const closed = (c: MqttClient) =>
    new Promise<void>((r) => {
      if (!c.connected) r();
      else c.once('close', () => r());
    });

  test('rotated through the operator API: the old secret stops at once on every node, its session is dropped', async () => {
    const d = await n1.registerDevice();
    const on1 = await login(n1.mqttUrl, d.uuid, d.secret);
    const on2 =
      engine === 'embedded' ? await login(n2.mqttUrl, `${d.uuid}`, d.secret).catch(() => undefined) : undefined;
    const r = await op.post<{ uuid: string; secret: string }>('/api/operator/device/rotate_secret', { uuid: d.uuid });
    assert.equal(r.code, 0, r.msg);
    assert.notEqual(r.data.secret, d.secret);
    await closed(on1); // dropped by the node that rotated it (or by the shared broker)
    for (const url of new Set([n1.mqttUrl, n2.mqttUrl])) {
      await assert.rejects(
        login(url, d.uuid, d.secret),
        (e: Error & { code?: number }) => [4, 5].includes(e.code ?? -1),
        `old secret at ${url}`,
      );
      (await login(url, d.uuid, r.data.secret)).end(true);
    }
    // Node 2's own broker (embedded engine) learns of it from the database and drops its session.
    if (on2) await eventually(() => !on2.connected, 'the session on node 2 dropped', 5000);
  });

  test('revoke through the operator API; unknown boxes answer 30002', async () => {
    const d = await n1.registerDevice();
    const box = await login(n1.mqttUrl, d.uuid, d.secret);
    assert.equal((await op.post('/api/operator/device/revoke', { uuid: d.uuid })).code, 0);
    await closed(box);
    await assert.rejects(login(n1.mqttUrl, d.uuid, d.secret));
    assert.equal((await op.post('/api/operator/device/revoke', { uuid: d.uuid })).code, 0, 'revoking twice is fine');
    assert.equal((await op.post('/api/operator/device/revoke', { uuid: 'nope' })).code, 30002);
    assert.equal((await op.post('/api/operator/device/rotate_secret', { uuid: 'nope' })).code, 30002);
  });

  test('register through the operator API; a taken code is refused', async () => {
    const r = await op.post<{ uuid: string; code: string; secret: string }>('/api/operator/device/register', {
      code: 'OPREG1',
      model: 'BX-1',
    });
    assert.equal(r.code, 0, r.msg);
    (await login(n2.mqttUrl, r.data.uuid, r.data.secret)).end(true);
    const again = await op.post('/api/operator/device/register', { code: 'OPREG1', model: 'BX-1' });
    assert.equal(again.code, 10001);
    assert.match(again.msg, /already registered/);
  });
});
