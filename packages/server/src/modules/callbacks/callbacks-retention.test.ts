// Retention: completed callbacks and their attempts are deleted once older than
// BOXHUB_CALLBACK_RETENTION_DAYS by the server's own hourly sweep job; pending ones and recent
// ones stay. Time is a ManualClock moved forward by a month, so nothing waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { eventually, startTestServer, type TestServer } from '../../testing/harness.ts';
import { ManualClock } from '../../testing/manual-clock.ts';
import { startReceiver } from '../../testing/receiver.ts';
import { sweepCallbacks } from './retention.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
type App = Awaited<ReturnType<TestServer['createApp']>>;

async function send(a: App, url: string): Promise<string> {
  const r = await a.api.post<{ id: string }>('/api/application/callback/test', { callback_url: url });
  assert.equal(r.code, 0, r.msg);
  return r.data.id;
}
async function status(a: App, id: string) {
  const r = await a.api.get<{ callbacks: { id: string; status: string; attempts: unknown[] }[] }>(
    '/api/application/callback/list',
    { page: 1 },
  );
  return r.data.callbacks.find((c) => c.id === id);
}
const settled = (a: App, id: string, want: string) =>
  eventually(async () => (await status(a, id))?.status === want, `${id} ${want}`);

test('the hourly sweep deletes completed callbacks past retention with their attempts; recent and pending ones stay', async () => {
  const clock = new ManualClock();
  const t = await startTestServer({
    clock,
    env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_CALLBACK_RETENTION_DAYS: '30' },
  });
  const ok = await startReceiver();
  const failing = await startReceiver();
  failing.answer(500);
  try {
    const app = await t.createApp();
    const other = await t.createApp();
    const old1 = await send(app, ok.url);
    const old2 = await send(other, ok.url);
    await settled(app, old1, 'delivered');
    await settled(other, old2, 'delivered');

    await clock.advance(29 * DAY);
    await t.server.jobRunner.quiet();
    assert.equal((await status(app, old1))?.status, 'delivered', '29 days old: kept');

    await clock.advance(2 * DAY);
    await t.server.jobRunner.quiet();
    await eventually(async () => (await status(app, old1)) === undefined, 'the sweep job ran');
    assert.equal(await status(other, old2), undefined, 'across applications');
    const orphans = await t.server.db.kysely
      .selectFrom('callback_attempts')
      .select('id')
      .where('callback_id', 'in', [old1, old2])
      .execute();
    assert.equal(orphans.length, 0, 'attempts deleted with their callback');

    const recent = await send(app, ok.url);
    await settled(app, recent, 'delivered');
    const pending = await send(app, failing.url);
    await eventually(async () => ((await status(app, pending))?.attempts.length ?? 0) === 1, 'first failed attempt');
    // The next retry is 8 s away: an hour's sweep in between must keep the pending callback.
    await clock.advance(HOUR);
    await t.server.jobRunner.quiet();
    assert.equal((await status(app, recent))?.status, 'delivered');
    assert.equal((await status(app, pending))?.status, 'pending');
    const kept = await t.server.db.kysely
      .selectFrom('callback_attempts')
      .select('id')
      .where('callback_id', 'in', [recent, pending])
      .execute();
    assert.ok(kept.length >= 2);

    // A deleted callback is gone for replay too: a clear error, not a resend.
    const replay = await app.api.post('/api/application/callback/replay', { id: old1 });
    assert.equal(replay.code, 20404);
    assert.match(replay.msg, /no callback/);
    assert.equal(await t.server.sweepCallbacks(), 0, 'nothing left to delete');
  } finally {
    await t.close();
    await ok.close();
    await failing.close();
  }
});

test('the sweep works in batches until one comes back short', async () => {
  const clock = new ManualClock();
  // The server's own sweep is off here, so this one finds everything.
  const t = await startTestServer({
    clock,
    env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_CALLBACK_RETENTION_DAYS: '0' },
  });
  const ok = await startReceiver();
  try {
    const app = await t.createApp();
    const ids = [await send(app, ok.url), await send(app, ok.url), await send(app, ok.url)];
    for (const id of ids) await settled(app, id, 'delivered');
    await clock.advance(31 * DAY);
    const n = await sweepCallbacks({
      repo: t.server.repos.callbacks,
      clock,
      log: pino({ level: 'silent' }),
      retentionMs: 30 * DAY,
      intervalMs: HOUR,
      batchSize: 1,
    });
    assert.equal(n, 3);
  } finally {
    await t.close();
    await ok.close();
  }
});

test('retention 0 keeps everything and schedules no sweep', async () => {
  const clock = new ManualClock();
  const t = await startTestServer({
    clock,
    env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_CALLBACK_RETENTION_DAYS: '0' },
  });
  const ok = await startReceiver();
  try {
    const app = await t.createApp();
    const id = await send(app, ok.url);
    await settled(app, id, 'delivered');
    await clock.advance(400 * DAY);
    await t.server.jobRunner.quiet();
    assert.equal((await status(app, id))?.status, 'delivered');
    const sweeps = await t.server.db.kysely
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', 'callbacks.retention')
      .execute();
    assert.equal(sweeps.length, 0);
  } finally {
    await t.close();
    await ok.close();
  }
});
