// JobEventRouter on its own (docs/box-protocol.md, "Jobs"): a real database and task lifecycle,
// time on a ManualClock, and a box side that records what the server sends it. Each event is
// applied once and in order per task, in one transaction with its id, its task's seq and its
// history; it is acknowledged only after the commit, and not at all while an earlier one is
// missing; a failed applier leaves nothing behind and no acknowledgement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { JobEvent } from '@boxhub/protocol';
import { startTaskRig } from '../testing/task-rig.ts';
import type { JobEventHandler } from './gateway.ts';
import { JobEventRouter } from './job-events.ts';

async function rig({ appliers = true } = {}) {
  const r = await startTaskRig();
  for (const kind of ['scan', 'print'] as const) {
    r.lifecycle.registerKind(kind, { end: async () => undefined, dropOnBox: async () => undefined }, { onBox: true });
  }
  const acks: string[] = [];
  let deliver: JobEventHandler | undefined;
  const router = new JobEventRouter({
    db: r.db.kysely,
    tasks: r.tasks,
    clock: r.clock,
    log: r.log,
    gateway: {
      onJobEvent: (h) => {
        deliver = h;
      },
      send: async (_device, type, params) => {
        if (type === 'events.ack') acks.push(...(params.ids as string[]));
      },
    },
  });
  router.beforeFirst = (trx, task, now) => r.lifecycle.acknowledge(trx, task, now);
  const applied: Array<{ task: string; state: string; item: number; now: number }> = [];
  const committed: string[] = [];
  let fail = false;
  const register = () =>
    router.on('scan', 'scan.item', async (trx, c) => {
      if (fail) throw new Error('the applier failed');
      applied.push({ task: c.task.uuid, state: c.task.state, item: c.event.data.item_id, now: c.now });
      await r.tasks.update(trx, c.task.uuid, { item_count: Number(c.task.item_count) + 1 });
      c.afterCommit(async () => {
        committed.push(c.event.id);
      });
    });
  if (appliers) register();
  const task = async (kind: 'scan' | 'print', device = 'box-1') => {
    const t = r.newTask({ kind, device_uuid: device });
    await r.db.kysely.transaction().execute((trx) => r.lifecycle.create(trx, t));
    return t.uuid;
  };
  const item = (taskUuid: string, seq: number, itemId = seq): JobEvent => ({
    v: 1,
    id: randomUUID(),
    task: taskUuid,
    seq,
    at: r.clock.now(),
    type: 'scan.item',
    data: { item_id: itemId, pages: [{ paper_number: 1, page_number: 1, front: true }], scanned_at: r.clock.now() },
  });
  /** Acknowledgements go out one turn of the event loop after the commit. */
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  return {
    r,
    router,
    acks,
    applied,
    committed,
    task,
    item,
    turn,
    deliver: () => deliver,
    register,
    setFail: (f: boolean) => {
      fail = f;
    },
  };
}

test("an event is applied once, in its task's order, and acknowledged after the commit", async () => {
  const x = await rig();
  const { r, router, acks, applied, committed } = x;
  try {
    assert.ok(x.deliver(), "the router takes the gateway's job events");
    const scan = await x.task('scan');
    await r.clock.advance(2_000);
    const first = x.item(scan, 1);
    assert.equal(await router.handle('box-1', first), 'applied');
    // The first event acknowledges the task for the box (its start command's answer may come later).
    assert.deepEqual(applied, [{ task: scan, state: 'received', item: 1, now: r.clock.now() }]);
    assert.deepEqual(committed, [first.id], 'after-commit work ran');
    const row = (await r.tasks.find(r.db.kysely, scan))!;
    assert.equal(row.last_seq, 1);
    assert.equal(row.item_count, 1);
    assert.equal(Number(row.acked_at), r.clock.now());
    assert.deepEqual(
      await r.db.kysely
        .selectFrom('box_events')
        .select(['id', 'seq', 'type', 'received_at'])
        .where('task_uuid', '=', scan)
        .execute(),
      [{ id: first.id, seq: 1, type: 'scan.item', received_at: r.clock.now() }],
    );
    assert.deepEqual(
      (await r.tasks.history.list(scan)).map((h) => h.what),
      ['created', 'acknowledged', 'item_stored'],
    );
    await x.turn();
    assert.deepEqual(acks, [first.id]);

    assert.equal(await router.handle('box-1', first), 'duplicate', 'sent again after a reconnect');
    assert.equal(applied.length, 1, 'not applied twice');
    const third = x.item(scan, 3);
    assert.equal(await router.handle('box-1', third), 'out-of-order');
    await x.turn();
    assert.deepEqual(acks, [first.id, first.id], 'the duplicate is acknowledged again; the early one is not');
    assert.equal(await router.handle('box-1', x.item(scan, 2)), 'applied');
    assert.equal(await router.handle('box-1', third), 'applied');
    assert.deepEqual(
      applied.map((a) => a.item),
      [1, 2, 3],
    );
    assert.equal((await r.tasks.find(r.db.kysely, scan))?.last_seq, 3);
  } finally {
    await r.close();
  }
});

test('an event for a task of another kind, another box or no task is acknowledged and dropped; invalid data too', async () => {
  const x = await rig();
  const { r, router, acks, applied } = x;
  try {
    const print = await x.task('print');
    const scan = await x.task('scan', 'box-2');
    const wrong = x.item(print, 1);
    assert.equal(await router.handle('box-1', wrong), 'wrong-kind');
    const row = (await r.tasks.find(r.db.kysely, print))!;
    assert.equal(row.last_seq, 0, "the print task's seq is untouched");
    assert.equal(row.acked_at, null, 'nor is it acknowledged');
    const other = x.item(scan, 1);
    assert.equal(await router.handle('box-1', other), 'unknown-task', "another box's task");
    const gone = x.item(randomUUID(), 1);
    assert.equal(await router.handle('box-1', gone), 'unknown-task');
    const invalid = { ...x.item(scan, 1), data: { item_id: 'one' } } as unknown as JobEvent;
    assert.equal(await router.handle('box-2', invalid), 'invalid');
    await x.turn();
    assert.deepEqual(acks.sort(), [wrong.id, other.id, gone.id, invalid.id].sort());
    assert.deepEqual(applied, []);
    assert.deepEqual(await r.db.kysely.selectFrom('box_events').select('id').execute(), []);
  } finally {
    await r.close();
  }
});

test("an applier that fails leaves nothing: no event id, no seq, no history, no acknowledgement; the box's next send applies it", async () => {
  const x = await rig();
  const { r, router, acks, applied, committed } = x;
  try {
    const scan = await x.task('scan');
    const e = x.item(scan, 1);
    x.setFail(true);
    await assert.rejects(router.handle('box-1', e), /the applier failed/);
    const row = (await r.tasks.find(r.db.kysely, scan))!;
    assert.equal(row.last_seq, 0);
    assert.equal(row.acked_at, null, 'the acknowledgement in its transaction is gone too');
    assert.deepEqual(await r.db.kysely.selectFrom('box_events').select('id').execute(), []);
    assert.deepEqual(
      (await r.tasks.history.list(scan)).map((h) => h.what),
      ['created'],
    );
    await x.turn();
    assert.deepEqual(acks, []);
    assert.deepEqual(committed, []);
    x.setFail(false);
    assert.equal(await router.handle('box-1', e), 'applied');
    assert.equal(applied.length, 1);
  } finally {
    await r.close();
  }
});

test('an event before its applier (a node still starting) is neither recorded nor acknowledged; sent again, it is applied', async () => {
  const x = await rig({ appliers: false });
  const { r, router, acks, applied } = x;
  try {
    const scan = await x.task('scan');
    const first = x.item(scan, 1);
    assert.equal(await router.handle('box-1', first), 'not-ready');
    await x.turn();
    assert.deepEqual(acks, [], 'not acknowledged: the box sends it again');
    const row = (await r.tasks.find(r.db.kysely, scan))!;
    assert.equal(row.last_seq, 0, "the task's seq is untouched");
    assert.equal(row.acked_at, null);
    assert.deepEqual(await r.db.kysely.selectFrom('box_events').select('id').execute(), []);
    assert.deepEqual(
      (await r.tasks.history.list(scan)).map((h) => h.what),
      ['created'],
    );

    x.register();
    assert.equal(await router.handle('box-1', first), 'applied');
    await x.turn();
    assert.deepEqual(acks, [first.id]);
    assert.deepEqual(
      applied.map((a) => a.item),
      [1],
    );
    assert.equal((await r.tasks.find(r.db.kysely, scan))?.last_seq, 1);
  } finally {
    await r.close();
  }
});
