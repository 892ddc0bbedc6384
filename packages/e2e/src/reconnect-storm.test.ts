// Reconnect storms at small scale (docs/box-protocol.md, "Reconnect"; the 10,000-box figures
// are `npm run bench reconnect-storm`): a box the node refuses for now (CONNACK 3) backs off and
// gets in later; many boxes come back after every server node restarted, through the node's
// admission control, and no box event is lost or applied twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoxLink, createSimulatedBox, type SimulatedBox } from '@boxhub/agent';
import { CallbackReceiver } from '@boxhub/sdk';
import { EmbeddedBroker } from '@boxhub/server/broker/embedded-broker.ts';
import { engine, eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import { ManualClock } from '@boxhub/server/testing/manual-clock.ts';
import { parseState } from '@boxhub/server/modules/devices/view.ts';
import { startReceiver } from '@boxhub/server/testing/receiver.ts';
import { startTcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';
import { rigSdk } from './fixtures.ts';

test('a box the node refuses for now (CONNACK 3) backs off, retrying, and gets in once there is room', async () => {
  const clock = new ManualClock(Date.now());
  const broker = await EmbeddedBroker.start({
    host: '127.0.0.1',
    port: 0,
    connectLimit: { max: 0, windowMs: 10_000 },
    clock,
    admission: { concurrency: 0, rate: 1, burst: 1 },
    authenticate: async () => true,
  });
  const links: BoxLink[] = [];
  try {
    const link = (uuid: string) => {
      const l = new BoxLink({
        url: broker.listenUrl!,
        uuid,
        secret: 's',
        keepaliveSec: 30,
        backoff: { baseMs: 100, maxMs: 400 },
      });
      links.push(l);
      l.start();
      return l;
    };
    const first = link('box-first');
    await eventually(() => first.connected, 'the first box takes the only token');
    const second = link('box-second');
    const busy: string[] = [];
    second.on('busy', (reason) => busy.push(reason));
    second.on('refused', () => assert.fail('a busy node is not a refusal of the credentials'));
    await eventually(() => busy.length >= 3, 'refused again on each retry while the bucket is empty');
    assert.equal(second.connected, false);
    assert.equal(second.refusal, undefined, 'the link keeps going');
    assert.equal(busy[0], 'server unavailable (CONNACK 3)');
    clock.advance(1000);
    await eventually(() => second.connected, 'in at the next retry once a token is back');
  } finally {
    for (const l of links) await l.stop();
    await broker.close();
  }
});

test('many boxes come back after the server restarts, through admission control, and no event is lost or applied twice', async () => {
  const BOXES = 40;
  const SCANNERS = 3;
  const SHEETS = 6;
  const rx = await startReceiver();
  // Low limits, so that the embedded broker refuses some of the returning boxes: 40 boxes
  // retrying within a second or so against 5 logins a second (burst 2) are refused whatever
  // the machine's pace (at 20 a second a loaded machine took them slower than that, refusing
  // none), and all are back in about 8 s. At most 4 wait their turn, 300 ms each, so most of
  // those past the rate are refused rather than queued.
  const env = {
    BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
    BOXHUB_MQTT_ADMIT_CONCURRENCY: '2',
    BOXHUB_MQTT_ADMIT_RATE: '5',
    BOXHUB_MQTT_ADMIT_BURST: '2',
    BOXHUB_MQTT_ADMIT_WAIT_MS: '300',
    BOXHUB_MQTT_ADMIT_QUEUE: '4',
  };
  const t1 = await startTestServer({ env });
  const app = await t1.createApp('storm');
  const sdk1 = rigSdk(t1.url, app.api_key);
  const broker = new URL(t1.mqttUrl);
  const proxy = await startTcpProxy(broker.hostname, Number(broker.port));
  const boxes: SimulatedBox[] = [];
  let t2: Awaited<ReturnType<typeof startTestServer>> | undefined;
  try {
    for (let i = 0; i < BOXES; i++) {
      const d = await t1.registerDevice();
      await sdk1.devices.bind({ uuid: d.uuid, name: `box ${i}` });
      boxes.push(
        createSimulatedBox({
          url: proxy.url,
          uuid: d.uuid,
          secret: d.secret,
          backoff: { baseMs: 50, maxMs: 1000, stableMs: 1000 },
          ...(i < SCANNERS
            ? { scanner: 'sim:?ppm=120', uploadBackoff: { baseMs: 50, maxMs: 500 }, outboxResendMs: 1000 }
            : {}),
        }),
      );
    }
    await Promise.all(boxes.map((b) => b.agent.start()));
    await eventually(() => boxes.every((b) => b.agent.link.connected), 'every box online', 30_000);
    const scanners = boxes.slice(0, SCANNERS);
    for (const b of scanners) b.scanner.load(SHEETS);
    await eventually(async () => {
      for (const b of scanners)
        if (parseState((await t1.server.repos.devices.findByUuid(b.agent.uuid))!)?.scanner.adf_loaded !== true)
          return false;
      return true;
    }, 'paper seen');
    const scans = [];
    for (const b of scanners)
      scans.push({
        box: b,
        uuid: (await sdk1.scan.create({ client_uuid: b.agent.uuid, options: { callback_url: rx.url, duplex: false } }))
          .uuid!,
      });
    await eventually(() => scanners.every((b) => b.scanner.sheets < SHEETS), 'scanning started');

    let busy = 0;
    for (const b of boxes)
      b.agent.link.on('busy', () => {
        busy++;
      });
    const lost = Date.now();
    proxy.down(true);
    await t1.close({ keepData: true });
    t2 = await startTestServer({ env, reuse: { dataDir: t1.dataDir, pgSchema: t1.pgSchema } });
    const b2 = new URL(t2.mqttUrl);
    proxy.retarget(b2.hostname, Number(b2.port));
    proxy.down(false);
    const server2 = t2.server;
    await eventually(
      async () => {
        for (const b of boxes) {
          const row = await server2.repos.devices.findByUuid(b.agent.uuid);
          if (!row?.online || (row.last_connect_at ?? 0) < lost) return false;
        }
        return true;
      },
      'every box back online on the new server',
      60_000,
    );
    if (engine === 'embedded')
      assert.ok(busy > 0, 'the new node refused some returning boxes for now (admission control)');

    const sdk2 = rigSdk(t2.url, app.api_key);
    const receiver = new CallbackReceiver({ secrets: app.callback_secret });
    for (const s of scans) {
      const done = await sdk2.scan.waitForFinish(
        { client_uuid: s.box.agent.uuid, scan_uuid: s.uuid },
        { intervalMs: 50, timeoutMs: 60_000 },
      );
      assert.equal(done.error_code, 0);
      assert.equal(done.total_pages, SHEETS, 'every page once');
      await eventually(
        () =>
          rx.received.some((r) => {
            const b = JSON.parse(r.body) as { event?: string; uuid?: string };
            return b.event === 'scan.finish' && b.uuid === s.uuid;
          }),
        'scan.finish delivered',
      );
      const events = rx.received
        .map((r) => receiver.receive(r))
        .filter((e) => (e.body as { uuid?: string }).uuid === s.uuid);
      const items = new Map<number, Set<string>>();
      for (const e of events)
        if (e.type === 'scan.item_data')
          (items.get(e.body.item_id) ?? items.set(e.body.item_id, new Set()).get(e.body.item_id)!).add(e.id);
      assert.deepEqual(
        [...items.keys()].sort((a, b) => a - b),
        Array.from({ length: done.item_size }, (_, i) => i + 1),
        'every item delivered, numbered without gaps',
      );
      for (const [n, ids] of items) assert.equal(ids.size, 1, `item ${n} applied once (one callback id)`);
      assert.equal(new Set(events.filter((e) => e.type === 'scan.finish').map((e) => e.id)).size, 1, 'one scan.finish');
    }
  } finally {
    await Promise.all(boxes.map((b) => b.agent.stop()));
    await t2?.close();
    await proxy.close();
    await rx.close();
  }
});
