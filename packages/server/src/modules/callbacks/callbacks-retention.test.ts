// Retention: completed callbacks and their attempts are deleted once older than
// BOXHUB_CALLBACK_RETENTION_DAYS; pending ones and recent ones stay. Time is an injected clock
// moved forward by 31 days, so nothing waits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { eventually, startTestServer, type TestServer } from '../../testing/harness.ts';
import { startReceiver, type Receiver } from '../../testing/receiver.ts';
import { CallbackRetention } from './retention.ts';

const DAY = 86_400_000;
let offset = 0;
const clock = { now: () => Date.now() + offset };
let t: TestServer;
let ok: Receiver;
let failing: Receiver;

before(async () => {
  ok = await startReceiver();
  failing = await startReceiver();
  failing.answer(500);
  t = await startTestServer({ clock, env: {
    BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_CALLBACK_RETENTION_DAYS: '30',
    // A failed first attempt leaves the callback pending for a minute: long enough to sweep.
    BOXHUB_CALLBACK_RETRY_DELAYS_MS: '60000',
  } });
});
after(async () => { await t.close(); await ok.close(); await failing.close(); });

describe('callback retention', () => {
  test('deletes completed callbacks past retention with their attempts; keeps recent and pending ones', async () => {
    const app = await t.createApp();
    const other = await t.createApp();
    const send = async (a: typeof app, url: string) => {
      const r = await a.api.post<{ id: string }>('/api/application/callback/test', { callback_url: url });
      assert.equal(r.code, 0, r.msg);
      return r.data.id;
    };
    const status = async (a: typeof app, id: string) => {
      const r = await a.api.get<{ callbacks: { id: string; status: string; attempts: unknown[] }[] }>('/api/application/callback/list', { page: 1 });
      return r.data.callbacks.find((c) => c.id === id);
    };
    const settled = (a: typeof app, id: string, want: string) =>
      eventually(async () => (await status(a, id))?.status === want, `${id} ${want}`, 10_000);

    const old1 = await send(app, ok.url);
    const old2 = await send(other, ok.url);
    await settled(app, old1, 'delivered');
    await settled(other, old2, 'delivered');
    offset += 31 * DAY;
    const recent = await send(app, ok.url);
    await settled(app, recent, 'delivered');
    const pending = await send(app, failing.url);
    await eventually(async () => ((await status(app, pending))?.attempts.length ?? 0) === 1, 'first failed attempt');
    assert.equal((await status(app, pending))?.status, 'pending');

    // Batches of one: the sweep keeps going until a batch comes back short.
    const retention = new CallbackRetention({ repo: t.server.repos.callbacks, clock, log: pino({ level: 'silent' }), retentionMs: 30 * DAY, intervalMs: DAY, batchSize: 1 });
    assert.equal(await retention.sweep(), 2, 'the two old callbacks, across applications');

    assert.equal(await status(app, old1), undefined);
    assert.equal(await status(other, old2), undefined);
    assert.equal((await status(app, recent))?.status, 'delivered');
    assert.equal((await status(app, pending))?.status, 'pending');
    const orphans = await t.server.db.kysely.selectFrom('callback_attempts').select('id')
      .where('callback_id', 'in', [old1, old2]).execute();
    assert.equal(orphans.length, 0, 'attempts deleted with their callback');
    const kept = await t.server.db.kysely.selectFrom('callback_attempts').select('id')
      .where('callback_id', 'in', [recent, pending]).execute();
    assert.equal(kept.length, 2);
    // A deleted callback is gone for replay too: a clear error, not a resend.
    const replay = await app.api.post('/api/application/callback/replay', { id: old1 });
    assert.notEqual(replay.code, 0);
    assert.match(replay.msg, /no callback/);
    assert.equal(await retention.sweep(), 0, 'nothing left to delete');
  });

  test('retention 0 keeps everything', async () => {
    const keepAll = new CallbackRetention({ repo: t.server.repos.callbacks, clock: { now: () => Date.now() + 10_000 * DAY }, log: pino({ level: 'silent' }), retentionMs: 0, intervalMs: DAY });
    const before = await t.server.db.kysely.selectFrom('callbacks').select('id').execute();
    assert.ok(before.length > 0);
    assert.equal(await keepAll.sweep(), 0);
    const after = await t.server.db.kysely.selectFrom('callbacks').select('id').execute();
    assert.equal(after.length, before.length);
  });

  test('the server runs its own sweep with the configured retention', () => {
    assert.equal(t.server.config.callbackRetentionMs, 30 * DAY);
    assert.ok(t.server.callbackRetention instanceof CallbackRetention);
  });
});
