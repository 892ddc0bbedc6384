// ExternalBroker against a real external broker (the scale-out pass: BOXHUB_TEST_ENGINE=external,
// Mosquitto from scripts/ci/start-mosquitto.sh): provisioning over dynsec, shared subscriptions
// and what happens after the server's own connection drops. The broker-independent parts run in
// both passes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import mqtt from 'mqtt';
import { topics } from '@boxhub/protocol';
import { loadConfig } from '../config.ts';
import { engine, eventually, startTestServer, type TestServer } from '../testing/harness.ts';
import { mayPublish, maySubscribe } from './device-acl.ts';
import { deviceAcls, ExternalBroker, parseMqttUrl } from './external-broker.ts';
import { provisionOnBroker } from './provision.ts';
import { startTcpProxy, type TcpProxy } from '../testing/tcp-proxy.ts';

describe('external broker adapter (any engine)', () => {
  test('dynsec ACLs of a box say what device-acl.ts says for the embedded broker', () => {
    const uuid = 'b0x-1';
    const acls = deviceAcls(uuid);
    const pub = acls.filter((a) => a.acltype === 'publishClientSend').map((a) => a.topic);
    const sub = acls.filter((a) => a.acltype.startsWith('subscribe')).map((a) => a.topic);
    for (const t of pub) assert.ok(mayPublish(uuid, t.replace('+', 'node1')), t);
    for (const t of sub) assert.ok(maySubscribe(uuid, t), t);
    assert.deepEqual(sub, [topics.cmd(uuid)]);
    assert.deepEqual(pub.sort(), [
      'box/b0x-1/ack/+',
      'box/b0x-1/event',
      'box/b0x-1/presence',
      'box/b0x-1/req',
      'box/b0x-1/state',
    ]);
    assert.ok(acls.every((a) => a.allow));
  });

  test('MQTT_URL ?provision= is read and stripped; anything else is refused', () => {
    assert.deepEqual(parseMqttUrl('mqtt://u:p@h:1883'), { url: 'mqtt://u:p@h:1883', provision: 'dynsec' });
    assert.deepEqual(parseMqttUrl('mqtt://u:p@h:1883?provision=none'), { url: 'mqtt://u:p@h:1883', provision: 'none' });
    assert.throws(() => parseMqttUrl('mqtt://h?provision=emqx'), /provision must be dynsec or none/);
  });

  test('without MQTT_URL the CLI path provisions nothing on a broker: the embedded broker reads the database', async () => {
    const t = await startTestServer({ env: { MQTT_URL: '' } }); // the embedded broker, whatever the engine
    try {
      let provisioned = 0;
      const d = await t.server.services.devices.register(
        { code: `CLI${randomBytes(4).toString('hex')}`, model: 'BX-1' },
        async (x) => {
          await provisionOnBroker(loadConfig({ BOXHUB_DATA_DIR: t.dataDir }), x.uuid, x.secret);
          provisioned++;
        },
      );
      assert.equal(provisioned, 1);
      const c = await mqtt.connectAsync(t.mqttUrl, {
        clientId: d.uuid,
        username: d.uuid,
        password: d.secret,
        protocolVersion: 4,
        reconnectPeriod: 0,
      });
      assert.equal(c.connected, true, 'the box logs in with the secret from the database row alone');
      await c.endAsync();
    } finally {
      await t.close();
    }
  });

  test('a refusing or silent broker fails the connect instead of hanging', async () => {
    // Refusing: a host whose broker is gone answers every connection with a reset. The proxy
    // keeps its port, so no other process can be listening there by chance.
    const gone = await startTcpProxy('127.0.0.1', 9);
    gone.down(true);
    try {
      await assert.rejects(
        ExternalBroker.connect(gone.url, 'n', { connectTimeoutMs: 60_000 }),
        /could not reach the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+: .*ECONNRESET/,
      );
    } finally {
      await gone.close();
    }
    // Silent: accepts TCP and never answers the CONNECT; the connect timeout ends the wait.
    const held: Socket[] = [];
    const silent = createServer((c) => {
      held.push(c);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as { port: number }).port;
      await assert.rejects(
        ExternalBroker.connect(`mqtt://127.0.0.1:${port}`, 'n', { connectTimeoutMs: 800 }),
        /could not reach the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+ within 800 ms/,
      );
    } finally {
      for (const c of held) c.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

/** A TCP proxy between the server and the broker (testing/tcp-proxy.ts); `url` carries the server's login. */
async function proxy(target: URL): Promise<TcpProxy & { url: string }> {
  const p = await startTcpProxy(target.hostname, Number(target.port || 1883));
  const via = new URL(target.toString());
  via.hostname = '127.0.0.1';
  via.port = String(p.port);
  return Object.assign(p, { url: via.toString() });
}

if (engine === 'external') {
  describe('external broker: provisioning and reconnection (Mosquitto + dynsec)', () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer();
    });
    after(() => t.close());

    const login = (uuid: string, secret: string) =>
      new Promise<void>((resolve, reject) => {
        const c = mqtt.connect(t.mqttUrl, {
          clientId: uuid,
          username: uuid,
          password: secret,
          protocolVersion: 4,
          reconnectPeriod: 0,
          connectTimeout: 5000,
        });
        c.once('connect', () => {
          c.end(true);
          resolve();
        });
        c.once('error', (e) => {
          c.end(true);
          reject(e);
        });
      });

    test('provisioning a box again replaces its secret; the old one stops working', async () => {
      const d = await t.registerDevice();
      await login(d.uuid, d.secret);
      const fresh = randomBytes(16).toString('hex');
      await t.server.broker.provisionDevice!(d.uuid, fresh);
      await assert.rejects(login(d.uuid, d.secret));
      await login(d.uuid, fresh);
    });

    test('provisionOnBroker (the CLI path) creates a working login next to a running server', async () => {
      const uuid = `cli-${randomBytes(6).toString('hex')}`;
      const secret = randomBytes(16).toString('hex');
      await provisionOnBroker(
        loadConfig({ MQTT_URL: process.env.BOXHUB_TEST_MQTT_URL!, BOXHUB_NODE_ID: t.server.config.nodeId }),
        uuid,
        secret,
      );
      await login(uuid, secret);
      // Same node id, own client id: the server's connection was not kicked.
      assert.equal((t.server.broker as ExternalBroker).reconnects, 0);
    });

    test('after the server connection drops, mqtt.js renews the shared subscriptions and acks still arrive', async () => {
      const p = await proxy(new URL(process.env.BOXHUB_TEST_MQTT_URL!));
      const s = await startTestServer({ env: { MQTT_URL: p.url } });
      try {
        const d = await s.registerDevice();
        // Straight to the broker: only the server's connection goes through the proxy.
        const direct = new URL(process.env.BOXHUB_TEST_MQTT_URL!);
        const box = mqtt.connect(`${direct.protocol}//${direct.host}`, {
          clientId: d.uuid,
          username: d.uuid,
          password: d.secret,
          protocolVersion: 4,
          reconnectPeriod: 0,
        });
        await new Promise<void>((r, j) => {
          box.once('connect', () => r());
          box.once('error', j);
        });
        await box.subscribeAsync(topics.cmd(d.uuid), { qos: 1 });
        box.on('message', (_t, payload) => {
          const c = JSON.parse(payload.toString()) as { id: string; reply_to: string };
          // Fire and forget; a publish still waiting for its PUBACK when the test ends the box
          // is rejected with "Connection closed", which is not this test's concern.
          box
            .publishAsync(topics.ack(d.uuid, c.reply_to), JSON.stringify({ v: 1, id: c.id, ok: true }), { qos: 1 })
            .catch(() => undefined);
        });
        const online = (session: string) =>
          box.publishAsync(topics.presence(d.uuid), JSON.stringify({ v: 1, online: true, session }), { qos: 1 });
        await online('s1');
        await eventually(
          async () => (await s.server.repos.devices.findByUuid(d.uuid))?.session === 's1',
          'presence before the drop',
        );
        const ext = s.server.broker as ExternalBroker;
        p.cut();
        await eventually(() => ext.reconnects >= 1 && ext.connected, 'server reconnected', 10_000);
        // Subscriptions are renewed right after the CONNACK; poll until a new message gets through.
        let n = 0;
        await eventually(
          async () => {
            await online(`s2-${++n}`);
            return (await s.server.repos.devices.findByUuid(d.uuid))?.session?.startsWith('s2-');
          },
          'presence after the reconnect (shared subscription renewed)',
          10_000,
        );
        assert.equal(
          (await s.server.gateway.command(d.uuid, 'buzz', { buzz: [10], gap: 0 })).ok,
          true,
          'ack subscription renewed',
        );
        await box.endAsync();
      } finally {
        await s.close();
        await p.close();
      }
    });

    test('readRetained hands over every retained message on its filter before it resolves, and only those', async () => {
      const ext = t.server.broker as ExternalBroker;
      const prefix = `box/rt-${randomBytes(4).toString('hex')}`;
      const pub = await mqtt.connectAsync(process.env.BOXHUB_TEST_MQTT_URL!, {
        protocolVersion: 5,
        reconnectPeriod: 0,
      });
      try {
        const n = 300;
        for (let i = 0; i < n; i++)
          await pub.publishAsync(`${prefix}/${i}/presence`, `m${i}`, { qos: 1, retain: true });
        await pub.publishAsync(`${prefix}/x/other`, 'not on the filter', { qos: 1, retain: true });
        const got: string[] = [];
        await ext.readRetained(`${prefix}/+/presence`, (_t, p) => got.push(p.toString()));
        assert.equal(got.length, n);
        assert.deepEqual(new Set(got), new Set(Array.from({ length: n }, (_, i) => `m${i}`)));
        // The read's subscription is gone: a live message on the filter reaches no one.
        const later: string[] = [];
        await ext.readRetained(`${prefix}/none/presence`, (_t, p) => later.push(p.toString()));
        assert.deepEqual(later, []);
      } finally {
        for (let i = 0; i < 300; i++) await pub.publishAsync(`${prefix}/${i}/presence`, '', { qos: 1, retain: true });
        await pub.publishAsync(`${prefix}/x/other`, '', { qos: 1, retain: true });
        await pub.endAsync();
      }
    });

    test('a box that reports a state and leaves while the server is cut off from the broker: once the server is back it is offline with that state (retained messages)', async () => {
      const p = await proxy(new URL(process.env.BOXHUB_TEST_MQTT_URL!));
      const s = await startTestServer({ env: { MQTT_URL: p.url } });
      try {
        const d = await s.registerDevice();
        const direct = new URL(process.env.BOXHUB_TEST_MQTT_URL!);
        const will = {
          topic: topics.presence(d.uuid),
          payload: Buffer.from(JSON.stringify({ v: 1, online: false, session: 'w1' })),
          qos: 1 as const,
          retain: true,
        };
        const box = await mqtt.connectAsync(`${direct.protocol}//${direct.host}`, {
          clientId: d.uuid,
          username: d.uuid,
          password: d.secret,
          protocolVersion: 4,
          reconnectPeriod: 0,
          will,
        });
        await box.publishAsync(topics.presence(d.uuid), JSON.stringify({ v: 1, online: true, session: 'w1' }), {
          qos: 1,
          retain: true,
        });
        await eventually(
          async () => (await s.server.repos.devices.findByUuid(d.uuid))?.online === 1,
          'online before the cut',
        );
        const ext = s.server.broker as ExternalBroker;
        p.down(true);
        await eventually(() => !ext.connected, 'the server lost the broker', 10_000);
        // While no node of this deployment listens, the printer runs out of paper (a retained
        // state) and then the box vanishes (its socket closes: the broker publishes and retains
        // its will): both reach nobody live.
        const paperOut = {
          v: 1,
          at: Date.now(),
          model: 'PAPER-OUT',
          printer: { connected: true, supported: true, error_code: 5 },
          scanner: { connected: false, supported: false },
        };
        await box.publishAsync(topics.state(d.uuid), JSON.stringify(paperOut), { qos: 1, retain: true });
        (box.stream as Socket).destroy();
        await eventually(
          async () => {
            const spy = await mqtt.connectAsync(process.env.BOXHUB_TEST_MQTT_URL!, {
              protocolVersion: 5,
              reconnectPeriod: 0,
            });
            try {
              const got: string[] = [];
              spy.on('message', (_t, m) => got.push(m.toString()));
              // The retained message comes right after the SUBACK, so before the UNSUBACK.
              await spy.subscribeAsync(topics.presence(d.uuid), { qos: 0 });
              await spy.unsubscribeAsync(topics.presence(d.uuid));
              return got.length === 1 && (JSON.parse(got[0]!) as { online: boolean }).online === false;
            } finally {
              await spy.endAsync();
            }
          },
          'the broker retains the will',
          10_000,
        );
        assert.equal(
          (await s.server.repos.devices.findByUuid(d.uuid))?.online,
          1,
          'the server has not heard of it yet',
        );
        p.down(false);
        const row = await eventually(
          async () => {
            const r = await s.server.repos.devices.findByUuid(d.uuid);
            return r?.online === 0 && r.state?.includes('PAPER-OUT') ? r : undefined;
          },
          'offline with the state reported meanwhile, after the reconnect',
          10_000,
        );
        assert.deepEqual(JSON.parse(row.state!), paperOut);
        assert.ok(ext.reconnects >= 1);
        box.end(true);
      } finally {
        await s.close();
        await p.close();
      }
    });
  });
}
