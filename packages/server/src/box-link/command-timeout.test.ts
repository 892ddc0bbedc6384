// A command whose wait for the box's acknowledgement runs out while its publish still waits
// (a broker restarting holds a QoS 1 publish until it is back) rejects with 30005 to its caller,
// and nothing is left as an unhandled rejection: one ended a server node in the chaos soak.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayOn } from '../testing/gateway-rig.ts';
import type { Broker } from '../broker/types.ts';

test('the ack wait runs out during a slow publish: the caller gets 30005 and no rejection goes unhandled', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  let release!: () => void;
  const publishing = new Promise<void>((r) => {
    release = r;
  });
  const broker = {
    publish: () => publishing,
  } as unknown as Broker;
  const gateway = gatewayOn(broker, {} as never, 20);
  try {
    const call = gateway.command('box-1', 'buzz');
    // Past the 20 ms wait while the publish is still held, and a turn for a stray rejection to surface.
    await new Promise((r) => setTimeout(r, 60));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(unhandled, [], 'no unhandled rejection while the publish waits');
    release();
    await assert.rejects(call, (e: { code?: number }) => e.code === 30005);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
