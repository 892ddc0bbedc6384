// The broker check (capabilities.ts, docs/box-protocol-broker.md "Brokers") against real
// brokers of each kind this machine runs, each a private instance started by the test
// (testing/foreign-brokers.ts): Mosquitto 2 (fit), Mosquitto without retained messages,
// NATS 2.9 and RabbitMQ 3.10 with their MQTT 3.1.1 listeners. Engine-independent: every pass
// runs it the same.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../config.ts';
import { startServer } from '../server.ts';
import { StartupError } from '../startup-error.ts';
import { eventually } from '../testing/harness.ts';
import { startMosquitto, startNats, startRabbitMq, type ForeignBroker } from '../testing/foreign-brokers.ts';
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import { BrokerUnfit, probeBroker, type BrokerFeature } from './capabilities.ts';
import { ExternalBroker, parseMqttUrl } from './external-broker.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const probe = (b: ForeignBroker) =>
  probeBroker(parseMqttUrl(b.url).url, { clientIdPrefix: 'boxhub-test', timeoutMs: 3000 });
const features = (m: { feature: BrokerFeature }[]) => m.map((x) => x.feature).sort();

let mosquitto: ForeignBroker;
let noRetain: ForeignBroker;
let nats: ForeignBroker;
before(async () => {
  // One after the other: a broker that fails to start leaves the others assigned, for after().
  mosquitto = await startMosquitto();
  noRetain = await startMosquitto(['retain_available false']);
  nats = await startNats();
});
after(async () => {
  await Promise.all([mosquitto?.close(), noRetain?.close(), nats?.close()]);
});

describe('what each broker lacks', () => {
  test('Mosquitto 2: nothing; the server connects', async () => {
    assert.deepEqual(await probe(mosquitto), []);
    const b = await ExternalBroker.connect(mosquitto.url, 'n1');
    assert.equal(b.connected, true);
    await b.close();
  });

  test('Mosquitto with retain_available false: retained messages, and only that', async () => {
    const missing = await probe(noRetain);
    assert.deepEqual(features(missing), ['retained']);
    assert.match(missing[0]!.why, /closed the connection on a retained publish/);
  });

  test('NATS 2.9: MQTT 5 (refused in the CONNACK), shared subscriptions (a literal topic), sessions; QoS 1 and retained work', async () => {
    const missing = await probe(nats);
    assert.deepEqual(features(missing), ['mqtt5', 'sessions', 'shared_subscriptions']);
    assert.match(missing.find((m) => m.feature === 'mqtt5')!.why, /refused an MQTT 5 CONNECT .*accepted MQTT 3\.1\.1/);
    assert.match(missing.find((m) => m.feature === 'shared_subscriptions')!.why, /received none .*plain topic/);
  });

  test('RabbitMQ 3.10 + rabbitmq_mqtt: MQTT 5 (the connection closed without a CONNACK), shared subscriptions, sessions', async () => {
    const rabbit = await startRabbitMq();
    try {
      const missing = await probe(rabbit);
      assert.deepEqual(features(missing), ['mqtt5', 'sessions', 'shared_subscriptions']);
      assert.match(
        missing.find((m) => m.feature === 'mqtt5')!.why,
        /closed the connection on an MQTT 5 CONNECT without a CONNACK/,
      );
      // What the server says at start, naming everything missing at once.
      await assert.rejects(ExternalBroker.connect(rabbit.url, 'n1', { probeTimeoutMs: 3000 }), (e: unknown) => {
        assert.ok(e instanceof BrokerUnfit);
        assert.match(
          e.message,
          /lacks what boxhub needs \(MQTT 5, shared subscriptions \(\$share\/…\), MQTT 5 sessions/,
        );
        return true;
      });
    } finally {
      await rabbit.close();
    }
  });
});

describe('the server refuses to run on a broker that lacks something', () => {
  test('at start: a StartupError naming MQTT_URL and what is missing, and nothing left running', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boxhub-unfit-'));
    try {
      const config = loadConfig({ BOXHUB_DATA_DIR: dataDir, MQTT_URL: nats.url, PORT: '0', LOG_LEVEL: 'silent' });
      await assert.rejects(startServer(config), (e: unknown) => {
        assert.ok(e instanceof StartupError);
        assert.equal(e.setting, 'MQTT_URL');
        assert.match(
          e.message,
          /^the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+ lacks what boxhub needs \(MQTT 5, shared subscriptions \(\$share\/…\), MQTT 5 sessions \(clean start off, session expiry\)\), so messages would be lost: MQTT 5: it refused an MQTT 5 CONNECT/,
        );
        assert.doesNotMatch(e.message, /boxhub:boxhub@/, 'no password in the message');
        return true;
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('after a reconnect to a broker without retained messages: unfit, named, and the connection closed', async () => {
    const proxy = await startTcpProxy(mosquitto.host, mosquitto.port);
    try {
      const b = await ExternalBroker.connect(`${proxy.url}/?provision=none`, 'n1', { probeTimeoutMs: 2000 });
      const unfit = new Promise<BrokerUnfit>((r) => b.onUnfit(r));
      proxy.retarget(noRetain.host, noRetain.port);
      proxy.cut();
      const e = await unfit;
      assert.deepEqual(features([...e.missing]), ['retained']);
      assert.equal(b.unfit, e);
      await eventually(() => !b.connected, 'the connection is closed');
      await b.close();
    } finally {
      await proxy.close();
    }
  });

  test('a running server whose broker turns out unfit after a reconnect says it can no longer run', async () => {
    const proxy = await startTcpProxy(mosquitto.host, mosquitto.port);
    const dataDir = mkdtempSync(join(tmpdir(), 'boxhub-unfit-'));
    const server = await startServer(
      loadConfig({
        BOXHUB_DATA_DIR: dataDir,
        MQTT_URL: `${proxy.url}/?provision=none`,
        PORT: '0',
        LOG_LEVEL: 'silent',
      }),
    );
    try {
      proxy.retarget(nats.host, nats.port);
      proxy.cut();
      const e = await server.failed;
      assert.ok(e instanceof StartupError);
      assert.equal(e.setting, 'MQTT_URL');
      assert.match(e.message, /lacks what boxhub needs \(MQTT 5\)/);
    } finally {
      await server.close();
      await proxy.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('after a reconnect to a broker that refuses MQTT 5: unfit at the refusal', async () => {
    const proxy = await startTcpProxy(mosquitto.host, mosquitto.port);
    try {
      const b = await ExternalBroker.connect(`${proxy.url}/?provision=none`, 'n1');
      const unfit = new Promise<BrokerUnfit>((r) => b.onUnfit(r));
      proxy.retarget(nats.host, nats.port);
      proxy.cut();
      const e = await unfit;
      assert.deepEqual(features([...e.missing]), ['mqtt5']);
      assert.match(e.message, /refused the server's MQTT 5 CONNECT on a reconnect/);
      await b.close();
    } finally {
      await proxy.close();
    }
  });
});
