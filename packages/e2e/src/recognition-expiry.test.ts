// A recognition task's life ends at expires_at (docs/api.md, "Recognition task": about 24 hours):
// an expired task is destroyed with its page images. The server's clock is a ManualClock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { cardStack, exampleCard } from './card-stack.ts';
import { pagesManifest, sendDirect } from './direct-sender.ts';
import { expiryRig, HOUR } from './expiry-rig.ts';

const x = expiryRig();

test('at expires_at a recognition task is destroyed with its page images; its address answers 404', async () => {
  const { rig, clock, advance } = x;
  const pages = (await cardStack(1)).pages;
  await clock.catchUp();
  await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
  const task = await rig.sdk.recognition.create({ callback_url: 'http://127.0.0.1:9/results' });
  assert.equal(task.expires_at, Math.floor((clock.now() + 24 * HOUR) / 1000));
  const box = await rig.box({ scanner: 'sim:?ppm=1' });
  await rig.load(box, 1);
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const scan = await rig.sdk.scan.create({
    client_uuid: box.uuid,
    options: { direct_mode: 1, direct_addr: task.direct_addr, continuous: true, continuous_wait: 0 },
  });
  const sent = await sendDirect(task.direct_addr, scan.direct_secret!, pagesManifest(scan.uuid!, 1, pages), pages, {
    timestamp: Math.floor(clock.now() / 1000),
  });
  assert.equal(sent.status, 200, sent.text);
  const db = rig.t.server.db.kysely;
  await eventually(
    async () =>
      (await db.selectFrom('recognition_pages').select('reading').where('task_uuid', '=', task.uuid).execute()).every(
        (p) => p.reading !== null,
      ),
    'pages read',
  );
  const dir = join(rig.t.dataDir, 'blobs', 'recognition', task.uuid);
  assert.ok(existsSync(dir), 'the page images are stored');

  await advance(24 * HOUR - 60_000);
  assert.ok(existsSync(dir), 'still there just before expires_at');
  await advance(2 * 60_000);
  assert.equal(existsSync(dir), false, 'page images deleted');
  for (const table of ['tasks', 'recognitions', 'recognition_pages', 'recognition_batches'] as const) {
    const col = table === 'tasks' ? 'uuid' : 'task_uuid';
    assert.equal(
      (await db.selectFrom(table).select(col).where(col, '=', task.uuid).execute()).length,
      0,
      `${table} rows deleted`,
    );
  }
  const late = await sendDirect(task.direct_addr, scan.direct_secret!, pagesManifest(scan.uuid!, 2, pages), pages, {
    timestamp: Math.floor(clock.now() / 1000),
  });
  assert.equal(late.status, 404);
});
