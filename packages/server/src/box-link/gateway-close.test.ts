// A node's shutdown closes the gateway before the database (startup/box-link.ts): closing waits
// for the box messages already received to be applied, with what they set off, and takes no
// more (gateway.ts, close()). Before, a presence still in the queue could run its device-event
// check after the database was closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { BoxGateway, type DevicePresence } from './gateway.ts';
import { systemClock } from '../clock.ts';
import type { Broker, MessageHandler } from '../broker/types.ts';

function setup() {
  const handlers = new Map<string, MessageHandler>();
  const broker = {
    subscribe: async (filter: string, handler: MessageHandler) => {
      handlers.set(filter, handler);
    },
  } as unknown as Broker;
  const applied: string[] = [];
  // The box's lookup is held, so what it sends waits in the gateway's queue.
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const devices: DevicePresence = {
    findByUuid: async (uuid) => {
      await held;
      return { uuid } as never;
    },
    markOnline: async (_uuid, session) => {
      applied.push(`online ${session}`);
      return true;
    },
    markOffline: async (_uuid, session) => {
      applied.push(`offline ${session}`);
      return true;
    },
    saveState: async () => undefined,
  };
  const gateway = new BoxGateway({
    broker,
    devices,
    clock: systemClock,
    nodeId: 'node-1',
    log: pino({ level: 'silent' }),
    commandTimeoutMs: 1000,
  });
  const presence = (online: boolean, session: string) =>
    handlers.get('box/+/presence')!('box/box-1/presence', Buffer.from(JSON.stringify({ v: 1, online, session })));
  return { gateway, presence, applied, release };
}

test('closing the gateway waits for the messages it has received and what they set off', async () => {
  const { gateway, presence, applied, release } = setup();
  const after: string[] = [];
  // A listener that does its work a turn later, as a batched check does (db/turn-batch.ts).
  gateway.onPresence(async (uuid, online) => {
    await new Promise<void>((r) => setImmediate(r));
    after.push(`${uuid} ${online ? 'online' : 'offline'} looked at`);
  });
  await gateway.start();
  presence(true, 'A');
  let closed = false;
  const closing = gateway.close().then(() => {
    closed = true;
  });
  await new Promise<void>((r) => setImmediate(r));
  assert.equal(closed, false, 'close() returned while a message was still being applied');
  release();
  await closing;
  assert.deepEqual(applied, ['online A']);
  assert.deepEqual(after, ['box-1 online looked at']);
});

test('a message that comes after the gateway is closed is not applied', async () => {
  const { gateway, presence, applied, release } = setup();
  await gateway.start();
  release();
  await gateway.close();
  presence(true, 'B');
  await gateway.drain();
  assert.deepEqual(applied, []);
});

test('a command waiting for its acknowledgement is answered with 10503 when the gateway closes', async () => {
  const broker = { publish: async () => undefined } as unknown as Broker;
  const gateway = new BoxGateway({
    broker,
    devices: {} as never,
    clock: systemClock,
    nodeId: 'node-1',
    log: pino({ level: 'silent' }),
    // Far longer than the test: only close() can answer the command.
    commandTimeoutMs: 600_000,
  });
  const call = gateway.command('box-1', 'buzz');
  call.catch(() => undefined);
  await new Promise<void>((r) => setImmediate(r));
  await gateway.close();
  await assert.rejects(
    call,
    (e: { code?: number; message?: string }) => e.code === 10503 && /shutting down/.test(e.message ?? ''),
  );
});
