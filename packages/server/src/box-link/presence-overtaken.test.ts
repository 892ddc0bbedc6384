// A box's end of session that its next session's `online` has overtaken in the gateway's queue
// is not applied (docs/box-protocol.md, "Presence"): a broker's return brings every box's will
// while the boxes are already back. An `online` is always applied, and so is an end of session
// that nothing newer follows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heldGateway as setup } from '../testing/gateway-rig.ts';

test("a will overtaken by the box's next online is not applied; the online is", async () => {
  const { gateway, presence, applied, release } = setup();
  await gateway.start();
  presence(true, 'A'); // held in the lookup
  presence(false, 'A'); // its will
  presence(true, 'B'); // the box is back
  release();
  await gateway.drain();
  assert.deepEqual(applied, ['online A', 'online B']);
});

test('an end of session with nothing newer behind it is applied, and so is every online', async () => {
  const { gateway, presence, applied, release } = setup();
  await gateway.start();
  presence(true, 'A');
  presence(false, 'A');
  presence(true, 'B');
  presence(false, 'B');
  release();
  await gateway.drain();
  assert.deepEqual(applied, ['online A', 'online B', 'offline B']);
});
