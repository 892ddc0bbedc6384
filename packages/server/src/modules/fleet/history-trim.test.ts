// A box's recent history (docs/fleet.md, "A box's recent history"): 200 entries kept, trimmed
// once in TRIM_EVERY entries rather than after each (FleetService.record), on the real database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../testing/harness.ts';
import { ManualClock } from '../../testing/manual-clock.ts';
import { HISTORY_KEEP, TRIM_EVERY } from './service.ts';

let s: TestServer;
const clock = new ManualClock();
before(async () => {
  s = await startTestServer({ clock });
});
after(() => s.close());

async function stored(uuid: string): Promise<number> {
  const r = await s.server.db.kysely
    .selectFrom('device_history')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('device_uuid', '=', uuid)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

test('a box keeps its newest HISTORY_KEEP entries, trimmed once in TRIM_EVERY, never fewer', async () => {
  const { uuid } = await s.registerDevice();
  const fleet = s.server.services.fleet;
  const counts: number[] = [];
  for (let i = 0; i < HISTORY_KEEP + 3 * TRIM_EVERY; i++) {
    await clock.advance(1000);
    await fleet.record(uuid, i % 2 ? 'connect' : 'disconnect', null);
    counts.push(await stored(uuid));
  }
  // Never fewer than it may keep, never more than a trim's worth over it.
  counts.forEach((n, i) => {
    assert.ok(n <= i + 1 && n >= Math.min(i + 1, HISTORY_KEEP), `after ${i + 1} entries ${n} stored`);
  });
  assert.ok(Math.max(...counts) <= HISTORY_KEEP + TRIM_EVERY, `at most ${HISTORY_KEEP + TRIM_EVERY} stored`);
  // It was trimmed: past HISTORY_KEEP + TRIM_EVERY entries recorded, the count came back down.
  assert.ok(
    counts.some((n, i) => i > 0 && n < (counts[i - 1] ?? 0)),
    'the history was trimmed',
  );
  // What is shown is the newest, in order.
  const shown = await fleet.history(uuid);
  assert.equal(shown.length, 50);
  assert.deepEqual(
    shown.map((e) => e.at),
    [...shown.map((e) => e.at)].sort((a, b) => b - a),
  );
  assert.equal(shown[0]?.at, clock.now());
});
