// A node's shutdown closes the gateway before the database (startup/box-link.ts): closing waits
// for the box messages already received to be applied, with what they set off, and takes no
// more (gateway.ts, close()). Before, a presence still in the queue could run its device-event
// check after the database was closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayOn, heldGateway as setup } from '../testing/gateway-rig.ts';
import type { Broker } from '../broker/types.ts';

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
  // A wait far longer than the test: only close() can answer the command.
  const gateway = gatewayOn(broker, {} as never, 600_000);
  const call = gateway.command('box-1', 'buzz');
  call.catch(() => undefined);
  await new Promise<void>((r) => setImmediate(r));
  await gateway.close();
  await assert.rejects(
    call,
    (e: { code?: number; message?: string }) => e.code === 10503 && /shutting down/.test(e.message ?? ''),
  );
});
