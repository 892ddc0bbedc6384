// Device binding and management (docs/api.md, "Device binding", "Devices"), including that
// an application never sees another's devices.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestServer, type ApiClient, type TestServer } from '../../testing/harness.ts';

let t: TestServer;
let a: ApiClient;
let b: ApiClient;

before(async () => {
  t = await startTestServer();
  a = (await t.createApp('school-a')).api;
  b = (await t.createApp('school-b')).api;
});
after(() => t.close());

describe('binding state machine', () => {
  test('get_uuid → bind → info → edit → unbind → bind again', async () => {
    const d = await t.registerDevice();
    assert.deepEqual((await a.get('/api/client/get_uuid', { code: d.code })).data, { uuid: d.uuid });
    // Unbound: not visible to anyone yet.
    assert.equal((await a.get('/api/client/info', { uuid: d.uuid })).code, 30002);

    assert.deepEqual(await a.post('/api/client/bind', { uuid: d.uuid, name: 'Room 1', remark: 'by the door' }), {
      code: 0,
      msg: 'success',
      data: null,
    });
    const info = await a.get<{ client: Record<string, unknown> }>('/api/client/info', { uuid: d.uuid });
    assert.equal(info.code, 0);
    assert.equal(info.data.client.name, 'Room 1');
    assert.equal(info.data.client.remark, 'by the door');
    assert.equal(info.data.client.code, d.code);
    assert.equal(info.data.client.online, false);
    assert.equal(typeof info.data.client.active_at, 'number');
    assert.ok(Math.abs((info.data.client.active_at as number) - Date.now()) < 60_000, 'active_at is Unix ms');
    // get_uuid still works for the application that bound it.
    assert.equal((await a.get('/api/client/get_uuid', { code: d.code })).code, 0);

    assert.equal((await a.post('/api/client/edit', { uuid: d.uuid, name: 'Room 2' })).code, 0);
    let c = (await a.get<{ client: Record<string, unknown> }>('/api/client/info', { uuid: d.uuid })).data.client;
    assert.equal(c.name, 'Room 2');
    assert.equal(c.remark, 'by the door', 'an omitted remark is left as it was');
    assert.equal((await a.post('/api/client/edit', { uuid: d.uuid, name: 'Room 2', remark: '' })).code, 0);
    c = (await a.get<{ client: Record<string, unknown> }>('/api/client/info', { uuid: d.uuid })).data.client;
    assert.equal(c.remark, '');

    assert.equal((await a.post('/api/client/unbind', { uuid: d.uuid })).code, 0);
    assert.equal((await a.get('/api/client/info', { uuid: d.uuid })).code, 30002);
    assert.equal((await a.post('/api/client/unbind', { uuid: d.uuid })).code, 30002, 'unbinding twice');
    // Name and settings are gone; it can be bound again, by anyone.
    assert.equal((await b.post('/api/client/bind', { uuid: d.uuid, name: 'B room' })).code, 0);
    const again = (await b.get<{ client: Record<string, unknown> }>('/api/client/info', { uuid: d.uuid })).data.client;
    assert.equal(again.name, 'B room');
    assert.equal(again.remark, undefined);
  });

  test('a bound device answers 30003 to bind and get_uuid', async () => {
    const d = await t.registerDevice();
    assert.equal((await a.post('/api/client/bind', { uuid: d.uuid, name: 'x' })).code, 0);
    const self = await a.post('/api/client/bind', { uuid: d.uuid, name: 'y' });
    assert.equal(self.code, 30003);
    assert.match(self.msg, /already bound by this application/);
    const other = await b.post('/api/client/bind', { uuid: d.uuid, name: 'z' });
    assert.equal(other.code, 30003);
    assert.equal((await b.get('/api/client/get_uuid', { code: d.code })).code, 30003);
    assert.equal(
      (await a.get<{ client: { name: string } }>('/api/client/info', { uuid: d.uuid })).data.client.name,
      'x',
      'the failed binds changed nothing',
    );
  });

  test('unknown devices answer 30002', async () => {
    assert.equal((await a.get('/api/client/get_uuid', { code: 'NOPE' })).code, 30002);
    assert.equal((await a.post('/api/client/bind', { uuid: 'no-such-uuid', name: 'x' })).code, 30002);
    assert.equal((await a.post('/api/client/unbind', { uuid: 'no-such-uuid' })).code, 30002);
    assert.equal((await a.post('/api/client/edit', { uuid: 'no-such-uuid', name: 'x' })).code, 30002);
  });

  test('two applications racing to bind one device: exactly one wins', async () => {
    const d = await t.registerDevice();
    const results = await Promise.all(
      [a, b, a, b].map((c, i) => c.post('/api/client/bind', { uuid: d.uuid, name: `n${i}` })),
    );
    assert.equal(results.filter((r) => r.code === 0).length, 1);
    assert.equal(results.filter((r) => r.code === 30003).length, 3);
  });
});

describe('isolation between applications', () => {
  test("another application's device looks exactly like one that does not exist", async () => {
    const d = await t.registerDevice();
    await a.post('/api/client/bind', { uuid: d.uuid, name: 'mine' });
    const missing = await b.get('/api/client/info', { uuid: 'no-such-uuid' });
    const foreign = await b.get('/api/client/info', { uuid: d.uuid });
    assert.equal(foreign.code, missing.code);
    assert.equal(foreign.data, null);
    assert.equal((await b.post('/api/client/edit', { uuid: d.uuid, name: 'stolen' })).code, 30002);
    assert.equal((await b.post('/api/client/unbind', { uuid: d.uuid })).code, 30002);
    assert.equal((await b.post('/api/control/buzz', { client_uuid: d.uuid, buzz: [100] })).code, 30002);
    assert.equal((await b.post('/api/control/reboot', { client_uuid: d.uuid })).code, 30002);
    const list = await b.get<{ clients: { uuid: string }[] }>('/api/client/list', { page: 1 });
    assert.ok(!list.data.clients.some((c) => c.uuid === d.uuid));
    assert.equal(
      (await a.get<{ client: { name: string } }>('/api/client/info', { uuid: d.uuid })).data.client.name,
      'mine',
    );
  });
});

describe('list', () => {
  test('pages of 100 with the total, in binding order', async () => {
    const own = await t.createApp('big');
    const uuids: string[] = [];
    for (let i = 0; i < 205; i++) {
      const d = await t.registerDevice();
      assert.equal((await own.api.post('/api/client/bind', { uuid: d.uuid, name: `box ${i}` })).code, 0);
      uuids.push(d.uuid);
    }
    const seen: string[] = [];
    for (const page of [1, 2, 3]) {
      const r = await own.api.get<{
        page: number;
        page_size: number;
        total: number;
        clients: { uuid: string; name: string }[];
      }>('/api/client/list', { page });
      assert.equal(r.code, 0);
      assert.equal(r.data.page, page);
      assert.equal(r.data.page_size, 100);
      assert.equal(r.data.total, 205);
      assert.equal(r.data.clients.length, page < 3 ? 100 : 5);
      seen.push(...r.data.clients.map((c) => c.uuid));
    }
    assert.deepEqual(new Set(seen), new Set(uuids));
    assert.equal(seen.length, 205);
    const empty = await own.api.get<{ clients: unknown[]; total: number }>('/api/client/list', { page: 4 });
    assert.deepEqual(empty.data.clients, []);
    assert.equal(empty.data.total, 205);
  });
});

describe('registration', () => {
  test('registering one code concurrently: one wins, the others are told the code is taken', async () => {
    const code = `RACE${Date.now()}`;
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => t.server.registerDevice({ code, model: 'BX-1' })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const r of results) {
      if (r.status === 'fulfilled') continue;
      const e = r.reason as { code?: number; message?: string };
      assert.equal(e.code, 10001, String(e.message));
      assert.match(String(e.message), new RegExp(`a device with code '${code}' is already registered`));
    }
    assert.equal(
      (await t.server.repos.devices.findByCode(code))?.uuid,
      (won[0] as PromiseFulfilledResult<{ uuid: string }>).value.uuid,
    );
  });

  test('a box whose broker login cannot be made is not registered at all', async () => {
    const code = `FAIL${Date.now()}`;
    await assert.rejects(
      t.server.services.devices.register({ code, model: 'BX-1' }, async () => {
        throw new Error('broker said no');
      }),
      /broker said no/,
    );
    assert.equal(await t.server.repos.devices.findByCode(code), undefined);
    // The code is free again for a retry.
    const again = await t.server.services.devices.register({ code, model: 'BX-1' });
    assert.equal(again.code, code);
  });
});

describe('the device lookup cache (SQLite)', () => {
  // findBound keeps rows on SQLite (modules/devices/repository.ts): what another process writes
  // to the same database file must show at once, as must this server's own writes.
  test('a change another connection commits to the file shows in the next info; so does a state report', async () => {
    if (t.server.db.dialect !== 'sqlite') {
      // PostgreSQL: no cache; other nodes' writes show because every lookup reads the table.
      assert.equal(t.server.db.dataVersion, undefined);
      return;
    }
    const d = await t.registerDevice();
    assert.equal((await a.post('/api/client/bind', { uuid: d.uuid, name: 'Room 7' })).code, 0);
    const name = async () =>
      (await a.get<{ client: { name?: string; online: boolean } }>('/api/client/info', { uuid: d.uuid })).data.client;
    assert.equal((await name()).name, 'Room 7');
    assert.equal((await name()).name, 'Room 7', 'a second lookup (served from the cache)');
    const { default: SQLite } = await import('better-sqlite3');
    const other = new SQLite(join(t.dataDir, 'boxhub.sqlite'));
    try {
      other.prepare('UPDATE devices SET name = ?, online = 1 WHERE uuid = ?').run('Room 8', d.uuid);
    } finally {
      other.close();
    }
    const seen = await name();
    assert.equal(seen.name, 'Room 8');
    assert.equal(seen.online, true);
    // Another application still cannot see it, cached or not.
    assert.equal((await b.get('/api/client/info', { uuid: d.uuid })).code, 30002);
    assert.equal((await a.post('/api/client/unbind', { uuid: d.uuid })).code, 0);
    assert.equal((await a.get('/api/client/info', { uuid: d.uuid })).code, 30002, 'an unbind shows at once');
  });
});

describe('state reports', () => {
  test('the same state reported again writes nothing (state_at is when it changed); a new one is stored', async () => {
    const d = await t.registerDevice();
    const devices = t.server.repos.devices;
    const row = async () => (await devices.findByUuid(d.uuid))!;
    await devices.saveState(d.uuid, '{"v":1}', 1000);
    assert.deepEqual([(await row()).state, (await row()).state_at], ['{"v":1}', 1000]);
    await devices.saveState(d.uuid, '{"v":1}', 2000);
    assert.deepEqual([(await row()).state, (await row()).state_at], ['{"v":1}', 1000], 'unchanged: not rewritten');
    await devices.saveState(d.uuid, '{"v":2}', 3000);
    assert.deepEqual([(await row()).state, (await row()).state_at], ['{"v":2}', 3000]);
  });
});
