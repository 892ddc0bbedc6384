// A scan task's life ends at expires_at (docs/api.md, "Scan task": destroyed automatically, and
// nothing of it can be read after; "Limits": a temp_download_url is valid 1 hour). The server's
// clock is a ManualClock: a day passes in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { expiryRig, HOUR } from './expiry-rig.ts';
import { refusal } from './fixtures.ts';

const x = expiryRig();

test('download links last an hour; the task and its files are destroyed at expires_at', async () => {
  const { rig, clock, advance } = x;
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const box = await rig.box();
  await rig.load(box, 2);
  const created = await rig.sdk.scan.create({ client_uuid: box.uuid });
  const uuid = created.uuid!;
  assert.equal(created.expires_at, Math.floor((clock.now() + 24 * HOUR) / 1000));
  await rig.sdk.scan.waitForFinish({ client_uuid: box.uuid, scan_uuid: uuid }, { intervalMs: 50, timeoutMs: 15_000 });
  // The link itself is fetched raw: this test is about its lifetime and the 403 it then answers.
  const url = (await rig.sdk.scan.itemData({ client_uuid: box.uuid, scan_uuid: uuid, page: 1 })).items[0]!
    .temp_download_url!;
  assert.equal((await fetch(url)).status, 200);
  await advance(HOUR - 60_000);
  assert.equal((await fetch(url)).status, 200, 'valid for an hour');
  await advance(2 * 60_000);
  const late = await fetch(url);
  assert.equal(late.status, 403);
  assert.match(await late.text(), /expired/);
  const fresh = (await rig.sdk.scan.itemData({ client_uuid: box.uuid, scan_uuid: uuid, page: 1 })).items[0]!
    .temp_download_url!;
  assert.equal((await fetch(fresh)).status, 200, 'item_data hands out a fresh link');

  const dir = join(rig.t.dataDir, 'blobs', 'scan', uuid);
  assert.ok(existsSync(dir));
  await advance(22 * HOUR);
  await rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: uuid }); // still there just before expires_at
  await advance(2 * HOUR);
  const gone = await refusal(rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: uuid }));
  assert.equal(gone.code, 20404);
  assert.match(gone.msg, /expires_at/);
  assert.equal((await refusal(rig.sdk.scan.itemData({ client_uuid: box.uuid, scan_uuid: uuid, page: 1 }))).code, 20404);
  assert.equal(existsSync(dir), false, 'its files are deleted');
  const rows = await rig.t.server.db.kysely
    .selectFrom('scan_items')
    .select('item_id')
    .where('task_uuid', '=', uuid)
    .execute();
  assert.equal(rows.length, 0);
});

test('a scan still active at expires_at ends with 2204, scan.finish goes out, the box stops and the lock is released', async () => {
  const { rig, rx, clock, advance, callback } = x;
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const box = await rig.box();
  await rig.load(box, 1);
  const uuid = (
    await rig.sdk.scan.create({
      client_uuid: box.uuid,
      options: { continuous: true, continuous_wait: 0, callback_url: `${rx.url}/expiry` },
    })
  ).uuid!;
  await eventually(
    async () => (await rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: uuid })).item_size === 1,
    'first item',
  );
  await advance(24 * HOUR + 1000);
  const event = await callback('/expiry', 'scan.finish');
  assert.equal(event.type, 'scan.finish');
  if (event.type !== 'scan.finish') return;
  assert.equal(event.body.uuid, uuid);
  assert.equal(event.body.error_code, 2204);
  // The end is recorded (and sent) first; the box is told to stop, then the task is destroyed.
  await eventually(
    async () => (await refusal(rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: uuid }))).code === 20404,
    'the task destroyed',
  );
  assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: false });
  await eventually(() => box.agent.jobs.states().length === 0, 'the box dropped the expired scan');
});
