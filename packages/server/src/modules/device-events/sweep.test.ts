// A node's start marks every box offline at once (docs/callbacks.md, "Damping"): one sweep job
// per 100 boxes closes their windows together, and only a box that still differs then gets its
// event; a box back in time sends nothing. Real database and job runner, time on a ManualClock;
// the callback outbox is a recorder (the events' delivery is the callbacks' own tests').
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EnqueueInput } from '../callbacks/service.ts';
import { DeviceRepository } from '../devices/repository.ts';
import { startTaskRig } from '../../testing/task-rig.ts';
import { DeviceEventRepository } from './repository.ts';
import { DEVICE_EVENT_JOB, DEVICE_EVENT_SWEEP_JOB, DeviceEventService } from './service.ts';

const SETTLE_MS = 30_000;

test("a node's start: one sweep job for its boxes; when the window closes, device.offline for the box still away and nothing for the box back", async () => {
  const r = await startTaskRig();
  try {
    const db = r.db.kysely;
    await r.addDevice('box-2');
    await db
      .insertInto('device_callbacks')
      .values({ app_id: 'app-1', url: 'https://app.example/devices', updated_at: r.clock.now() })
      .execute();
    const sent: EnqueueInput[] = [];
    const devices = new DeviceRepository(db);
    const events = new DeviceEventService({
      repo: new DeviceEventRepository(db),
      callbacks: {
        checkUrl: async () => undefined, // the device callback URL is not set through the service here
        enqueue: async (_trx, input) => {
          sent.push(input);
          return String(sent.length);
        },
      },
      jobs: r.jobs,
      clock: r.clock,
      log: r.log,
      settleMs: SETTLE_MS,
    });
    r.runner.register(events.handler());
    r.runner.register(events.sweepHandler());
    r.runner.start();
    const jobs = async (kind: string) =>
      (await db.selectFrom('jobs').select('ref').where('kind', '=', kind).execute()).map((j) => j.ref);

    // Both boxes online: the first state the server sees is the baseline (no event).
    for (const uuid of ['box-1', 'box-2']) {
      await devices.markOnline(uuid, 'first', r.clock.now());
      await events.seen(uuid);
    }
    await r.clock.advance(SETTLE_MS);
    await r.runner.quiet({ inFlight: true });
    assert.equal(sent.length, 0);

    // The node starts again: both marked offline, one sweep job and no window per box.
    const startedAt = r.clock.now();
    const marked = await devices.markAllOffline(startedAt);
    assert.deepEqual([...marked].sort(), ['box-1', 'box-2']);
    await events.seenMany(marked);
    assert.equal((await jobs(DEVICE_EVENT_SWEEP_JOB)).length, 1);
    assert.deepEqual(await jobs(DEVICE_EVENT_JOB), []);

    // box-2 is back within the window; box-1 is not.
    await r.clock.advance(5_000);
    await devices.markOnline('box-2', 'second', r.clock.now());
    await events.seen('box-2');
    await r.clock.advance(SETTLE_MS - 5_000 - 1);
    await r.runner.quiet({ inFlight: true });
    assert.equal(sent.length, 0, 'nothing before the window closes');

    await r.clock.advance(1);
    await r.runner.quiet({ inFlight: true });
    assert.deepEqual(
      sent.map((e) => [
        e.event,
        (e.body as { client_uuid: string }).client_uuid,
        (e.body as { changed_at: number }).changed_at,
      ]),
      [['device.offline', 'box-1', startedAt]],
    );
    assert.deepEqual(await jobs(DEVICE_EVENT_SWEEP_JOB), []);
    assert.deepEqual(await jobs(DEVICE_EVENT_JOB), []);
  } finally {
    await r.close();
  }
});
