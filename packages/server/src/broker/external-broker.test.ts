// ExternalBroker against a real external broker (the scale-out pass: BOXHUB_TEST_ENGINE=external,
// Mosquitto from scripts/ci/start-mosquitto.sh): provisioning over dynsec, shared subscriptions
// and what happens after the server's own connection drops. The broker-independent parts run in
// both passes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import mqtt from 'mqtt';
import { topics } from '@boxhub/protocol';
import { loadConfig } from '../config.ts';
import { engine, eventually, startTestServer, type TestServer } from '../testing/harness.ts';
import { mayPublish, maySubscribe } from './device-acl.ts';
import { deviceAcls, ExternalBroker, parseMqttUrl } from './external-broker.ts';
import { provisionOnBroker } from './provision.ts';
import { startTcpProxy } from '../testing/tcp-proxy.ts';

describe('external broker adapter (any engine)', () => {
  test('dynsec ACLs of a box say what device-acl.ts says for the embedded broker', () => {
    const uuid = 'b0x-1';
    const acls = deviceAcls(uuid);
    const pub = acls.filter((a) => a.acltype === 'publishClientSend').map((a) => a.topic);
    const sub = acls.filter((a) => a.acltype.startsWith('subscribe')).map((a) => a.topic);
    for (const t of pub) assert.ok(mayPublish(uuid, t.replace('+', 'node1')), t);
    for (const t of sub) assert.ok(maySubscribe(uuid, t), t);
    assert.deepEqual(sub, [topics.cmd(uuid)]);
    assert.deepEqual(pub.sort(), ['box/b0x-1/ack/+', 'box/b0x-1/event', 'box/b0x-1/presence', 'box/b0x-1/req', 'box/b0x-1/state']);
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
      const d = await t.server.services.devices.register({ code: `CLI${randomBytes(4).toString('hex')}`, model: 'BX-1' }, async (x) => {
        await provisionOnBroker(loadConfig({ BOXHUB_DATA_DIR: t.dataDir }), x.uuid, x.secret);
        provisioned++;
      });
      assert.equal(provisioned, 1);
      const c = await mqtt.connectAsync(t.mqttUrl, { clientId: d.uuid, username: d.uuid, password: d.secret, protocolVersion: 4, reconnectPeriod: 0 });
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
      await assert.rejects(ExternalBroker.connect(gone.url, 'n', { connectTimeoutMs: 60_000 }), /could not reach the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+: .*ECONNRESET/);
    } finally {
      await gone.close();
    }
    // Silent: accepts TCP and never answers the CONNECT; the connect timeout ends the wait.
    const held: Socket[] = [];
    const silent = createServer((c) => { held.push(c); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as { port: number }).port;
      await assert.rejects(ExternalBroker.connect(`mqtt://127.0.0.1:${port}`, 'n', { connectTimeoutMs: 800 }), /could not reach the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+ within 800 ms/);
    } finally {
      for (const c of held) c.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

/** Forwards TCP to the broker; cut() drops every connection as a network failure would. */
async function proxy(target: URL): Promise<{ url: string; cut: () => void; close: () => Promise<void> }> {
  const socks: Socket[] = [];
  const server: Server = createServer({ noDelay: true }, (c) => {
    const u = tcpConnect({ host: target.hostname, port: Number(target.port || 1883), noDelay: true });
    socks.push(c, u);
    c.pipe(u); u.pipe(c);
    const drop = (): void => { c.destroy(); u.destroy(); };
    c.on('error', drop); u.on('error', drop); c.on('close', drop); u.on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const via = new URL(target.toString());
  via.hostname = '127.0.0.1';
  via.port = String((server.address() as { port: number }).port);
  return {
    url: via.toString(),
    cut: () => { for (const s of socks.splice(0)) s.destroy(); },
    close: async () => { for (const s of socks.splice(0)) s.destroy(); await new Promise<void>((r) => server.close(() => r())); },
  };
}

if (engine === 'external') {
  describe('external broker: provisioning and reconnection (Mosquitto + dynsec)', () => {
    let t: TestServer;
    before(async () => { t = await startTestServer(); });
    after(() => t.close());

    const login = (uuid: string, secret: string) => new Promise<void>((resolve, reject) => {
      const c = mqtt.connect(t.mqttUrl, { clientId: uuid, username: uuid, password: secret, protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 5000 });
      c.once('connect', () => { c.end(true); resolve(); });
      c.once('error', (e) => { c.end(true); reject(e); });
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
      await provisionOnBroker(loadConfig({ MQTT_URL: process.env.BOXHUB_TEST_MQTT_URL!, BOXHUB_NODE_ID: t.server.config.nodeId }), uuid, secret);
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
        const box = mqtt.connect(`${direct.protocol}//${direct.host}`, { clientId: d.uuid, username: d.uuid, password: d.secret, protocolVersion: 4, reconnectPeriod: 0 });
        await new Promise<void>((r, j) => { box.once('connect', () => r()); box.once('error', j); });
        await box.subscribeAsync(topics.cmd(d.uuid), { qos: 1 });
        box.on('message', (_t, payload) => {
          const c = JSON.parse(payload.toString()) as { id: string; reply_to: string };
          // Fire and forget; a publish still waiting for its PUBACK when the test ends the box
          // is rejected with "Connection closed", which is not this test's concern.
          box.publishAsync(topics.ack(d.uuid, c.reply_to), JSON.stringify({ v: 1, id: c.id, ok: true }), { qos: 1 }).catch(() => undefined);
        });
        const online = (session: string) => box.publishAsync(topics.presence(d.uuid), JSON.stringify({ v: 1, online: true, session }), { qos: 1 });
        await online('s1');
        await eventually(async () => (await s.server.repos.devices.findByUuid(d.uuid))?.session === 's1', 'presence before the drop');
        const ext = s.server.broker as ExternalBroker;
        p.cut();
        await eventually(() => ext.reconnects >= 1 && ext.connected, 'server reconnected', 10_000);
        // Subscriptions are renewed right after the CONNACK; poll until a new message gets through.
        let n = 0;
        await eventually(async () => {
          await online(`s2-${++n}`);
          return (await s.server.repos.devices.findByUuid(d.uuid))?.session?.startsWith('s2-');
        }, 'presence after the reconnect (shared subscription renewed)', 10_000);
        assert.equal((await s.server.gateway.command(d.uuid, 'buzz', { buzz: [10], gap: 0 })).ok, true, 'ack subscription renewed');
        await box.endAsync();
      } finally {
        await s.close();
        await p.close();
      }
    });
  });
}
