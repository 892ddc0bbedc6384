// A create that never finished (docs/tasks.md, "A create that never finished"): its node was
// killed, or its database failed, after the task's row was written and before the box's answer
// was recorded, so the caller was never told the task exists. The row is what such a create
// leaves (written here as the create writes it: the crash itself is the chaos soak's, which
// causes it for real, docs/chaos.md). Without the task.unacked job the scan held the device for
// a day: every create answered 30204.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { transact } from '@boxhub/server/db/transaction.ts';
import { UNACKED_AFTER_MS } from '@boxhub/server/tasks/lifecycle.ts';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { expiryRig } from './expiry-rig.ts';
import { refusal } from './fixtures.ts';

const x = expiryRig();

async function halfCreated(kind: 'scan' | 'print', device: string, callbackUrl: string): Promise<string> {
  const { rig, clock } = x;
  const uuid = randomUUID();
  const services = rig.t.server.services;
  const options =
    kind === 'scan'
      ? {
          continuous: false,
          continuous_wait: 0,
          duplex: false,
          resolution: 200,
          color_mode: 'color',
          quality: 90,
          blank_page_skip: false,
        }
      : { file: { format: 'pdf' }, job: { copies: 1, strict: false } };
  await transact(rig.t.server.db.kysely, (trx) =>
    services.lifecycle.create(trx, {
      uuid,
      kind,
      app_id: rig.app.id,
      device_uuid: device,
      callback_url: callbackUrl,
      options: JSON.stringify(options),
      created_at: clock.now(),
      expires_at: clock.now() + 24 * 3_600_000,
    }),
  );
  return uuid;
}

test('a scan whose create never finished ends as not acknowledged after the grace time, and frees the device', async () => {
  const { rig, rx, clock, advance, callback } = x;
  await clock.catchUp();
  const box = await rig.box();
  await rig.load(box, 1);
  const stuck = await halfCreated('scan', box.uuid, `${rx.url}/unacked-scan`);
  assert.equal((await refusal(rig.sdk.scan.create({ client_uuid: box.uuid }))).code, 30204, 'it holds the device');
  await advance(UNACKED_AFTER_MS - 1000);
  assert.equal(
    (await rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: stuck })).finished,
    false,
    'not before the grace time',
  );
  await advance(2000);
  const info = await rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: stuck });
  assert.equal(info.finished, true);
  assert.equal(info.error_code, 2203);
  const event = await callback('/unacked-scan', 'scan.finish');
  assert.equal(event.type === 'scan.finish' && event.body.error_code, 2203);
  assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: false }, 'the device is free');
  const next = await rig.sdk.scan.create({ client_uuid: box.uuid });
  assert.ok(next.uuid, 'a new scan is taken');
});

test('a print whose create never finished ends with 4205 and its print.finished; one the box took is left alone', async () => {
  const { rig, rx, clock, advance, callback } = x;
  await clock.catchUp();
  const box = await rig.box();
  const stuck = await halfCreated('print', box.uuid, `${rx.url}/unacked-print`);
  // One whose box answer was recorded (the normal create): the job has nothing to do for it.
  const kept = await halfCreated('print', box.uuid, `${rx.url}/kept-print`);
  const db = rig.t.server.db.kysely;
  // Acknowledged under the box's own boot, as the handshake records it: under any other, the
  // box's next state report (which does not list it) says it was lost in a restart
  // (lifecycle.reconcile), and it ends as box.lost whenever that report comes.
  const boot = await eventually(async () => {
    const row = await rig.t.server.repos.devices.findByUuid(box.uuid);
    return row?.state ? (JSON.parse(row.state) as { boot?: string }).boot : undefined;
  }, 'the box reported its boot');
  await transact(db, async (trx) => {
    const t = await rig.t.server.services.lifecycle.acknowledge(
      trx,
      (await rig.t.server.repos.tasks.find(trx, kept))!,
      clock.now(),
      boot,
    );
    assert.equal(t.state, 'received');
  });
  await advance(UNACKED_AFTER_MS + 1000);
  const info = await rig.sdk.print.info({ client_uuid: box.uuid, print_uuid: stuck });
  assert.equal(info.finished, true);
  assert.equal(info.error_code, 4205);
  const event = await callback('/unacked-print', 'print.finished');
  assert.equal(event.type === 'print.finished' && event.body.error_code, 4205);
  assert.equal(
    (await rig.sdk.print.info({ client_uuid: box.uuid, print_uuid: kept })).finished,
    false,
    'an acknowledged task is not touched',
  );
  const jobs = await db
    .selectFrom('jobs')
    .select('kind')
    .where('ref', '=', kept)
    .where('kind', '=', 'task.unacked')
    .execute();
  assert.deepEqual(jobs, [], 'its acknowledgement cancelled the job');
});
