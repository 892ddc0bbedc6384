// The SDK's operator resource against the real server: the operator token creates an
// application whose key then works as an application's, rotates it, and provisions a box.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestServer } from '@boxhub/server/testing/harness.ts';
import { Boxhub, BoxhubError } from '@boxhub/sdk';

test('operator: create an application, use and rotate its key, register a box', async () => {
  const token = randomBytes(24).toString('base64url');
  const server = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: token } });
  try {
    const operator = new Boxhub({ baseUrl: server.url, apiKey: token });
    const created = await operator.operator.createApp({ name: 'school' });
    const app = new Boxhub({ baseUrl: server.url, apiKey: created.api_key });
    assert.equal((await app.devices.list({ page: 1 })).total, 0);

    const keys = await operator.operator.listKeys({ app_id: created.id });
    assert.equal(keys.keys.length, 1);
    const rotated = await operator.operator.rotateKey({ key_id: keys.keys[0]!.id });
    await assert.rejects(app.devices.list({ page: 1 }), (e: unknown) => e instanceof BoxhubError && e.code === 20001);
    assert.equal(
      (await new Boxhub({ baseUrl: server.url, apiKey: rotated.api_key }).devices.list({ page: 1 })).total,
      0,
    );

    const box = await operator.operator.registerDevice({ code: 'OPSDK0001', model: 'BX-1' });
    assert.match(box.uuid, /^[0-9a-f-]{36}$/);
    assert.ok(box.secret.length >= 32);
    // The deployment's applications and boxes, as the operator sees them.
    const apps = await operator.operator.listApps({ page: 1 });
    const mine = apps.applications.find((a) => a.id === created.id);
    assert.deepEqual(mine && { name: mine.name, ess: mine.ess, active_keys: mine.active_keys, devices: mine.devices }, {
      name: 'school',
      ess: false,
      active_keys: 1,
      devices: 0,
    });
    assert.equal(apps.total, apps.applications.length);
    const boxes = await operator.operator.listDevices({ page: 1 });
    const listed = boxes.devices.find((d) => d.client.uuid === box.uuid);
    assert.deepEqual(
      listed && {
        code: listed.client.code,
        model: listed.model,
        app_id: listed.app_id,
        secret_revoked: listed.secret_revoked,
      },
      { code: 'OPSDK0001', model: 'BX-1', app_id: null, secret_revoked: false },
    );
    await operator.operator.revokeDevice({ uuid: box.uuid });
    assert.equal(
      (await operator.operator.listDevices({ page: 1 })).devices.find((d) => d.client.uuid === box.uuid)
        ?.secret_revoked,
      true,
    );
    await assert.rejects(
      operator.operator.listApps({ page: 0 }),
      (e: unknown) => e instanceof BoxhubError && e.code === 10001,
    );

    // An application key is not the operator's.
    await assert.rejects(
      app.operator.createApp({ name: 'x' }),
      (e: unknown) => e instanceof BoxhubError && e.code === 20003,
    );
    await assert.rejects(
      app.operator.listDevices({ page: 1 }),
      (e: unknown) => e instanceof BoxhubError && e.code === 20003,
    );
  } finally {
    await server.close();
  }
});
