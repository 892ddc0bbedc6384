// The embedded broker takes connections only once listen() is called (server.ts calls it last in
// a start): a box dialling a node still starting is refused at once and backs off, instead of
// waiting in a full accept queue (EmbeddedBroker.listen; bench/README.md, "reconnect-storm").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import mqtt from 'mqtt';
import { EmbeddedBroker } from './embedded-broker.ts';

const SECRET = 'box-secret';
const options = (port: number) => ({
  host: '127.0.0.1',
  port,
  authenticate: async (_uuid: string, secret: string) => secret === SECRET,
});

/** A port the kernel hands out and nobody listens on now. */
async function unusedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const addr = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  if (!addr || typeof addr !== 'object') throw new Error('no port');
  return addr.port;
}

function dial(port: number): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

test('a broker not yet listening refuses a dial at once; after listen() a box logs in', async () => {
  const port = await unusedPort();
  const broker = await EmbeddedBroker.create(options(port));
  try {
    assert.equal(broker.listenUrl, undefined);
    assert.equal(await dial(port), 'ECONNREFUSED');
    await broker.listen();
    assert.equal(broker.listenUrl, `mqtt://127.0.0.1:${port}`);
    const box = await mqtt.connectAsync(broker.listenUrl, {
      clientId: 'box-1',
      username: 'box-1',
      password: SECRET,
      protocolVersion: 4,
      reconnectPeriod: 0,
    });
    assert.equal(box.connected, true);
    await box.endAsync();
  } finally {
    await broker.close();
  }
});

test('listen() on a taken port fails with the system error and leaves the broker closed', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const addr = taken.address();
  assert.ok(addr && typeof addr === 'object');
  const broker = await EmbeddedBroker.create(options(addr.port));
  try {
    await assert.rejects(broker.listen(), (e: NodeJS.ErrnoException) => e.code === 'EADDRINUSE');
    assert.equal(broker.listenUrl, undefined);
    await broker.close(); // a second close after the failed listen neither throws nor hangs
  } finally {
    await new Promise<void>((r) => taken.close(() => r()));
  }
});
