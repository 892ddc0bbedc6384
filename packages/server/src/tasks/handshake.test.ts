// The create handshake (tasks/handshake.ts, docs/tasks.md "Creating a task") on its own: a real
// database and task lifecycle, time on a ManualClock, and a box side that answers each start
// command as the test says (takes it, refuses it, or stays silent until the command times out
// on the clock). Checked: what the row is after each answer, what the caller is told, and what
// the box is told to drop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type Ack, type CommandType } from '@boxhub/protocol';
import { eventually } from '../testing/harness.ts';
import { startTaskRig, type TaskRig } from '../testing/task-rig.ts';
import { CreateHandshake, type HandshakeSpec } from './handshake.ts';
import type { EndReason } from './lifecycle.ts';

const TIMEOUT_MS = 3_000;

interface Box {
  sent: Array<{ device: string; type: CommandType; params: Record<string, unknown> }>;
  answer: (params: Record<string, unknown>) => Ack | Promise<Ack> | 'silent';
}

async function rig() {
  const r = await startTaskRig();
  const ended: Array<{ task: string; why: EndReason; message: string | undefined }> = [];
  const dropped: string[][] = [];
  for (const kind of ['scan', 'print'] as const) {
    r.lifecycle.registerKind(
      kind,
      {
        end: async (trx, task, why, now, message) => {
          ended.push({ task: task.uuid, why, message });
          await r.tasks.transition(trx, task, why, {
            error_code: 77,
            finished_at: now,
            error_message: message ?? null,
          });
        },
        dropOnBox: async (_device, tasks) => {
          dropped.push(tasks);
        },
      },
      { onBox: true },
    );
  }
  const box: Box = { sent: [], answer: () => ({ v: 1, id: 'x', ok: true, data: { boot: 'boot-1' } }) };
  const handshake = new CreateHandshake({
    tasks: r.tasks,
    lifecycle: r.lifecycle,
    clock: r.clock,
    gateway: {
      command: (device, type, params = {}) => {
        box.sent.push({ device, type, params });
        const a = box.answer(params);
        if (a !== 'silent') return Promise.resolve(a);
        return new Promise((_resolve, reject) => {
          r.clock.setTimer(
            () => reject(new ApiError('DEVICE_TIMEOUT', `the box did not answer ${type} in ${TIMEOUT_MS} ms`)),
            TIMEOUT_MS,
          );
        });
      },
    },
  });
  return { r, handshake, box, ended, dropped };
}

function spec(r: TaskRig, o: Partial<HandshakeSpec> = {}, task: Partial<HandshakeSpec['task']> = {}): HandshakeSpec {
  const t = { ...r.newTask(), kind: 'scan' as const, ...task };
  return {
    task: t,
    command: 'scan.start',
    params: () => ({ task: t.uuid }),
    refusals: { busy: 'SCANNER_BUSY', not_supported: 'SCAN_OPTION_UNSUPPORTED' },
    ...o,
  };
}
const history = async (r: TaskRig, uuid: string) => (await r.tasks.history.list(uuid)).map((h) => h.what);

test("the box takes the task: the row is written, the command sent, the acknowledgement recorded with the box's boot", async () => {
  const { r, handshake, box, dropped } = await rig();
  try {
    let inTrx = 0;
    const s = spec(r, {
      alsoInTransaction: async () => {
        inTrx++;
      },
      sentDetail: { pages: 2 },
    });
    await handshake.run(s);
    assert.equal(inTrx, 1);
    assert.deepEqual(box.sent, [{ device: 'box-1', type: 'scan.start', params: { task: s.task.uuid } }]);
    const row = (await r.tasks.find(r.db.kysely, s.task.uuid))!;
    assert.equal(row.state, 'received');
    assert.equal(row.box_boot, 'boot-1');
    assert.equal(Number(row.acked_at), r.clock.now());
    assert.deepEqual(await history(r, s.task.uuid), ['created', 'sent', 'acknowledged']);
    assert.deepEqual((await r.tasks.history.list(s.task.uuid))[1]?.detail, { pages: 2 });
    assert.deepEqual(dropped, []);
  } finally {
    await r.close();
  }
});

test("the box refuses: the task is forgotten, the kind cleans up, and the caller gets the kind's error for the reason", async () => {
  const { r, handshake, box } = await rig();
  try {
    const cases: Array<[Ack['reason'], string]> = [
      ['busy', 'SCANNER_BUSY'],
      ['not_supported', 'SCAN_OPTION_UNSUPPORTED'],
      ['failed', 'DEVICE_REJECTED'],
    ];
    for (const [reason, key] of cases) {
      box.answer = () => ({ v: 1, id: 'x', ok: false, ...(reason ? { reason } : {}), message: 'no paper tray' });
      let cleaned = 0;
      const s = spec(r, {
        afterRefusal: async () => {
          cleaned++;
        },
      });
      await assert.rejects(
        handshake.run(s),
        (e: unknown) =>
          e instanceof ApiError && e.key === key && e.message === 'the box refused the scan: no paper tray',
      );
      assert.equal(await r.tasks.find(r.db.kysely, s.task.uuid), undefined, 'forgotten');
      assert.deepEqual(
        await r.db.kysely.selectFrom('jobs').select('kind').where('ref', '=', s.task.uuid).execute(),
        [],
        'with its jobs',
      );
      assert.equal(cleaned, 1);
    }
  } finally {
    await r.close();
  }
});

test('the box stays silent: when the command times out on the clock the task ends through box.refused and the caller is told which task', async () => {
  const { r, handshake, box, ended } = await rig();
  try {
    box.answer = () => 'silent';
    const s = spec(r, { unansweredMessage: 'the box did not acknowledge the task' }, { kind: 'print' });
    const run = handshake.run({ ...s, command: 'print.start' });
    const outcome = run.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    // The command's time-out runs from when it is sent (after the row is written).
    await eventually(() => box.sent.length === 1, 'the start command sent');
    await r.clock.advance(TIMEOUT_MS - 1);
    assert.equal(
      await Promise.race([outcome, new Promise((resolve) => setImmediate(() => resolve('pending')))]),
      'pending',
      'still waiting a millisecond before',
    );
    await r.clock.advance(1);
    const e = await outcome;
    assert.ok(e instanceof ApiError && e.key === 'DEVICE_TIMEOUT', String(e));
    assert.equal(
      e.message,
      `the box did not answer print.start in ${TIMEOUT_MS} ms; the print task ${s.task.uuid} was ended`,
    );
    assert.deepEqual(e.data, { uuid: s.task.uuid });
    assert.deepEqual(ended, [
      { task: s.task.uuid, why: 'box.refused', message: 'the box did not acknowledge the task' },
    ]);
    const row = (await r.tasks.find(r.db.kysely, s.task.uuid))!;
    assert.equal(row.state, 'ended');
    assert.equal(row.error_message, 'the box did not acknowledge the task');
  } finally {
    await r.close();
  }
});

test('a task ended while the box was taking it (a cancel raced the create) is dropped on the box', async () => {
  const { r, handshake, box, dropped } = await rig();
  try {
    const s = spec(r);
    box.answer = async () => {
      // The application's cancel or stop lands between the command and the box's answer.
      await r.db.kysely.transaction().execute(async (trx) => {
        const t = (await r.tasks.find(trx, s.task.uuid))!;
        await r.lifecycle.end(trx, t, 'unbind', r.clock.now());
      });
      return { v: 1, id: 'x', ok: true };
    };
    await handshake.run(s);
    assert.equal((await r.tasks.find(r.db.kysely, s.task.uuid))?.state, 'ended');
    assert.deepEqual(dropped, [[s.task.uuid]]);
  } finally {
    await r.close();
  }
});

test("the lock: a second create meets the first task and answers with the kind's error; a holder gone meanwhile is retried once, then the device is busy", async () => {
  const { r, handshake, box } = await rig();
  try {
    const first = spec(r);
    await handshake.run(first);
    const held = new ApiError('SCAN_EXISTS', 'a scan task is already active', { exist_uuid: first.task.uuid });
    const second = spec(r, { conflict: async () => held });
    await assert.rejects(handshake.run(second), (e: unknown) => e === held);
    assert.equal(await r.tasks.find(r.db.kysely, second.task.uuid), undefined);
    let looked = 0;
    const third = spec(r, {
      conflict: async () => {
        looked++;
        return undefined;
      },
    });
    await assert.rejects(
      handshake.run(third),
      (e: unknown) =>
        e instanceof ApiError && e.key === 'SERVICE_UNAVAILABLE' && /busy starting and ending scans/.test(e.message),
    );
    assert.equal(looked, 2, 'tried twice');
    // Without a lock of its kind, a unique violation is an error like any other.
    await assert.rejects(handshake.run(spec(r)), (e: unknown) => !(e instanceof ApiError));
    assert.equal(box.sent.length, 1, 'only the first create reached the box');
  } finally {
    await r.close();
  }
});

test('the box was unbound after the create checked its binding: no row, no command, the device is not found (docs/tasks.md, "Ownership ends with the binding")', async () => {
  const { r, handshake, box } = await rig();
  try {
    // What the unbind writes; its end of the application's tasks ran before this create's row.
    await r.db.kysely.updateTable('devices').set({ app_id: null }).where('uuid', '=', 'box-1').execute();
    const s = spec(r);
    await assert.rejects(handshake.run(s), (e: unknown) => e instanceof ApiError && e.key === 'DEVICE_NOT_FOUND');
    assert.equal(await r.tasks.find(r.db.kysely, s.task.uuid), undefined);
    assert.deepEqual(box.sent, []);
    // Bound again (to this application): the create goes through.
    await r.db.kysely.updateTable('devices').set({ app_id: 'app-1' }).where('uuid', '=', 'box-1').execute();
    await handshake.run(spec(r));
    assert.equal(box.sent.length, 1);
  } finally {
    await r.close();
  }
});

test("the box took the task but its acknowledgement cannot be recorded (the database went away): the create answers the task, left unacknowledged for the box's first event or task.unacked", async () => {
  const { r, handshake, box } = await rig();
  try {
    const s = spec(r);
    // A real failure of the acknowledging transaction: the tasks table is gone while the box answers.
    box.answer = async () => {
      await r.db.kysely.schema.alterTable('tasks').renameTo('tasks_away').execute();
      return { v: 1, id: 'x', ok: true, data: { boot: 'boot-1' } };
    };
    await handshake.run(s);
    await r.db.kysely.schema.alterTable('tasks_away').renameTo('tasks').execute();
    const row = await r.tasks.find(r.db.kysely, s.task.uuid);
    assert.equal(row?.state, 'created');
    assert.equal(row?.acked_at, null);
    assert.deepEqual(box.sent.length, 1);
  } finally {
    await r.close();
  }
});
