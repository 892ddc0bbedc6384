// A scan item's stored file is read (its size and MD5, an S3 HEAD) before the event's
// transaction opens (EventCheck, box-link/job-events.ts): a transaction waiting on a slow S3
// held SQLite's one connection, and every statement of the node waited with it. Here the
// store's answer is held back (a stalled S3, which the test cannot cause on the local store);
// the node's other writes go on meanwhile, and the item is recorded once the answer comes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import type { JobEvent } from '@boxhub/protocol';
import { eventually, startTestServer } from '../../testing/harness.ts';
import { rawBox } from '../../testing/raw-box.ts';

test("a scan item's stored file is read outside the event's transaction: the node's other writes go on while the store is slow", async () => {
  const t = await startTestServer();
  const box = await t.registerDevice();
  const app = await t.createApp();
  const s = t.server;
  const raw = await rawBox(t.mqttUrl, box);
  const { acks } = raw;
  const stat = s.blobs.stat.bind(s.blobs);
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  let asked = 0;
  s.blobs.stat = async (key) => {
    asked++;
    await held;
    return stat(key);
  };
  try {
    const now = Date.now();
    const task = randomUUID();
    await s.services.lifecycle.create(s.db.kysely, {
      uuid: task,
      kind: 'scan',
      app_id: app.id,
      device_uuid: box.uuid,
      callback_url: null,
      options: '{}',
      created_at: now,
      expires_at: now + 3_600_000,
    });
    const file = Buffer.from('%PDF-1.7 one scanned page');
    await s.blobs.put(`scan/${task}/1.pdf`, file, { contentType: 'application/pdf' });
    const event: JobEvent = {
      v: 1,
      id: randomUUID(),
      task,
      seq: 1,
      at: now,
      type: 'scan.item',
      data: {
        item_id: 1,
        pages: [{ paper_number: 1, page_number: 1, front: true }],
        upload: { md5: createHash('md5').update(file).digest('hex'), size: file.length, upload_spent_ms: 5 },
        scanned_at: now,
      },
    };
    await raw.event(event);
    await eventually(() => asked > 0, 'the item reached the store');

    // While the store has not answered, a write of the node's own (in a transaction, as the
    // node's writes are) goes through; before, it waited for the event's transaction, which
    // waited for the store.
    const write = s.db.kysely
      .transaction()
      .execute((trx) => trx.updateTable('devices').set({ name: 'Room 2' }).where('uuid', '=', box.uuid).execute())
      .then(() => 'written' as const);
    const deadline = new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 5000).unref());
    const seen = await Promise.race([write, deadline]);
    release();
    await write;
    assert.equal(seen, 'written', "the node's write did not wait for the store's answer");

    await eventually(() => acks.includes(event.id), 'the item event is acknowledged once the store answered');
    const row = (await s.repos.tasks.find(s.db.kysely, task))!;
    assert.equal(row.item_count, 1);
    assert.equal(row.file_bytes, file.length);
  } finally {
    release();
    s.blobs.stat = stat;
    await raw.close();
    await t.close();
  }
});
