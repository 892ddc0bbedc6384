// An unbind's two rounds of ending the application's tasks (docs/tasks.md, "Ownership ends with
// the binding"): the first before the binding goes, the second after it, before the answer. A
// task created while the unbind ran is ended by the second round, or, where that round fails (a
// dependency down), by the `device.unbound` job written with the binding's removal: the unbind
// has succeeded once the binding is gone (before, the second round's failure answered 10503 for
// an unbind already done).
// A real database and job runner (the task rig), time on a ManualClock; the dependency's outage
// is a hook that throws, the one fault here not caused for real.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TaskRow } from '../../db/schema.ts';
import { startTaskRig, type TaskRig } from '../../testing/task-rig.ts';
import { DeviceRepository } from './repository.ts';
import { DeviceService, UNBOUND_AFTER_MS, UNBOUND_JOB } from './service.ts';

interface Rig {
  r: TaskRig;
  devices: DeviceService;
  /** The dependency the second round needs is down while this is true. */
  down: { now: boolean };
  /** Runs once, inside the first round: a create that lands while the unbind runs. */
  duringUnbind: () => Promise<void>;
}

async function rig(): Promise<Rig> {
  const r = await startTaskRig();
  for (const [kind, code] of [
    ['scan', 2206],
    ['print', 4206],
  ] as const) {
    r.lifecycle.registerKind(
      kind,
      {
        end: async (trx, task: TaskRow, why, now) => {
          await r.tasks.transition(trx, task, why, { error_code: code, finished_at: now });
        },
        dropOnBox: async () => undefined,
      },
      { onBox: true },
    );
  }
  const devices = new DeviceService(new DeviceRepository(r.db.kysely), r.clock, { jobs: r.jobs });
  const down = { now: false };
  let round = 0;
  const x: Rig = { r, devices, down, duringUnbind: async () => undefined };
  devices.onUnbind(async (appId, uuid, createdBefore) => {
    round++;
    if (round > 1 && down.now) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    const n = await r.lifecycle.endForApp(appId, uuid, createdBefore);
    if (round === 1) await x.duringUnbind();
    return n;
  });
  r.runner.register(devices.unboundHandler());
  r.runner.start();
  return x;
}

async function create(r: TaskRig, kind: 'scan' | 'print' = 'scan'): Promise<string> {
  const t = r.newTask({ kind });
  await r.db.kysely.transaction().execute((trx) => r.lifecycle.create(trx, t));
  return t.uuid;
}

const stateOf = async (r: TaskRig, uuid: string) => (await r.tasks.find(r.db.kysely, uuid))?.state;
const unboundJobs = (r: TaskRig) =>
  r.db.kysely.selectFrom('jobs').select('ref').where('kind', '=', UNBOUND_JOB).execute();

test('a task created while the unbind ran is ended before the unbind answers, and no job is left', async () => {
  const x = await rig();
  const { r, devices } = x;
  try {
    let late = '';
    x.duringUnbind = async () => {
      late = await create(r);
    };
    await devices.unbind('app-1', 'box-1');
    assert.equal(await stateOf(r, late), 'ended');
    assert.deepEqual(await unboundJobs(r), []);
  } finally {
    await r.close();
  }
});

test('a task created while the unbind ran is ended by the job where the second round failed, once the dependency it needs is back; the unbind itself succeeded', async () => {
  const x = await rig();
  const { r, devices, down } = x;
  try {
    const before = await create(r);
    let late = '';
    x.duringUnbind = async () => {
      late = await create(r);
    };
    down.now = true;
    await devices.unbind('app-1', 'box-1');
    assert.equal((await devices.registered('box-1')).uuid, 'box-1');
    assert.equal((await r.db.kysely.selectFrom('devices').select('app_id').executeTakeFirst())?.app_id, null);
    assert.equal(await stateOf(r, before), 'ended', 'the first round ended the task that was there');
    assert.notEqual(await stateOf(r, late), 'ended');
    assert.deepEqual(await unboundJobs(r), [{ ref: 'box-1/app-1' }]);
    await r.clock.advance(UNBOUND_AFTER_MS);
    await r.runner.quiet({ inFlight: true });
    assert.notEqual(await stateOf(r, late), 'ended', 'the job could not run yet');
    assert.deepEqual(await unboundJobs(r), [{ ref: 'box-1/app-1' }], 'it is still there, to be tried again');

    down.now = false;
    await r.clock.advance(30_000);
    await r.runner.quiet({ inFlight: true });
    assert.equal(await stateOf(r, late), 'ended');
    assert.equal((await r.tasks.find(r.db.kysely, late))?.error_code, 2206);
    assert.deepEqual(await unboundJobs(r), []);
  } finally {
    await r.close();
  }
});

test('when the application has bound the box again before the job runs, only the tasks of the earlier binding end', async () => {
  const x = await rig();
  const { r, devices, down } = x;
  try {
    let late = '';
    x.duringUnbind = async () => {
      late = await create(r);
    };
    down.now = true;
    await devices.unbind('app-1', 'box-1');
    await r.clock.advance(1_000);
    await devices.bind('app-1', { uuid: 'box-1', name: 'Room 1' });
    const fresh = await create(r, 'print'); // the late scan still holds the scanner

    down.now = false;
    await r.clock.advance(UNBOUND_AFTER_MS);
    await r.runner.quiet({ inFlight: true });
    assert.equal(await stateOf(r, late), 'ended');
    assert.equal(await stateOf(r, fresh), 'created', "the new binding's task is left");
    assert.deepEqual(await unboundJobs(r), []);
  } finally {
    await r.close();
  }
});

test('an unbind whose first round fails answers the failure and leaves the box bound, with no job', async () => {
  const r = await startTaskRig();
  try {
    const devices = new DeviceService(new DeviceRepository(r.db.kysely), r.clock, { jobs: r.jobs });
    devices.onUnbind(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    });
    await assert.rejects(devices.unbind('app-1', 'box-1'), /ECONNREFUSED/);
    assert.equal((await r.db.kysely.selectFrom('devices').select('app_id').executeTakeFirst())?.app_id, 'app-1');
    assert.deepEqual(await unboundJobs(r), []);
  } finally {
    await r.close();
  }
});
