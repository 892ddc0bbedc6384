// Ownership ends with the binding (docs/tasks.md): an application that unbinds a box ends its
// scan and print tasks there, each with its unbound code and its final callback to that
// application, and the next application to bind the box sees and controls nothing of them.
// Two real applications, one real server, broker and simulated box, a real callback receiver.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { CallbackReceiver } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { refusal, rigSdk, startRig, type Rig } from './fixtures.ts';

let rig: Rig;
let rx: Receiver;
before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
});
after(async () => {
  await rig.close();
  await rx.close();
});

async function pdf(pages: number): Promise<string> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700 });
  return Buffer.from(await d.save()).toString('base64');
}

test("unbinding ends the application's scan and print tasks with their callbacks; the next application sees none of them", async () => {
  const box = await rig.box({ printer: 'sim:?side_ms=10' });
  const a = rig.sdk;
  // A scan that waits for paper until stopped, a print held half-way, and one queued behind it.
  await rig.load(box, 1);
  const scan = (
    await a.scan.create({
      client_uuid: box.uuid,
      options: { continuous: true, continuous_wait: 0, callback_url: `${rx.url}/a/scan` },
    })
  ).uuid!;
  await eventually(
    async () => (await a.scan.info({ client_uuid: box.uuid, scan_uuid: scan })).item_size === 1,
    'the first item',
  );
  box.printer.pauseAfter(2);
  const prints: string[] = [];
  for (let i = 0; i < 2; i++) {
    prints.push(
      (
        await a.print.create({
          client_uuid: box.uuid,
          file_type: 'pdf',
          file_content: await pdf(6),
          options: { callback_url: `${rx.url}/a/print` },
        })
      ).uuid!,
    );
  }
  await eventually(() => (box.printer.jobs[0]?.impressions ?? 0) >= 2, 'the first print is printing');

  await a.devices.unbind({ uuid: box.uuid });

  // The first application's final callbacks, signed with its own secret, at its own URLs.
  const mine = new CallbackReceiver({ secrets: rig.app.callback_secret });
  const finishes = await eventually(() => {
    const l = rx.received
      .filter((r) => r.path.includes('/a/'))
      .map((r) => mine.receive(r))
      .filter((e) => e.type === 'scan.finish' || e.type === 'print.finished');
    return new Set(l.map((e) => e.body.uuid)).size >= 3 ? l : undefined;
  }, 'scan.finish and two print.finished to the first application');
  const codes = new Map(finishes.map((e) => [String(e.body.uuid), Number(e.body.error_code)]));
  assert.deepEqual(
    Object.fromEntries(codes),
    { [scan]: 2206, [prints[0]!]: 4206, [prints[1]!]: 4206 },
    'each ended with its unbound code',
  );
  // The box was told: it stops the scan and drops both prints; the printer stops half-way.
  await eventually(() => box.agent.jobs.states().length === 0, 'the box holds nothing');
  assert.deepEqual(
    box.printer.jobs.map((j) => j.task),
    [prints[0]],
    'the queued print never reached the printer',
  );
  assert.equal(box.printer.jobs[0]!.state, 'canceled');

  // The next application binds the box and finds nothing of the first one's tasks.
  const other = await rig.t.createApp('next');
  const b = rigSdk(rig.t.url, other.api_key);
  await b.devices.bind({ uuid: box.uuid, name: 'taken over' });
  assert.deepEqual(await b.scan.current({ client_uuid: box.uuid }), { exist: false });
  assert.equal((await refusal(b.scan.info({ client_uuid: box.uuid, scan_uuid: scan }))).code, 20404);
  assert.equal((await refusal(b.print.info({ client_uuid: box.uuid, print_uuid: prints[0]! }))).code, 20404);
  assert.equal((await refusal(b.tasks.history({ uuid: scan }))).code, 20404);
  await b.scan.stop({ client_uuid: box.uuid });
  await b.print.cancel({ client_uuid: box.uuid });
  // Its own scan works, and its callbacks go to it alone.
  await rig.load(box, 1);
  const own = (await b.scan.create({ client_uuid: box.uuid, options: { callback_url: `${rx.url}/b/scan` } })).uuid!;
  const done = await b.scan.waitForFinish(
    { client_uuid: box.uuid, scan_uuid: own },
    { intervalMs: 50, timeoutMs: 30_000 },
  );
  assert.equal(done.error_code, 0);
  const theirs = new CallbackReceiver({ secrets: other.callback_secret });
  const fin = await eventually(
    () =>
      rx.received
        .filter((r) => r.path.endsWith('/b/scan'))
        .map((r) => theirs.receive(r))
        .find((e) => e.type === 'scan.finish'),
    "the new scan's scan.finish",
  );
  assert.equal(fin.body.uuid, own);
  assert.ok(
    !rx.received.some((r) => r.path.includes('/a/') && JSON.parse(r.body).uuid === own),
    'nothing of the new scan went to the first application',
  );
  assert.ok(
    !rx.received.some((r) => r.path.includes('/b/') && [scan, ...prints].includes(JSON.parse(r.body).uuid)),
    'nothing of the old tasks went to the next application',
  );
});

test('only the application holding the box ends its tasks by unbinding', async () => {
  const box = await rig.box();
  await rig.load(box, 1);
  const scan = (await rig.sdk.scan.create({ client_uuid: box.uuid, options: { continuous: true, continuous_wait: 0 } }))
    .uuid!;
  // Another application cannot unbind a box it does not hold, and the scan goes on.
  const other = await rig.t.createApp('stranger');
  assert.equal((await refusal(rigSdk(rig.t.url, other.api_key).devices.unbind({ uuid: box.uuid }))).code, 30002);
  assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: true, scan_uuid: scan });
  await rig.sdk.devices.unbind({ uuid: box.uuid });
  // It ended with the binding, with the unbound code.
  const row = await rig.t.server.repos.tasks.find(rig.t.server.repos.tasks.db, scan);
  assert.equal(row?.state, 'ended');
  assert.equal(Number(row?.error_code), 2206);
});

test('a scan of another application still holding the scanner (its stop on the way) is neither shown nor stoppable: 30202 without its uuid', async () => {
  const box = await rig.box();
  // What the next application meets when the box has not yet stopped the earlier one's scan:
  // that scan's row, still active, as the unbind's ending would not have reached it.
  const earlier = await rig.t.createApp('earlier');
  const { tasks } = rig.t.server.repos;
  const held = randomUUID();
  const now = Date.now();
  await tasks.insert(tasks.db, {
    uuid: held,
    kind: 'scan',
    app_id: earlier.id,
    device_uuid: box.uuid,
    callback_url: null,
    options: '{}',
    created_at: now,
    expires_at: now + 60_000,
  });
  assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: false });
  const refused = await refusal(rig.sdk.scan.create({ client_uuid: box.uuid }));
  assert.equal(refused.code, 30202);
  assert.doesNotMatch(
    JSON.stringify({ msg: refused.message, data: refused.data }),
    new RegExp(held),
    "the other application's task is not named",
  );
  await rig.sdk.scan.stop({ client_uuid: box.uuid });
  assert.equal((await tasks.find(tasks.db, held))?.state, 'created', "stop did not touch the other application's scan");
  await tasks.delete(tasks.db, held);
});
