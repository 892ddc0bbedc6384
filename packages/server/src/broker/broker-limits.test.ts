// The embedded broker's limits (docs/configuration.md "Box link"): a packet over the maximum
// size closes the connection as soon as its header announces it, before the payload is read
// into memory, and connection attempts per address are bounded. The broker is started on its
// own here (these are its limits whatever engine the rest of the suite uses).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';
import { EmbeddedBroker } from './embedded-broker.ts';
import { MqttFrameReader } from './frame-guard.ts';
import { ManualClock } from '../testing/manual-clock.ts';

const SECRET = 'box-secret';
const refused: { reason: string; bytes?: number | undefined }[] = [];
const clock = new ManualClock(Date.now());
let broker: EmbeddedBroker;
before(async () => {
  broker = await EmbeddedBroker.start({
    host: '127.0.0.1',
    port: 0,
    maxPacketBytes: 270_000,
    clock,
    connectLimit: { max: 1000, windowMs: 10_000 },
    authenticate: async (_uuid, secret) => secret === SECRET,
    onRefused: (reason, d) => {
      refused.push({ reason, bytes: d.bytes });
    },
  });
});
after(() => broker.close());

function box(uuid: string): Promise<MqttClient> {
  return mqtt.connectAsync(broker.listenUrl!, {
    clientId: uuid,
    username: uuid,
    password: SECRET,
    protocolVersion: 4,
    reconnectPeriod: 0,
  });
}

/** Resolves 'closed' when the socket closes, 'open' if it is still open after `ms`. */
function closedWithin(s: Socket, ms: number): Promise<'closed' | 'open'> {
  if (s.destroyed) return Promise.resolve('closed');
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), ms);
    s.once('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });
}

/** A PUBLISH fixed header announcing `remaining` bytes ([MQTT-2.2.3] variable byte integer). */
function publishHeader(remaining: number): Buffer {
  const bytes = [0x30];
  let n = remaining;
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    bytes.push(b);
  } while (n > 0);
  return Buffer.from(bytes);
}

describe('maximum packet size', () => {
  test('a logged-in box announcing a 100 MB publish is disconnected before its payload arrives', async () => {
    const c = await box('big-1');
    const socket = c.stream as Socket;
    refused.length = 0;
    // The header and the first 64 KiB only: a broker that waits for the rest never closes.
    socket.write(Buffer.concat([publishHeader(100 * 1024 * 1024), Buffer.alloc(64 * 1024, 0x61)]));
    assert.equal(await closedWithin(socket, 5000), 'closed');
    assert.deepEqual(
      refused.map((r) => r.reason),
      ['packet_size'],
    );
    assert.ok((refused[0]!.bytes ?? 0) > 100 * 1024 * 1024);
    c.end(true);
  });

  test('before logging in too: an oversized first packet closes the connection', async () => {
    const s = connect(Number(new URL(broker.listenUrl!).port), '127.0.0.1');
    s.on('error', () => undefined);
    await new Promise<void>((r) => s.once('connect', () => r()));
    s.write(Buffer.concat([Buffer.from([0x10]), publishHeader(10 * 1024 * 1024).subarray(1), Buffer.alloc(1024)]));
    assert.equal(await closedWithin(s, 5000), 'closed');
  });

  test('messages up to the limit pass, split across TCP segments or not', async () => {
    const c = await box('fit-1');
    const received: number[] = [];
    await broker.subscribe('box/+/event', (_t, p) => received.push(p.length));
    await c.publishAsync('box/fit-1/event', Buffer.alloc(256 * 1024, 0x62), { qos: 1 });
    await c.publishAsync('box/fit-1/event', Buffer.alloc(10, 0x62), { qos: 1 });
    assert.deepEqual(received, [256 * 1024, 10]);
    assert.equal(c.connected, true);
    await c.endAsync();
  });

  test('the frame reader follows packets across chunk boundaries and refuses a five-byte length', () => {
    const r = new MqttFrameReader(300);
    const a = Buffer.concat([
      publishHeader(200),
      Buffer.alloc(200),
      publishHeader(0),
      publishHeader(100),
      Buffer.alloc(100),
    ]);
    for (let i = 0; i < a.length; i += 7) assert.equal(r.feed(a.subarray(i, i + 7)), undefined);
    assert.deepEqual(new MqttFrameReader(300).feed(publishHeader(299)), { kind: 'too_large', bytes: 302 });
    assert.deepEqual(new MqttFrameReader(10 ** 9).feed(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01])), {
      kind: 'malformed',
    });
  });
});

describe('connection attempts per address', () => {
  test('past the limit a connection is closed before a byte is read; a new window accepts again', async () => {
    const limited = await EmbeddedBroker.start({
      host: '127.0.0.1',
      port: 0,
      clock,
      connectLimit: { max: 3, windowMs: 10_000 },
      authenticate: async (_uuid, secret) => secret === SECRET,
      onRefused: (reason) => {
        refused.push({ reason });
      },
    });
    try {
      refused.length = 0;
      const login = (id: string) =>
        mqtt.connectAsync(limited.listenUrl!, {
          clientId: id,
          username: id,
          password: SECRET,
          protocolVersion: 4,
          reconnectPeriod: 0,
          connectTimeout: 5000,
        });
      const ok = await Promise.all([login('c1'), login('c2'), login('c3')]);
      // The fourth: closed at once, nothing read or written.
      const s = connect(Number(new URL(limited.listenUrl!).port), '127.0.0.1');
      let answered = 0;
      s.on('data', (d: Buffer) => {
        answered += d.length;
      });
      s.on('error', () => undefined);
      assert.equal(await closedWithin(s, 5000), 'closed');
      assert.equal(answered, 0);
      assert.deepEqual(
        refused.map((r) => r.reason),
        ['connect_rate'],
      );
      await clock.advance(10_000);
      const again = await login('c5');
      await Promise.all([...ok, again].map((c) => c.endAsync()));
    } finally {
      await limited.close();
    }
  });
});
