// The box honours a command's expires_at (docs/box-protocol.md): a command that reaches it
// after its expiry is answered `expired` (API 30008) and not run. Expiry is the server's clock,
// moved here to stand for a command that spent its whole life in transit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { refusal, startRig, type Rig } from './fixtures.ts';
import { offsetClock } from '@boxhub/server/clock.ts';

let offset = 0;
const clock = offsetClock(() => offset);
let rig: Rig;
before(async () => {
  rig = await startRig({ clock, commandTimeoutMs: 1500 });
});
after(() => rig.close());

test('an expired command is refused with its reason and nothing happens on the box', async () => {
  const box = await rig.box();
  offset = -60_000; // expires_at = server now + 1.5 s, a minute behind the box
  const r = await refusal(rig.sdk.control.buzz({ client_uuid: box.uuid, buzz: [100] }));
  assert.equal(r.code, 30008, r.msg);
  assert.match(r.msg, /device could not buzz: command expired \d+ ms before it could run/);
  const reboot = await refusal(rig.sdk.control.reboot({ client_uuid: box.uuid }));
  assert.equal(reboot.code, 30008);
  assert.deepEqual(box.buzzer.played, []);
  assert.deepEqual(box.reboots, []);
  offset = 0;
  await rig.sdk.control.buzz({ client_uuid: box.uuid, buzz: [100] }); // resolves only on code 0
  await eventually(() => box.buzzer.played.length === 1, 'the fresh command played');
});
