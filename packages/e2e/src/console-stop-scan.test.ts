// The console's "Stop the scan" acts on its own page's task only (docs/console.md): a page left
// open on a finished scan must not stop the scan the box runs now. A real server and simulated
// box; the console over plain HTTP (testing/console-client.ts), as a stale browser tab posts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsoleClient } from '@boxhub/server/testing/console-client.ts';
import { startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => {
  rig = await startRig();
});
after(async () => {
  await rig.close();
});

test("a stale scan page's stop is refused and leaves the newer scan running; its own page stops it", async () => {
  const box = await rig.box({ scanner: 'sim:?ppm=1' });
  await rig.load(box, 5);
  const options = { continuous: true, continuous_wait: 0 };
  const first = (await rig.sdk.scan.create({ client_uuid: box.uuid, options })).uuid!;
  await rig.sdk.scan.stop({ client_uuid: box.uuid });
  const second = (await rig.sdk.scan.create({ client_uuid: box.uuid, options })).uuid!;
  assert.notEqual(first, second);

  const ui = await new ConsoleClient(rig.t.url).signIn(rig.app.api_key);
  const page = (scan: string) => `/console/devices/${box.uuid}/scans/${scan}`;
  await ui.get(page(first));
  const stale = await ui.post(`${page(first)}/stop`, { _confirmed: '1' });
  assert.equal(stale.status, 409, stale.body);
  assert.match(stale.body, /this scan task is not running any more, so nothing was stopped/);
  assert.deepEqual(
    await rig.sdk.scan.current({ client_uuid: box.uuid }),
    { exist: true, scan_uuid: second },
    'the newer scan runs on',
  );
  assert.equal((await rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: second })).finished, false);

  const own = await ui.post(`${page(second)}/stop`, { _confirmed: '1' });
  assert.equal(own.status, 303, own.body);
  assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: false });
});
