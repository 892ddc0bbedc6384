// A box's presence applied twice (docs/box-protocol.md, "Presence"): a broker that restarts
// sends each box's will live and keeps it retained for the node's catch-up, and a retained
// `online` is read again at every catch-up. The second copy changes nothing and says so, so a
// disconnect is recorded and announced once; an end seen after the row was marked offline
// wholesale is still remembered against a late `online` of that session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTaskRig } from '../../testing/task-rig.ts';
import { DeviceRepository } from './repository.ts';

async function rig() {
  const r = await startTaskRig();
  await r.db.kysely
    .insertInto('devices')
    .values({ uuid: 'box-p', code: 'BOX-P', model: 'rig', secret_hash: 'unused', online: 0, created_at: r.clock.now() })
    .execute();
  const devices = new DeviceRepository(r.db.kysely);
  const row = async () => (await devices.findByUuid('box-p'))!;
  return { r, devices, row };
}

test('the same online twice: the second changes nothing and reports no change', async () => {
  const { r, devices, row } = await rig();
  try {
    assert.equal(await devices.markOnline('box-p', 's1', 1000), true);
    assert.equal(await devices.markOnline('box-p', 's1', 2000), false, 'a repeated online is no news');
    const after = await row();
    assert.equal(after.online, 1);
    assert.equal(after.last_connect_at, 1000, 'the session began when it was first seen');
    assert.equal(await devices.markOnline('box-p', 's2', 3000), true, 'a new session is news');
  } finally {
    await r.close();
  }
});

test('the same will twice: one disconnect; a late online of the ended session stays ignored', async () => {
  const { r, devices, row } = await rig();
  try {
    await devices.markOnline('box-p', 's1', 1000);
    assert.equal(await devices.markOffline('box-p', 's1', 2000), true);
    assert.equal(await devices.markOffline('box-p', 's1', 3000), false, 'the same will again is no news');
    const after = await row();
    assert.equal(after.online, 0);
    assert.equal(after.last_disconnect_at, 2000);
    assert.equal(await devices.markOnline('box-p', 's1', 4000), false, 'the ended session does not come back');
    assert.equal((await row()).online, 0);
  } finally {
    await r.close();
  }
});

test("a will that arrives after the row was marked offline wholesale (a node's start) still ends its session", async () => {
  const { r, devices, row } = await rig();
  try {
    await devices.markOnline('box-p', 's1', 1000);
    await devices.markAllOffline(2000);
    assert.equal(await devices.markOffline('box-p', 's1', 3000), false, 'already offline: no second disconnect');
    assert.equal((await row()).ended_session, 's1');
    assert.equal(await devices.markOnline('box-p', 's1', 4000), false, 'a late online of that session is ignored');
    assert.equal((await row()).online, 0);
  } finally {
    await r.close();
  }
});

test('presence of several boxes reported in one turn is written together, each caller told its own outcome', async () => {
  const { r, devices } = await rig();
  try {
    await r.db.kysely
      .insertInto('devices')
      .values({
        uuid: 'box-q',
        code: 'BOX-Q',
        model: 'rig',
        secret_hash: 'unused',
        online: 0,
        created_at: r.clock.now(),
      })
      .execute();
    await devices.markOnline('box-q', 'q1', 1000);
    const outcomes = await Promise.all([
      devices.markOnline('box-p', 'p1', 2000), // new session: news
      devices.markOnline('box-q', 'q1', 2000), // the same again: none
      devices.markOffline('box-q', 'q0', 2000), // an older session's end: none
    ]);
    assert.deepEqual(outcomes, [true, false, false]);
    assert.equal(await devices.markOffline('box-q', 'q1', 3000), true);
    const rows = await r.db.kysely
      .selectFrom('devices')
      .select(['uuid', 'online', 'session'])
      .where('uuid', 'in', ['box-p', 'box-q'])
      .orderBy('uuid')
      .execute();
    assert.deepEqual(rows, [
      { uuid: 'box-p', online: 1, session: 'p1' },
      { uuid: 'box-q', online: 0, session: 'q1' },
    ]);
  } finally {
    await r.close();
  }
});

test("a batch keeps each box's own reports in the order they came, however many boxes it holds", async () => {
  const { r, devices } = await rig();
  try {
    // Boxes in an order that is not the uuids' (the batch sorts by uuid), each with a session
    // that began, ended and gave way to the next, all in one turn: a full batch and more.
    const boxes = Array.from({ length: 300 }, (_, n) => `box-${String((n * 7919) % 300).padStart(3, '0')}`);
    await r.db.kysely
      .insertInto('devices')
      .values(
        boxes.map((uuid) => ({
          uuid,
          code: uuid.toUpperCase(),
          model: 'rig',
          secret_hash: 'unused',
          online: 0,
          created_at: r.clock.now(),
        })),
      )
      .execute();
    const reports: Promise<boolean>[] = [];
    for (const uuid of boxes) reports.push(devices.markOnline(uuid, `${uuid}-a`, 1000));
    for (const uuid of boxes) reports.push(devices.markOffline(uuid, `${uuid}-a`, 2000));
    for (const uuid of boxes) reports.push(devices.markOnline(uuid, `${uuid}-b`, 3000));
    assert.ok((await Promise.all(reports)).every((changed) => changed));
    const rows = await r.db.kysely
      .selectFrom('devices')
      .select(['uuid', 'online', 'session', 'ended_session'])
      .where('uuid', 'in', boxes)
      .execute();
    assert.equal(rows.length, boxes.length);
    for (const row of rows) {
      assert.deepEqual(row, { uuid: row.uuid, online: 1, session: `${row.uuid}-b`, ended_session: `${row.uuid}-a` });
    }
  } finally {
    await r.close();
  }
});
