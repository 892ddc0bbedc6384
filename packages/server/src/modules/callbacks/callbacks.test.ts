// Callback delivery against real receivers on port 0 (docs/api.md, "Callbacks", "Limits";
// docs/callbacks.md), on the API's own schedule: 5 s to answer, retries
// 8, 13 and 21 s after each failure. Time is a ManualClock moved by the tests, so every attempt
// time the server records is checked exactly, without waiting 42 seconds.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestServer, type TestServer } from '../../testing/harness.ts';
import { ManualClock } from '../../testing/manual-clock.ts';
import { startReceiver, type Receiver } from '../../testing/receiver.ts';
import { verify } from './signing.ts';

const TIMEOUT = 5000;
const DELAYS = [8000, 13000, 21000];

type Cb = {
  id: string;
  status: string;
  event: string;
  task_uuid?: string;
  waiting_for?: string;
  next_attempt_at?: number;
  attempts: { at: number; latency_ms: number; status_code?: number; error?: string }[];
};
type ListData = { page: number; page_size: number; total: number; callbacks: Cb[] };
type App = Awaited<ReturnType<TestServer['createApp']>>;

let t: TestServer;
let rx: Receiver;
const clock = new ManualClock();

before(async () => {
  rx = await startReceiver();
  t = await startTestServer({
    clock,
    env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_CALLBACK_SECRET_GRACE_MS: '60000' },
  });
});
after(async () => {
  await t.close();
  await rx.close();
});

async function sendTest(api: App['api'], url = rx.url): Promise<string> {
  const r = await api.post<{ id: string }>('/api/application/callback/test', { callback_url: url });
  assert.equal(r.code, 0, r.msg);
  return r.data.id;
}

async function callback(api: App['api'], id: string): Promise<Cb | undefined> {
  const r = await api.get<ListData>('/api/application/callback/list', { page: 1 });
  return r.data.callbacks.find((c) => c.id === id);
}

/** Waits (for real I/O, not for time) until the callback has `n` recorded attempts. */
const attempts = (api: App['api'], id: string, n: number) =>
  eventually(async () => {
    const c = await callback(api, id);
    return c && c.attempts.length >= n ? c : undefined;
  }, `${n} attempts of ${id}`);

const settled = (api: App['api'], id: string) =>
  eventually(async () => {
    const c = await callback(api, id);
    return c && c.status !== 'pending' ? c : undefined;
  }, `callback ${id} to settle`);

/** Moves the clock and lets the job runner claim whatever fell due. */
async function advance(ms: number): Promise<void> {
  await clock.advance(ms);
  await t.server.jobRunner.quiet();
}

describe('delivery', () => {
  test('spec headers, Standard Webhooks signature and the test event body', async () => {
    const app = await t.createApp();
    rx.decide(undefined);
    rx.answer(200);
    const id = await sendTest(app.api);
    const [r] = await eventually(() => (rx.byId(id).length ? rx.byId(id) : undefined), 'test event');
    assert.ok(r);
    assert.ok(
      verify(
        app.callback_secret,
        { id, timestamp: String(r.headers['webhook-timestamp']), signature: String(r.headers['webhook-signature']) },
        r.body,
        Math.floor(clock.now() / 1000),
      ),
    );
    assert.ok(r);
    assert.equal(r.method, 'POST');
    assert.equal(r.headers['user-agent'], 'SVC');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['x-svc-callback-id'], id);
    assert.equal(r.headers['webhook-id'], id);
    const ts = Number(r.headers['webhook-timestamp']);
    assert.equal(ts, Math.floor(clock.now() / 1000), "webhook-timestamp is the service's now, in seconds");
    const sig = String(r.headers['webhook-signature']);
    assert.match(sig, /^v1,[A-Za-z0-9+/=]+$/);
    assert.ok(
      verify(app.callback_secret, { id, timestamp: String(ts), signature: sig }, r.body, ts),
      'signature verifies with the app secret',
    );
    assert.ok(
      !verify(app.callback_secret, { id, timestamp: String(ts), signature: sig }, `${r.body} `, ts),
      'a changed body does not verify',
    );
    const body = JSON.parse(r.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['created_at', 'event', 'id']);
    assert.equal(body.event, 'callback.test');
    assert.equal(body.id, id);
    const cb = await settled(app.api, id);
    assert.equal(cb.status, 'delivered');
    assert.equal(cb.attempts.length, 1);
    assert.equal(cb.attempts[0]?.status_code, 200);
    assert.equal(cb.attempts[0]?.error, undefined);
    assert.equal(cb.attempts[0]?.at, clock.now());
  });

  test('500 is retried 3 times, exactly 8, 13 and 21 s after each failure, never early, same id every time', async () => {
    const app = await t.createApp();
    const own = await startReceiver();
    own.answer(500);
    try {
      const id = await sendTest(app.api, own.url);
      let cb = await attempts(app.api, id, 1);
      for (const [i, delay] of DELAYS.entries()) {
        const failedAt = cb.attempts[i]!.at;
        assert.equal(cb.next_attempt_at, failedAt + delay, `retry ${i + 1} is scheduled ${delay} ms after the failure`);
        await advance(delay - 1);
        assert.equal(own.byId(id).length, i + 1, `retry ${i + 1} not sent 1 ms early`);
        await advance(1);
        cb = await attempts(app.api, id, i + 2);
        assert.equal(cb.attempts[i + 1]!.at - failedAt, delay, `retry ${i + 1} exactly ${delay} ms after the failure`);
      }
      cb = await settled(app.api, id);
      const rs = own.byId(id);
      assert.equal(rs.length, 4, '1 attempt + 3 retries');
      assert.ok(rs.every((r) => r.headers['x-svc-callback-id'] === id && r.headers['webhook-id'] === id));
      assert.equal(cb.status, 'failed');
      assert.deepEqual(
        cb.attempts.map((a) => a.status_code),
        [500, 500, 500, 500],
      );
      assert.ok(cb.attempts.every((a) => /500/.test(a.error ?? '')));
      await advance(60_000);
      assert.equal(own.byId(id).length, 4, 'nothing after the last retry');
      // Each retry carries a fresh timestamp and signature (Standard Webhooks receivers reject stale ones).
      assert.deepEqual(
        rs.map((r) => Number(r.headers['webhook-timestamp'])),
        cb.attempts.map((a) => Math.floor(a.at / 1000)),
      );
      assert.ok(
        rs.every((r) =>
          verify(
            app.callback_secret,
            {
              id,
              timestamp: String(r.headers['webhook-timestamp']),
              signature: String(r.headers['webhook-signature']),
            },
            r.body,
            Number(r.headers['webhook-timestamp']),
          ),
        ),
      );
    } finally {
      await own.close();
    }
  });

  test('a silent receiver times out after 5 s; the retry comes 8 s after the timeout; recovery stops the retries', async () => {
    const app = await t.createApp();
    const own = await startReceiver();
    own.decide((_r, n) => (n === 1 ? 'silent' : 200));
    try {
      const id = await sendTest(app.api, own.url);
      await eventually(() => own.byId(id).length === 1, 'first attempt sent');
      await advance(TIMEOUT - 1);
      assert.equal(
        (await callback(app.api, id))?.attempts.length,
        0,
        'still waiting for an answer 1 ms before the deadline',
      );
      await advance(1);
      let cb = await attempts(app.api, id, 1);
      assert.match(cb.attempts[0]?.error ?? '', /no answer within 5000 ms/);
      assert.equal(
        cb.next_attempt_at,
        cb.attempts[0]!.at + TIMEOUT + DELAYS[0]!,
        'the retry is counted from the failure (the deadline)',
      );
      await advance(DELAYS[0]!);
      cb = await settled(app.api, id);
      assert.equal(cb.status, 'delivered');
      assert.equal(cb.attempts.length, 2);
      assert.equal(cb.attempts[1]?.status_code, 200);
      assert.equal(cb.attempts[1]!.at - cb.attempts[0]!.at, TIMEOUT + DELAYS[0]!);
      await advance(60_000);
      assert.equal(own.byId(id).length, 2, 'no attempt after the delivery');
    } finally {
      await own.close();
    }
  });

  test('a huge answer is cut off and does not hold the worker; a redirect is not followed', async () => {
    const app = await t.createApp();
    const own = await startReceiver();
    const target = await startReceiver();
    try {
      own.answer('huge');
      const id = await sendTest(app.api, own.url);
      const cb = await settled(app.api, id);
      assert.equal(cb.status, 'delivered');
      assert.ok(cb.attempts[0]!.latency_ms < TIMEOUT, 'the body was not read to its end');

      own.answer({ status: 302, headers: { location: target.url } });
      const id2 = await sendTest(app.api, own.url);
      for (const [i, delay] of DELAYS.entries()) {
        await attempts(app.api, id2, i + 1);
        await advance(delay);
      }
      const cb2 = await settled(app.api, id2);
      assert.equal(cb2.status, 'failed');
      assert.deepEqual(
        cb2.attempts.map((a) => a.status_code),
        [302, 302, 302, 302],
      );
      assert.equal(target.received.length, 0, 'the redirect target was never called');
    } finally {
      await own.close();
      await target.close();
    }
  });

  test("enqueue commits with the caller's transaction, or not at all", async () => {
    const app = await t.createApp();
    const own = await startReceiver();
    try {
      const svc = t.server.services.callbacks;
      const db = t.server.db.kysely;
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await svc.enqueue(trx, {
            appId: app.id,
            url: own.url,
            method: 'POST',
            event: 'scan.finish',
            body: { rolled: 'back' },
          });
          throw new Error('state change failed');
        }),
        /state change failed/,
      );
      const id = await db.transaction().execute((trx) =>
        svc.enqueue(trx, {
          appId: app.id,
          url: own.url,
          method: 'PUT',
          event: 'scan.finish',
          taskUuid: 'task-1',
          body: { kept: true },
        }),
      );
      await eventually(() => own.byId(id).length === 1, 'the committed callback');
      const list = await app.api.get<ListData>('/api/application/callback/list', { page: 1 });
      assert.equal(list.data.total, 1, 'the rolled-back callback does not exist');
      assert.equal(own.received.length, 1);
      assert.equal(own.received[0]?.method, 'PUT');
      assert.equal(own.received[0]?.body, '{"kept":true}');
    } finally {
      await own.close();
    }
  });

  test('the recognition end callback waits until every result callback has completed, and goes as soon as they have', async () => {
    const app = await t.createApp();
    const own = await startReceiver();
    const task = 'rec-task-1';
    // Result 1 fails twice, result 2 fails for good, result 3 succeeds at once.
    const fails: Record<string, number> = { r1: 2, r2: 99 };
    own.decide((r) => {
      const s = (JSON.parse(r.body) as { student?: string }).student;
      if (s && (fails[s] ?? 0) > 0) {
        fails[s]!--;
        return 500;
      }
      return 200;
    });
    try {
      const svc = t.server.services.callbacks;
      const group = `recognition:${task}:results`;
      const ids = await t.server.db.kysely.transaction().execute(async (trx) => {
        const out: string[] = [];
        for (const s of ['r1', 'r2', 'r3']) {
          out.push(
            await svc.enqueue(trx, {
              appId: app.id,
              url: own.url,
              method: 'POST',
              event: 'recognition.result',
              taskUuid: task,
              group,
              body: { uuid: task, finish: false, error_code: 0, student: s },
            }),
          );
        }
        out.push(
          await svc.enqueue(trx, {
            appId: app.id,
            url: own.url,
            method: 'PUT',
            event: 'recognition.end',
            taskUuid: task,
            waitFor: group,
            body: { uuid: task, finish: true },
          }),
        );
        return out;
      });
      const endId = ids[3]!;
      await attempts(app.api, ids[1]!, 1);
      // r2 is retried at 8, 8+13 and 8+13+21 s; the end waits for its last failure.
      for (const [i, delay] of DELAYS.entries()) {
        await advance(delay);
        await attempts(app.api, ids[1]!, i + 2);
        if (i < DELAYS.length - 1)
          assert.equal(own.byId(endId).length, 0, `no end callback while r2 is pending (after retry ${i + 1})`);
      }
      await eventually(() => own.byId(endId).length === 1, 'end callback');
      const end = own.byId(endId)[0]!;
      assert.equal(end.method, 'PUT');
      assert.deepEqual(JSON.parse(end.body), { uuid: task, finish: true });
      const results = own.received.filter((r) => r.id !== endId);
      assert.equal(results.length, 3 + 4 + 1, 'r1: 3 attempts, r2: 4 attempts, r3: 1 attempt');
      const lastResult = Math.max(...results.map((r) => r.answeredAt!));
      assert.ok(end.at >= lastResult, 'the end callback came after the last result attempt was answered');
      const list = await eventually(async () => {
        const l = await app.api.get<ListData>('/api/application/callback/list', { page: 1, task_uuid: task });
        return l.data.callbacks.every((c) => c.status !== 'pending') ? l : undefined;
      }, 'all four recorded as completed');
      assert.equal(list.data.total, 4);
      const byId = new Map(list.data.callbacks.map((c) => [c.id, c]));
      assert.equal(byId.get(ids[1]!)?.status, 'failed');
      assert.equal(byId.get(endId)?.status, 'delivered');
      const r2Last = byId.get(ids[1]!)!.attempts.at(-1)!.at;
      assert.equal(
        byId.get(endId)!.attempts[0]!.at,
        r2Last,
        'the end callback went at the moment the group completed, not at a later poll',
      );
    } finally {
      await own.close();
    }
  });
});

describe('log, replay and secret rotation', () => {
  test('list: filters, paging (20 per page), and each application sees only its own', async () => {
    const a = await t.createApp();
    const b = await t.createApp();
    rx.decide(undefined);
    rx.answer(200);
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) ids.push(await sendTest(a.api));
    await eventually(
      async () =>
        (await a.api.get<ListData>('/api/application/callback/list', { page: 1, status: 'delivered' })).data.total ===
        22,
      'all 22 delivered',
    );
    const p1 = await a.api.get<ListData>('/api/application/callback/list', { page: 1 });
    const p2 = await a.api.get<ListData>('/api/application/callback/list', { page: 2 });
    assert.equal(p1.data.total, 22);
    assert.equal(p1.data.page_size, 20);
    assert.equal(p1.data.callbacks.length, 20);
    assert.equal(p2.data.callbacks.length, 2);
    assert.deepEqual(new Set([...p1.data.callbacks, ...p2.data.callbacks].map((c) => c.id)), new Set(ids));
    const delivered = await a.api.get<ListData>('/api/application/callback/list', { page: 1, status: 'delivered' });
    assert.equal(delivered.data.total, 22);
    const failed = await a.api.get<ListData>('/api/application/callback/list', { page: 1, status: 'failed' });
    assert.equal(failed.data.total, 0);
    const other = await b.api.get<ListData>('/api/application/callback/list', { page: 1 });
    assert.equal(other.data.total, 0);
    const replayOther = await b.api.post('/api/application/callback/replay', { id: ids[0] });
    assert.equal(replayOther.code, 20404, "another application's callback is not found");
    for (const q of [{ page: 0 }, { page: 1001 }, { page: 1, status: 'lost' }, { page: 1, extra: 'x' }] as Record<
      string,
      string | number
    >[]) {
      const r = await a.api.get('/api/application/callback/list', q);
      assert.equal(r.code, 10001, JSON.stringify(q));
    }
  });

  test('replay sends a completed callback again with the same id; a pending one is refused', async () => {
    const app = await t.createApp();
    const own = await startReceiver();
    try {
      own.answer('silent');
      const id = await sendTest(app.api, own.url);
      await eventually(() => own.byId(id).length === 1, 'first attempt');
      const pending = await app.api.post('/api/application/callback/replay', { id });
      assert.equal(pending.code, 20409);
      for (const [i, delay] of DELAYS.entries()) {
        await advance(TIMEOUT);
        await attempts(app.api, id, i + 1);
        await advance(delay);
        await eventually(() => own.byId(id).length === i + 2, `attempt ${i + 2}`);
      }
      await advance(TIMEOUT);
      const cb = await settled(app.api, id);
      assert.equal(cb.status, 'failed');
      own.answer(200);
      const r = await app.api.post('/api/application/callback/replay', { id });
      assert.equal(r.code, 0, r.msg);
      await eventually(() => own.byId(id).length === 5, 'replayed delivery');
      const again = await settled(app.api, id);
      assert.equal(again.status, 'delivered');
      assert.equal(again.attempts.length, 5);
      const bodies = new Set(own.byId(id).map((x) => x.body));
      assert.equal(bodies.size, 1, 'same body');
      assert.equal((await app.api.post('/api/application/callback/replay', { id: 'nope' })).code, 20404);
      assert.equal((await app.api.post('/api/application/callback/replay', {})).code, 10001);
    } finally {
      await own.close();
    }
  });

  test('rotating the secret signs with both secrets during the grace period', async () => {
    const app = await t.createApp();
    rx.decide(undefined);
    rx.answer(200);
    const r = await app.api.post<{ callback_secret: string; previous_secret_expires_at: number }>(
      '/api/application/callback/rotate_secret',
      {},
    );
    assert.equal(r.code, 0, r.msg);
    const fresh = r.data.callback_secret;
    assert.match(fresh, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.notEqual(fresh, app.callback_secret);
    assert.equal(r.data.previous_secret_expires_at, clock.now() + 60_000);
    const id = await sendTest(app.api);
    const [m] = await eventually(() => (rx.byId(id).length ? rx.byId(id) : undefined), 'signed event');
    const sig = String(m!.headers['webhook-signature']);
    assert.equal(sig.split(' ').length, 2, 'two signatures during the grace period');
    const h = { id, timestamp: String(m!.headers['webhook-timestamp']), signature: sig };
    const at = Number(h.timestamp);
    assert.ok(verify(fresh, h, m!.body, at), 'new secret verifies');
    assert.ok(verify(app.callback_secret, h, m!.body, at), 'old secret still verifies');
    assert.ok(
      !verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, h, m!.body, at),
      'an unrelated secret does not',
    );
    await advance(60_001);
    const id2 = await sendTest(app.api);
    const [m2] = await eventually(
      () => (rx.byId(id2).length ? rx.byId(id2) : undefined),
      'signed after the grace period',
    );
    assert.equal(
      String(m2!.headers['webhook-signature']).split(' ').length,
      1,
      'only the new secret signs once the grace period is over',
    );
    assert.equal((await app.api.post('/api/application/callback/rotate_secret', { grace: 1 })).code, 10001);
  });

  test('test endpoint validates the URL', async () => {
    const app = await t.createApp();
    for (const url of ['ftp://example.com/x', 'nonsense', `http://127.0.0.1/${'a'.repeat(190)}`]) {
      const r = await app.api.post('/api/application/callback/test', { callback_url: url });
      assert.equal(r.code, 10001, url);
    }
    // Private networks are allowed on this server, cloud metadata never.
    const meta = await app.api.post('/api/application/callback/test', {
      callback_url: 'http://169.254.169.254/latest/meta-data',
    });
    assert.equal(meta.code, 10008);
  });

  test('metrics count attempts and outcomes', async () => {
    // A server of its own: the counters are a server's, and on the shared one a callback of an
    // earlier test (a retry that falls due as this test moves the clock) would count here too.
    const ownClock = new ManualClock();
    const s = await startTestServer({ clock: ownClock, env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
    const advance = async (ms: number) => {
      await ownClock.advance(ms);
      await s.server.jobRunner.quiet();
    };
    const count = async (series: string) => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const m = new RegExp(`^${series.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(text);
      return m ? Number(m[1]) : 0;
    };
    const before = {
      delivered: await count('boxhub_callback_deliveries_total{outcome="delivered"}'),
      failed: await count('boxhub_callback_deliveries_total{outcome="failed"}'),
      timeout: await count('boxhub_callback_attempts_total{result="timeout"}'),
      httpError: await count('boxhub_callback_attempts_total{result="http_error"}'),
    };
    const app = await s.createApp();
    const own = await startReceiver();
    try {
      own.decide((_r, n) => (n === 1 ? 'silent' : n === 2 ? 200 : 500));
      const a = await sendTest(app.api, own.url);
      await eventually(() => own.byId(a).length === 1, 'silent attempt');
      await advance(TIMEOUT);
      await advance(DELAYS[0]!);
      await settled(app.api, a);
      const b = await sendTest(app.api, own.url);
      for (const [i, delay] of DELAYS.entries()) {
        await attempts(app.api, b, i + 1);
        await advance(delay);
      }
      await settled(app.api, b);
      assert.equal(await count('boxhub_callback_deliveries_total{outcome="delivered"}'), before.delivered + 1);
      assert.equal(await count('boxhub_callback_deliveries_total{outcome="failed"}'), before.failed + 1);
      assert.equal(await count('boxhub_callback_attempts_total{result="timeout"}'), before.timeout + 1);
      assert.equal(await count('boxhub_callback_attempts_total{result="http_error"}'), before.httpError + 4);
    } finally {
      await own.close();
      await s.close();
    }
  });
});

describe('network block on by default', () => {
  test('loopback callback URLs are refused up front and at delivery time', async () => {
    const strictClock = new ManualClock();
    const strict = await startTestServer({ clock: strictClock, env: {} });
    const own = await startReceiver();
    try {
      const app = await strict.createApp();
      const port = new URL(own.url).port;
      for (const url of [
        own.url,
        `http://localhost:${port}/hook`,
        `http://[::1]:${port}/hook`,
        `http://[::ffff:127.0.0.1]:${port}/hook`,
        'http://10.0.0.1/hook',
      ]) {
        const r = await app.api.post('/api/application/callback/test', { callback_url: url });
        assert.equal(r.code, 10008, url);
      }
      // A callback recorded with a URL that later resolves somewhere private (DNS rebinding) is
      // refused by the connector itself.
      const id = await strict.server.db.kysely.transaction().execute((trx) =>
        strict.server.services.callbacks.enqueue(trx, {
          appId: app.id,
          url: `http://localhost:${port}/hook`,
          method: 'POST',
          event: 'callback.test',
          body: {},
        }),
      );
      for (const [i, delay] of DELAYS.entries()) {
        await eventually(
          async () => ((await callback(app.api, id))?.attempts.length ?? 0) >= i + 1,
          `attempt ${i + 1}`,
        );
        await strictClock.advance(delay);
        await strict.server.jobRunner.quiet();
      }
      const cb = await settled(app.api, id);
      assert.equal(cb.status, 'failed');
      assert.equal(cb.attempts.length, 4);
      assert.match(cb.attempts[0]?.error ?? '', /address not allowed/);
      assert.equal(own.received.length, 0, 'the receiver was never contacted');
    } finally {
      await strict.close();
      await own.close();
    }
  });
});

describe('fair delivery', () => {
  test("an application flooding slow receivers does not hold up another application's callbacks", async () => {
    const flooder = await t.createApp();
    const other = await t.createApp();
    const slow = await startReceiver();
    const fast = await startReceiver();
    slow.answer('silent');
    try {
      const svc = t.server.services.callbacks;
      await t.server.db.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 1500; i++)
          await svc.enqueue(trx, {
            appId: flooder.id,
            url: slow.url,
            method: 'POST',
            event: 'callback.test',
            body: { i },
          });
      });
      // The flooder holds as many attempts in flight as it may (32 per node by default), and no more.
      await eventually(() => slow.received.length >= 32, "the flooder's attempts are in flight");
      const id = await sendTest(other.api, fast.url);
      // The clock does not move: were every slot held by the flooder's silent receivers, this
      // callback would wait for their 5 s deadline forever.
      const cb = await settled(other.api, id);
      assert.equal(cb.status, 'delivered');
      assert.equal(cb.attempts[0]!.at, clock.now());
      assert.equal(slow.received.length, 32, 'the flooder never had more than 32 attempts in flight');
      assert.equal(t.server.jobRunner.busy('callback.deliver'), 32);
    } finally {
      // Let the flooder's attempts time out so the runner has nothing in flight for later tests.
      await t.server.db.kysely
        .deleteFrom('jobs')
        .where('kind', '=', 'callback.deliver')
        .where('claim_token', 'is', null)
        .execute();
      await advance(TIMEOUT);
      await eventually(() => t.server.jobRunner.busy('callback.deliver') === 0, "the flooder's attempts ended");
      await slow.close();
      await fast.close();
    }
  });

  test('when every slot is busy, freed slots go to each application in turn, not to the oldest backlog', async () => {
    const c = new ManualClock();
    const small = await startTestServer({
      clock: c,
      env: {
        BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
        BOXHUB_CALLBACK_CONCURRENCY: '4',
        BOXHUB_CALLBACK_PER_APP_CONCURRENCY: '4',
      },
    });
    const slow = await startReceiver();
    const fast = await startReceiver();
    slow.answer('silent');
    try {
      const flooder = await small.createApp();
      const other = await small.createApp();
      const svc = small.server.services.callbacks;
      await small.server.db.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 100; i++)
          await svc.enqueue(trx, {
            appId: flooder.id,
            url: slow.url,
            method: 'POST',
            event: 'callback.test',
            body: { i },
          });
      });
      await eventually(() => slow.received.length === 4, 'all four slots taken by the flooder');
      await c.advance(1000);
      const id = await sendTest(other.api, fast.url);
      await small.server.jobRunner.quiet();
      assert.equal(fast.received.length, 0, 'no free slot yet');
      // The four silent attempts time out; of the next claim, one slot at least is the other
      // application's, though 96 of the flooder's callbacks have been due longer.
      await c.advance(4000);
      await small.server.jobRunner.quiet();
      const cb = await eventually(async () => {
        const x = await callback(other.api, id);
        return x?.status === 'delivered' ? x : undefined;
      }, "the other application's callback");
      assert.equal(cb.attempts[0]!.at, c.now(), 'sent in the first round after the slots were freed');
    } finally {
      await small.close();
      await slow.close();
      await fast.close();
    }
  });
});
