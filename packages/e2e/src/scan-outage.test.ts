// Scans through outages (docs/scanning.md, "The task's life"; docs/box-protocol.md): no box event is ever lost and none
// is applied twice; a box that was power-cycled or wiped is reconciled; stop works when the box
// is away. The box reaches its broker through a TCP proxy, so the server can go away and come
// back on another port without the box noticing anything but the outage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createSimulatedBox, tempStateDir } from '@boxhub/agent';
import { type Boxhub, CallbackReceiver } from '@boxhub/sdk';
import { eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import { parseState } from '@boxhub/server/modules/devices/view.ts';
import { startReceiver } from '@boxhub/server/testing/receiver.ts';
import { startTcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';
import { rigSdk, startRig } from './fixtures.ts';

const waitForFinish = (sdk: Boxhub, client_uuid: string, scan_uuid: string, timeoutMs = 15_000) =>
  sdk.scan.waitForFinish({ client_uuid, scan_uuid }, { intervalMs: 50, timeoutMs });

test('every server node stops while a box scans: after the restart each item and scan.finish arrive exactly once', async () => {
  const rx = await startReceiver();
  const env = { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' };
  const t1 = await startTestServer({ env });
  const app = await t1.createApp('outage');
  const sdk1 = rigSdk(t1.url, app.api_key);
  const d = await t1.registerDevice();
  await sdk1.devices.bind({ uuid: d.uuid, name: 'box' });
  const broker = new URL(t1.mqttUrl);
  const proxy = await startTcpProxy(broker.hostname, Number(broker.port));
  const box = createSimulatedBox({
    url: proxy.url,
    uuid: d.uuid,
    secret: d.secret,
    scanner: 'sim:?ppm=120',
    backoff: { baseMs: 50, maxMs: 500 },
    uploadBackoff: { baseMs: 50, maxMs: 500 },
    outboxResendMs: 1000,
  });
  let t2: Awaited<ReturnType<typeof startTestServer>> | undefined;
  try {
    await box.agent.start();
    await eventually(async () => (await sdk1.devices.info({ uuid: d.uuid })).client?.online, 'box online');
    // 6 sheets at 120 pages a minute: the scan goes on for seconds while the server is away.
    box.scanner.load(6);
    await eventually(
      async () => parseState((await t1.server.repos.devices.findByUuid(d.uuid))!)?.scanner.adf_loaded === true,
      'paper seen',
    );
    const uuid = (
      await sdk1.scan.create({
        client_uuid: d.uuid,
        options: { callback_url: rx.url, duplex: false, continuous: true, continuous_wait: 3 },
      })
    ).uuid!;
    await eventually(() => box.scanner.sheets < 6, 'scanning started');

    // Every node goes away (and with it the embedded broker; through the proxy the box loses
    // the external broker the same way). The box scans on, and a second batch of paper comes.
    proxy.down(true);
    await t1.close({ keepData: true });
    box.scanner.load(2);
    await eventually(() => box.scanner.sheets === 0, 'the box scanned everything while the server was down', 30_000);

    t2 = await startTestServer({ env, reuse: { dataDir: t1.dataDir, pgSchema: t1.pgSchema } });
    const b2 = new URL(t2.mqttUrl);
    proxy.retarget(b2.hostname, Number(b2.port));
    proxy.down(false);
    const done = await waitForFinish(rigSdk(t2.url, app.api_key), d.uuid, uuid, 60_000); // the scan finishes after the restart
    assert.equal(done.error_code, 0);
    assert.equal(done.total_pages, 8, 'every page scanned reached the server');
    await eventually(
      () => rx.received.some((r) => JSON.parse(r.body).event === 'scan.finish'),
      'scan.finish delivered',
    );
    await t2.server.jobRunner.quiet();
    const receiver = new CallbackReceiver({ secrets: app.callback_secret });
    const events = rx.received.map((r) => receiver.receive(r));
    const items = events.flatMap((e) => (e.type === 'scan.item_data' ? [e.body.item_id] : []));
    assert.equal(events.filter((e) => e.type === 'scan.finish').length, 1, 'one scan.finish');
    assert.deepEqual(items, [...new Set(items)], 'each item once');
    assert.equal(items.length, done.item_size, 'a callback for every item recorded');
  } finally {
    await box.agent.stop();
    await t2?.close();
    await proxy.close();
    await rx.close();
  }
});

test('a box power-cycled mid-scan delivers the items it had made and reports the scan interrupted', async () => {
  const rig = await startRig();
  const stateDir = tempStateDir();
  try {
    const box = await rig.box({ stateDir, scanner: 'sim:?ppm=240' });
    await rig.load(box, 40);
    const uuid = (await rig.sdk.scan.create({ client_uuid: box.uuid, options: { duplex: false } })).uuid!;
    await eventually(() => box.scanner.sheets <= 36, 'a few sheets scanned');
    await box.agent.stop(); // the agent goes down mid-batch (the journal stays on its disk)
    const again = await rig.box({ stateDir, device: { uuid: box.uuid, secret: box.secret } });
    void again;
    const done = await waitForFinish(rig.sdk, box.uuid, uuid); // finished after the restart
    assert.equal(done.error_code, 2205);
    assert.ok(done.total_pages >= 1, 'the pages scanned before the restart are kept');
  } finally {
    await rig.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test('a box whose disk was wiped no longer knows its scan: the server ends it (2202) and releases the lock', async () => {
  const rig = await startRig();
  try {
    const box = await rig.box();
    await rig.load(box, 1);
    const uuid = (
      await rig.sdk.scan.create({ client_uuid: box.uuid, options: { continuous: true, continuous_wait: 0 } })
    ).uuid!;
    await box.agent.stop();
    // Same device, a new empty disk: a new boot that lists no job.
    await rig.box({ device: { uuid: box.uuid, secret: box.secret } });
    const done = await waitForFinish(rig.sdk, box.uuid, uuid); // the lost scan is ended
    assert.equal(done.error_code, 2202);
    assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: false });
  } finally {
    await rig.close();
  }
});

test('stop while the box is offline ends the task at once (2201); the box drops it when it is back', async () => {
  const rig = await startRig();
  const broker = new URL(rig.t.mqttUrl);
  const proxy = await startTcpProxy(broker.hostname, Number(broker.port));
  try {
    const box = await rig.box({ url: proxy.url, keepaliveSec: 5 });
    await rig.load(box, 1);
    const uuid = (
      await rig.sdk.scan.create({ client_uuid: box.uuid, options: { continuous: true, continuous_wait: 0 } })
    ).uuid!;
    proxy.down(true);
    await rig.online(box.uuid, false);
    await rig.sdk.scan.stop({ client_uuid: box.uuid }); // resolves only on code 0
    const i = await rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: uuid });
    assert.equal(i.finished, true);
    assert.equal(i.error_code, 2201);
    proxy.down(false);
    // The box reports the job it still holds; the server tells it to stop; it forgets the job.
    await eventually(() => box.agent.jobs.states().length === 0, 'the box dropped the stopped scan');
  } finally {
    await rig.close();
    await proxy.close();
  }
});
