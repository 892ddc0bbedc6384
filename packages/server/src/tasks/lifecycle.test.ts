// TaskLifecycle on its own (docs/tasks.md): a real database and job runner, time on a
// ManualClock, a kind's hooks as small as a kind's can be (they end the task through the
// transition table and record what they were asked). The create writes the task with its
// expiry and, for a kind on a box, its `task.unacked` job; the acknowledgement is recorded once;
// a create that never finished is ended by that job when its time comes, and not before;
// expiry destroys the task; a trigger the table has no row for is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NoTransition } from '@boxhub/protocol';
import type { TaskRow } from '../db/schema.ts';
import type { Trx } from '../jobs/repository.ts';
import { startTaskRig, type TaskRig } from '../testing/task-rig.ts';
import { EXPIRE_JOB, UNACKED_AFTER_MS, UNACKED_JOB, type EndReason, type TaskKindHooks } from './lifecycle.ts';

interface Seen {
  acked: string[];
  ended: Array<{ task: string; why: EndReason; message: string | undefined }>;
  dropped: string[][];
}

/** Hooks of a box kind: the end is the table's (error code 99), and every call is recorded. */
function boxHooks(seen: Seen): TaskKindHooks {
  return {
    acked: async (_trx: Trx, task: TaskRow) => {
      seen.acked.push(task.uuid);
    },
    end: async (trx, task, why, now, message) => {
      seen.ended.push({ task: task.uuid, why, message });
      await rigTasks!.transition(trx, task, why, { error_code: 99, finished_at: now, error_message: message ?? null });
    },
    dropOnBox: async (_device, tasks) => {
      seen.dropped.push(tasks);
    },
  };
}
let rigTasks: TaskRig['tasks'] | undefined;

async function rig(): Promise<{ r: TaskRig; seen: Seen }> {
  const r = await startTaskRig();
  rigTasks = r.tasks;
  const seen: Seen = { acked: [], ended: [], dropped: [] };
  r.lifecycle.registerKind('scan', boxHooks(seen), { onBox: true });
  r.lifecycle.registerKind(
    'recognition',
    {
      end: async (trx, task, _why, now) => {
        await r.tasks.transition(trx, task, 'expire', { finished_at: now });
      },
      dropOnBox: async () => undefined,
    },
    { onBox: false },
  );
  return { r, seen };
}

const jobsOf = (r: TaskRig, ref: string) =>
  r.db.kysely.selectFrom('jobs').select(['kind', 'run_at']).where('ref', '=', ref).orderBy('kind').execute();
const historyOf = async (r: TaskRig, uuid: string) => (await r.tasks.history.list(uuid)).map((h) => h.what);

test('create: a box task is written with its expiry and its unacked job; a task without a box with its expiry alone', async () => {
  const { r } = await rig();
  try {
    const scan = r.newTask();
    const recognition = r.newTask({ kind: 'recognition', device_uuid: '' });
    await r.db.kysely.transaction().execute(async (trx) => {
      await r.lifecycle.create(trx, scan);
      await r.lifecycle.create(trx, recognition);
    });
    assert.equal((await r.tasks.find(r.db.kysely, scan.uuid))?.state, 'created');
    assert.deepEqual(
      (await jobsOf(r, scan.uuid)).map((j) => [j.kind, Number(j.run_at)]),
      [
        [EXPIRE_JOB, scan.expires_at],
        [UNACKED_JOB, scan.created_at + UNACKED_AFTER_MS],
      ],
    );
    assert.deepEqual(
      (await jobsOf(r, recognition.uuid)).map((j) => j.kind),
      [EXPIRE_JOB],
    );
    assert.deepEqual(await historyOf(r, scan.uuid), ['created']);
    assert.deepEqual(await historyOf(r, recognition.uuid), []);
  } finally {
    await r.close();
  }
});

test("acknowledge: received at the clock's time, the unacked job cancelled, the kind told once; a second acknowledgement only adds the boot", async () => {
  const { r, seen } = await rig();
  try {
    const t = r.newTask();
    await r.db.kysely.transaction().execute((trx) => r.lifecycle.create(trx, t));
    await r.clock.advance(1_500);
    const row = (await r.tasks.find(r.db.kysely, t.uuid))!;
    const after = await r.db.kysely.transaction().execute((trx) => r.lifecycle.acknowledge(trx, row, r.clock.now()));
    assert.equal(after.state, 'received');
    assert.equal(Number(after.acked_at), t.created_at + 1_500);
    assert.equal(after.box_boot, null);
    assert.deepEqual(
      (await jobsOf(r, t.uuid)).map((j) => j.kind),
      [EXPIRE_JOB],
      'the unacked job is gone',
    );
    assert.deepEqual(seen.acked, [t.uuid]);
    await r.clock.advance(1_000);
    const again = await r.db.kysely
      .transaction()
      .execute((trx) => r.lifecycle.acknowledge(trx, after, r.clock.now(), 'boot-2'));
    assert.equal(Number(again.acked_at), t.created_at + 1_500, 'acknowledged once');
    assert.equal(again.box_boot, 'boot-2');
    assert.deepEqual(seen.acked, [t.uuid], 'the kind is told once');
    assert.deepEqual(await historyOf(r, t.uuid), ['created', 'acknowledged']);
    // The command's answer and the first event handled at once: the later one, holding the row
    // as it was read before the other committed, records nothing and tells nobody.
    const late = await r.db.kysely.transaction().execute((trx) => r.lifecycle.acknowledge(trx, row, r.clock.now()));
    assert.equal(Number(late.acked_at), t.created_at + 1_500);
    assert.deepEqual(seen.acked, [t.uuid], 'print.ack would go out once');
    assert.deepEqual(await historyOf(r, t.uuid), ['created', 'acknowledged']);
  } finally {
    await r.close();
  }
});

test('acknowledge after the task ended (a cancel raced the create): recorded, once, and the kind told', async () => {
  const { r, seen } = await rig();
  try {
    const t = r.newTask();
    await r.db.kysely.transaction().execute((trx) => r.lifecycle.create(trx, t));
    await r.db.kysely.transaction().execute(async (trx) => {
      await r.lifecycle.end(trx, (await r.tasks.find(trx, t.uuid))!, 'unbind', r.clock.now());
    });
    const ended = (await r.tasks.find(r.db.kysely, t.uuid))!;
    await r.clock.advance(500);
    const after = await r.db.kysely
      .transaction()
      .execute((trx) => r.lifecycle.acknowledge(trx, ended, r.clock.now(), 'boot-1'));
    assert.equal(after.state, 'ended');
    assert.equal(Number(after.acked_at), r.clock.now());
    assert.equal(after.box_boot, 'boot-1');
    await r.db.kysely.transaction().execute((trx) => r.lifecycle.acknowledge(trx, ended, r.clock.now()));
    assert.deepEqual(seen.acked, [t.uuid]);
    assert.deepEqual(await historyOf(r, t.uuid), ['created', 'unbound', 'acknowledged']);
  } finally {
    await r.close();
  }
});

test('a create that never finished: its task.unacked job ends it through box.refused once its time comes, and the box is told to drop it', async () => {
  const { r, seen } = await rig();
  r.runner.register(r.lifecycle.unackedHandler());
  r.runner.start();
  try {
    const stuck = r.newTask();
    const acked = r.newTask({ device_uuid: 'box-2' });
    await r.db.kysely.transaction().execute(async (trx) => {
      await r.lifecycle.create(trx, stuck);
      await r.lifecycle.create(trx, acked);
    });
    await r.db.kysely.transaction().execute(async (trx) => {
      await r.lifecycle.acknowledge(trx, (await r.tasks.find(trx, acked.uuid))!, r.clock.now());
    });
    await r.clock.advance(UNACKED_AFTER_MS - 1);
    await r.runner.quiet({ inFlight: true });
    assert.deepEqual(seen.ended, [], 'not before its time');
    await r.clock.advance(1);
    await r.runner.quiet({ inFlight: true });
    assert.deepEqual(seen.ended, [{ task: stuck.uuid, why: 'box.refused', message: undefined }]);
    assert.deepEqual(seen.dropped, [[stuck.uuid]]);
    const row = (await r.tasks.find(r.db.kysely, stuck.uuid))!;
    assert.equal(row.state, 'ended');
    assert.equal(row.error_code, 99);
    assert.equal(
      (await r.tasks.find(r.db.kysely, acked.uuid))?.state,
      'received',
      'the acknowledged task is left alone',
    );
  } finally {
    await r.close();
  }
});

test('expiry: at expires_at an active task is ended through its kind, its files deleted and its row destroyed', async () => {
  const { r, seen } = await rig();
  r.runner.register(r.lifecycle.expiryHandler());
  r.runner.start();
  try {
    const t = r.newTask();
    await r.db.kysely.transaction().execute((trx) => r.lifecycle.create(trx, t));
    await r.blobs.put(`scan/${t.uuid}/1.pdf`, Buffer.from([1, 2, 3]), { contentType: 'application/pdf' });
    await r.clock.advance(t.expires_at - r.clock.now() - 1);
    await r.runner.quiet({ inFlight: true });
    assert.ok(await r.tasks.find(r.db.kysely, t.uuid), 'still there a millisecond before');
    await r.clock.advance(1);
    await r.runner.quiet({ inFlight: true });
    assert.equal(await r.tasks.find(r.db.kysely, t.uuid), undefined, 'destroyed');
    assert.equal(await r.blobs.stat(`scan/${t.uuid}/1.pdf`), undefined, 'its files deleted');
    assert.deepEqual(
      seen.ended.map((e) => [e.task, e.why]),
      [[t.uuid, 'expire']],
    );
    assert.deepEqual(seen.dropped, [[t.uuid]]);
  } finally {
    await r.close();
  }
});

test("transition: the target state is the table's; a trigger without a row for the kind throws and changes nothing", async () => {
  const { r } = await rig();
  try {
    const scan = r.newTask();
    const rec = r.newTask({ kind: 'recognition', device_uuid: '' });
    await r.db.kysely.transaction().execute(async (trx) => {
      await r.lifecycle.create(trx, scan);
      await r.lifecycle.create(trx, rec);
    });
    const moved = await r.tasks.transition(r.db.kysely, scan, 'box.ack', { acked_at: r.clock.now() });
    assert.equal(moved?.state, 'received');
    await assert.rejects(
      r.tasks.transition(r.db.kysely, scan, 'print.started', { started_at: r.clock.now() }),
      NoTransition,
    );
    await assert.rejects(
      r.tasks.transition(r.db.kysely, rec, 'box.ack'),
      /no row for trigger 'box.ack' of a recognition task/,
    );
    assert.equal((await r.tasks.find(r.db.kysely, scan.uuid))?.started_at, null, 'nothing written');
    assert.equal((await r.tasks.find(r.db.kysely, rec.uuid))?.state, 'created');
    const bound = await r.tasks.transition(r.db.kysely, rec, 'recognition.bound');
    assert.equal(bound?.state, 'received');
    // A race lost (the task is no longer in a source state) is no error: nothing happens.
    assert.equal(await r.tasks.transition(r.db.kysely, scan, 'box.ack'), undefined);
  } finally {
    await r.close();
  }
});

test("endForApp ends the application's box tasks on the device through their kind and drops them on the box; a task without a box is left", async () => {
  const { r, seen } = await rig();
  try {
    const scan = r.newTask();
    const rec = r.newTask({ kind: 'recognition', device_uuid: 'box-1' });
    await r.db.kysely.transaction().execute(async (trx) => {
      await r.lifecycle.create(trx, scan);
      await r.lifecycle.create(trx, rec);
    });
    assert.equal(await r.lifecycle.endForApp('app-1', 'box-1'), 1);
    assert.deepEqual(
      seen.ended.map((e) => [e.task, e.why]),
      [[scan.uuid, 'unbind']],
    );
    assert.deepEqual(seen.dropped, [[scan.uuid]]);
    assert.equal((await r.tasks.find(r.db.kysely, rec.uuid))?.state, 'created');
  } finally {
    await r.close();
  }
});

test("reconcile of several boxes in one turn (one read for all): each box's own tasks, a lost one ended, a held one kept, an unknown one dropped on its box", async () => {
  const { r, seen } = await rig();
  try {
    await r.addDevice('box-2', 1);
    const lost = r.newTask({ device_uuid: 'box-1' });
    const held = r.newTask({ device_uuid: 'box-2' });
    for (const t of [lost, held]) {
      await r.db.kysely.transaction().execute(async (trx) => {
        await r.lifecycle.create(trx, t);
        await r.lifecycle.acknowledge(trx, (await r.tasks.find(trx, t.uuid))!, r.clock.now(), 'boot-1');
      });
    }
    const stateOf = (boot: string, jobs: { task: string; kind: 'scan'; state: string }[]) =>
      ({ boot, jobs }) as unknown as Parameters<typeof r.lifecycle.reconcile>[1];
    // Both in the same turn: box-1 came back under a new boot without its task; box-2 under the
    // same boot holding its task, and a task the server never had. Read for one box with the
    // other's tasks, box-1 would end box-2's task too (its boot is not box-1's new one).
    await Promise.all([
      r.lifecycle.reconcile('box-1', stateOf('boot-2', [])),
      r.lifecycle.reconcile(
        'box-2',
        stateOf('boot-1', [
          { task: held.uuid, kind: 'scan', state: 'scanning' },
          { task: 'ghost', kind: 'scan', state: 'scanning' },
        ]),
      ),
    ]);
    assert.deepEqual(
      seen.ended.map((e) => [e.task, e.why]),
      [[lost.uuid, 'box.lost']],
    );
    assert.equal((await r.tasks.find(r.db.kysely, held.uuid))?.state, 'received');
    assert.deepEqual(seen.dropped, [['ghost']]);
  } finally {
    await r.close();
  }
});
