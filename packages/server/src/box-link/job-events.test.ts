// Box job events are applied only to tasks of their own kind (docs/box-protocol.md "Jobs"): a
// box publishing a scan.item for its own print task changes nothing (no item, no callback, the
// task's seq untouched) and the event is acknowledged and dropped; the same event for a scan
// task is applied. A raw MQTT client plays the box, as a broken or hostile box would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { JobEvent } from '@boxhub/protocol';
import { eventually, startTestServer } from '../testing/harness.ts';
import { rawBox } from '../testing/raw-box.ts';

test('a scan event on a print task is dropped; on a scan task it is applied', async () => {
  const t = await startTestServer();
  const box = await t.registerDevice();
  const app = await t.createApp();
  const s = t.server;
  const raw = await rawBox(t.mqttUrl, box);
  const { acks } = raw;
  try {
    const now = Date.now();
    const task = async (kind: 'scan' | 'print') => {
      const uuid = randomUUID();
      await s.services.lifecycle.create(s.db.kysely, {
        uuid,
        kind,
        app_id: app.id,
        device_uuid: box.uuid,
        callback_url: 'http://127.0.0.1:9/cb',
        options: '{}',
        created_at: now,
        expires_at: now + 3_600_000,
      });
      return uuid;
    };
    const item = (taskUuid: string): JobEvent => ({
      v: 1,
      id: randomUUID(),
      task: taskUuid,
      seq: 1,
      at: now,
      type: 'scan.item',
      data: { item_id: 1, pages: [{ paper_number: 1, page_number: 1, front: true }], scanned_at: now },
    });
    const print = await task('print');
    const wrong = item(print);
    await raw.event(wrong);
    await eventually(() => acks.includes(wrong.id), 'the wrong-kind event is acknowledged (the box may drop it)');
    const after = (await s.repos.tasks.find(s.db.kysely, print))!;
    assert.equal(after.last_seq, 0, "the print task's seq is untouched");
    assert.equal(after.item_count, 0);
    const items = await s.db.kysely.selectFrom('scan_items').selectAll().where('task_uuid', '=', print).execute();
    assert.deepEqual(items, []);
    const cbs = await s.db.kysely.selectFrom('callbacks').select('event').where('task_uuid', '=', print).execute();
    assert.deepEqual(
      cbs.map((c) => c.event).filter((e) => e === 'scan.item_data'),
      [],
      'no scan.item_data callback',
    );

    const scan = await task('scan');
    const right = item(scan);
    await raw.event(right);
    await eventually(() => acks.includes(right.id), 'the scan event is acknowledged');
    assert.equal((await s.repos.tasks.find(s.db.kysely, scan))!.last_seq, 1, 'applied to the scan task');
    assert.equal(
      (await s.db.kysely.selectFrom('scan_items').selectAll().where('task_uuid', '=', scan).execute()).length,
      1,
    );
  } finally {
    await raw.close();
    await t.close();
  }
});
