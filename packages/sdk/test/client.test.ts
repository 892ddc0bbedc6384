// The SDK against the real server: typed results, one error class with the envelope's code,
// msg and data, and the callback log endpoints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulatedBox } from '@boxhub/agent';
import { eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import { startReceiver } from '@boxhub/server/testing/receiver.ts';
import { Boxhub, BoxhubError, ErrorCode, type Device } from '@boxhub/sdk';

test('devices and control: typed results from the envelope, errors as BoxhubError with code and msg', async () => {
  const server = await startTestServer();
  const app = await server.createApp();
  const reg = await server.registerDevice();
  const box = createSimulatedBox({
    url: server.mqttUrl,
    uuid: reg.uuid,
    secret: reg.secret,
    backoff: { baseMs: 50, maxMs: 500 },
  });
  const boxhub = new Boxhub({ baseUrl: server.url, apiKey: app.api_key });
  try {
    const { uuid } = await boxhub.devices.getUuid({ code: reg.code });
    assert.equal(uuid, reg.uuid);
    // biome-ignore lint/suspicious/noConfusingVoidType: the test is that bind resolves to void
    const bound: void = await boxhub.devices.bind({ uuid: reg.uuid, name: 'Room 4', remark: 'by the window' });
    assert.equal(bound, undefined);

    box.agent.start();
    // Online comes with the box's presence, its printer and scanner with the state it sends
    // next (docs/box-protocol.md): the test waits for both.
    const device: Device = await eventually(async () => {
      const { client } = await boxhub.devices.info({ uuid: reg.uuid });
      return client?.online && client.printer ? client : undefined;
    }, 'the simulated box online with its state');
    assert.equal(device.name, 'Room 4');
    assert.equal(device.remark, 'by the window');
    assert.equal(device.printer?.connected, true);
    assert.equal(device.scanner?.connected, true);

    await boxhub.control.buzz({ client_uuid: reg.uuid, buzz: [200, 100], gap: 50 });
    assert.deepEqual(box.buzzer.played, [{ beeps: [200, 100], gap: 50 }]);

    await boxhub.devices.edit({ uuid: reg.uuid, name: 'Room 5' });
    const page = await boxhub.devices.list({ page: 1 });
    assert.deepEqual([page.total, page.clients.map((c) => c.name)], [1, ['Room 5']]);

    // An envelope error: the code, msg and data of the answer, nothing retried.
    const again = await boxhub.devices.bind({ uuid: reg.uuid, name: 'x' }).catch((e: unknown) => e);
    assert.ok(again instanceof BoxhubError);
    assert.deepEqual(
      [again.kind, again.code, again.status, again.data, again.method, again.path],
      ['api', ErrorCode.DEVICE_ALREADY_BOUND, 200, null, 'POST', '/api/client/bind'],
    );
    assert.match(again.msg, /already bound/);
    assert.equal(again.message, `POST /api/client/bind: 30003 ${again.msg}`);

    // Bad input is the service's to judge: the SDK sends what the types allow and reports 10001.
    const tooLong = await boxhub.control
      .buzz({ client_uuid: reg.uuid, buzz: Array(11).fill(100) })
      .catch((e: unknown) => e);
    assert.ok(tooLong instanceof BoxhubError);
    assert.equal(tooLong.code, ErrorCode.INVALID_PARAMETER);
    assert.match(tooLong.msg, /buzz/);

    await box.agent.stop();
    await eventually(
      async () => (await boxhub.devices.info({ uuid: reg.uuid })).client?.online === false,
      'the box offline',
    );
    const offline = await boxhub.control.reboot({ client_uuid: reg.uuid }).catch((e: unknown) => e);
    assert.ok(offline instanceof BoxhubError);
    assert.equal(offline.code, ErrorCode.DEVICE_OFFLINE);

    await boxhub.devices.unbind({ uuid: reg.uuid });
    const gone = await boxhub.devices.info({ uuid: reg.uuid }).catch((e: unknown) => e);
    assert.ok(gone instanceof BoxhubError);
    assert.equal(gone.code, ErrorCode.DEVICE_NOT_FOUND);

    const stranger = new Boxhub({ baseUrl: server.url, apiKey: 'bhk_not-a-key' });
    const refused = await stranger.devices.list({ page: 1 }).catch((e: unknown) => e);
    assert.ok(refused instanceof BoxhubError);
    assert.equal(refused.code, ErrorCode.UNAUTHENTICATED);
  } finally {
    await box.agent.stop();
    await server.close();
  }
});

test('devices.all() walks every page of the device list', async () => {
  const server = await startTestServer();
  const app = await server.createApp();
  const boxhub = new Boxhub({ baseUrl: server.url, apiKey: app.api_key });
  try {
    // One more than a page (the list gives 100 per page).
    const uuids: string[] = [];
    for (let i = 0; i < 101; i++) {
      const d = await server.registerDevice();
      await boxhub.devices.bind({ uuid: d.uuid, name: `box ${i}` });
      uuids.push(d.uuid);
    }
    const seen: string[] = [];
    for await (const d of boxhub.devices.all()) seen.push(d.uuid!);
    assert.deepEqual(seen.sort(), uuids.sort());
  } finally {
    await server.close();
  }
});

test('callback log: test, list with attempts, replay, rotate_secret', async () => {
  const server = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  const app = await server.createApp();
  const receiver = await startReceiver();
  const boxhub = new Boxhub({ baseUrl: server.url, apiKey: app.api_key });
  try {
    const { id } = await boxhub.callbacks.test({ callback_url: receiver.url });
    const delivered = await eventually(async () => {
      const { callbacks } = await boxhub.callbacks.list({ page: 1, status: 'delivered' });
      return callbacks.find((c) => c.id === id);
    }, 'the test callback delivered');
    assert.equal(delivered.event, 'callback.test');
    assert.deepEqual(
      delivered.attempts.map((a) => a.status_code),
      [200],
    );

    await boxhub.callbacks.replay({ id });
    await eventually(() => receiver.byId(id).length === 2, 'the replayed callback');

    const rotated = await boxhub.callbacks.rotateSecret();
    assert.match(rotated.callback_secret, /^whsec_/);
    assert.notEqual(rotated.callback_secret, app.callback_secret);
    assert.ok(rotated.previous_secret_expires_at > Date.now());

    const missing = await boxhub.callbacks.replay({ id: 'no-such-callback' }).catch((e: unknown) => e);
    assert.ok(missing instanceof BoxhubError);
    assert.equal(missing.code, ErrorCode.NOT_FOUND);
  } finally {
    await receiver.close();
    await server.close();
  }
});
