// Admission control on the embedded broker (docs/configuration.md "Box link", docs/box-protocol.md
// "Reconnect"): past the number of logins being checked at once, or past the logins a second, a
// login waits its turn for a while (first come first served, a bounded queue) and is refused
// with CONNACK 3 (server unavailable) when the queue is full or its wait ran out; refused, a box
// gets in once the node has room. The broker is started on its own (its limits, whatever engine
// the rest of the suite uses); time is the injected clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { Admission, type AdmissionLimits } from './admission.ts';
import { EmbeddedBroker, type RefusalReason } from './embedded-broker.ts';
import { ManualClock } from '../testing/manual-clock.ts';

const SECRET = 'box-secret';

/** Logs in once (no retries): 0 when taken, else the CONNACK return code it was refused with. */
async function login(url: string, uuid: string): Promise<number> {
  try {
    const c = await mqtt.connectAsync(url, {
      clientId: uuid,
      username: uuid,
      password: SECRET,
      protocolVersion: 4,
      reconnectPeriod: 0,
    });
    await c.endAsync();
    return 0;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'number' ? code : -1;
  }
}

test('the token bucket takes a burst, then as many logins a second as its rate', () => {
  const clock = new ManualClock(0);
  const a = new Admission({ concurrency: 0, rate: 2, burst: 3 }, clock);
  const take = () => {
    const r = a.enter();
    if (r.ok) r.leave();
    return r.ok ? 'ok' : r.reason;
  };
  assert.deepEqual([take(), take(), take(), take()], ['ok', 'ok', 'ok', 'rate']);
  clock.advance(499);
  assert.equal(take(), 'rate', 'less than one token back after 499 ms at 2 a second');
  clock.advance(1);
  assert.equal(take(), 'ok');
  clock.advance(60_000);
  assert.deepEqual([take(), take(), take(), take()], ['ok', 'ok', 'ok', 'rate'], 'never more than the burst saved up');
});

test('logins being checked at once are bounded; leaving twice frees one place', () => {
  const a = new Admission({ concurrency: 2, rate: 0, burst: 1 }, new ManualClock(0));
  const first = a.enter();
  const second = a.enter();
  assert.ok(first.ok && second.ok);
  assert.deepEqual(a.enter(), { ok: false, reason: 'busy' });
  first.leave();
  first.leave();
  assert.equal(a.checking, 1);
  assert.ok(a.enter().ok);
});

test('while the event loop runs later than maxLagMs no login is taken', () => {
  let lag = 0;
  const a = new Admission({ concurrency: 0, rate: 0, burst: 1, maxLagMs: 200 }, new ManualClock(0), () => lag);
  assert.ok(a.enter().ok);
  lag = 201;
  assert.deepEqual(a.enter(), { ok: false, reason: 'lag' });
  lag = 200;
  assert.ok(a.enter().ok, 'at the limit it still takes them');
});

test('a login past the limits waits its turn, first come first served, and gets in when there is room', async () => {
  const clock = new ManualClock(0);
  const a = new Admission({ concurrency: 1, rate: 0, burst: 1, waitMs: 5000, queue: 10 }, clock);
  const first = await a.admit();
  assert.ok(first.ok);
  const order: string[] = [];
  const second = a.admit().then((r) => {
    order.push('second');
    return r;
  });
  const third = a.admit().then((r) => {
    order.push('third');
    return r;
  });
  assert.equal(a.queued, 2);
  first.leave();
  const s = await second;
  assert.ok(s.ok, 'the first in the queue got the place');
  assert.deepEqual(order, ['second'], 'the third still waits: one place');
  s.leave();
  const t = await third;
  assert.ok(t.ok);
  assert.deepEqual(order, ['second', 'third']);
  t.leave();
  assert.equal(a.queued, 0);
});

test('a login is refused when the queue is full, or when its wait runs out on the clock', async () => {
  const clock = new ManualClock(0);
  const a = new Admission({ concurrency: 1, rate: 0, burst: 1, waitMs: 5000, queue: 1 }, clock);
  const first = await a.admit();
  assert.ok(first.ok);
  const waiting = a.admit();
  assert.deepEqual(await a.admit(), { ok: false, reason: 'busy' }, 'refused at once: the queue is full');
  clock.advance(5000);
  assert.deepEqual(await waiting, { ok: false, reason: 'busy' }, 'refused once its 5 s had passed');
  assert.equal(a.queued, 0);
  first.leave();
  const next = await a.admit();
  assert.ok(next.ok, 'with room again a login is taken');
});

test('with no wait set a login past the limits is refused at once, as before', async () => {
  const a = new Admission({ concurrency: 1, rate: 0, burst: 1 }, new ManualClock(0));
  assert.ok((await a.admit()).ok);
  assert.deepEqual(await a.admit(), { ok: false, reason: 'busy' });
  assert.equal(a.queued, 0);
});

/**
 * A broker with one place for logins being checked, whose first login's database read does not
 * come back until release(); `box-a` has logged in and holds the place when this resolves.
 */
async function brokerHoldingOneLogin(admission: AdmissionLimits) {
  const refused: RefusalReason[] = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let holding = true;
  const broker = await EmbeddedBroker.start({
    host: '127.0.0.1',
    port: 0,
    connectLimit: { max: 0, windowMs: 10_000 },
    admission,
    authenticate: async (_uuid, secret) => {
      if (holding) {
        holding = false;
        await held;
      }
      return secret === SECRET;
    },
    onRefused: (reason) => {
      refused.push(reason);
    },
  });
  const url = broker.listenUrl!;
  const slow = login(url, 'box-a');
  // Wait until box-a's login is being checked (it holds the only place).
  while (holding) await new Promise((r) => setImmediate(r));
  return { broker, url, refused, release, slow };
}

test('over the concurrency limit a login waits its turn and gets CONNACK 0 once the others are checked', async () => {
  const { broker, url, refused, release, slow } = await brokerHoldingOneLogin({
    concurrency: 1,
    rate: 0,
    burst: 1,
    waitMs: 20_000,
    queue: 10,
  });
  try {
    const waiting = login(url, 'box-b');
    release();
    assert.deepEqual(await Promise.all([slow, waiting]), [0, 0], 'box-b waited and was taken, not refused');
    assert.deepEqual(refused, []);
  } finally {
    await broker.close();
  }
});

test('over the concurrency limit a login gets CONNACK 3 at once and gets in once the others are checked', async () => {
  const { broker, url, refused, release, slow } = await brokerHoldingOneLogin({ concurrency: 1, rate: 0, burst: 1 });
  try {
    assert.equal(await login(url, 'box-b'), 3, 'refused with server unavailable, not queued');
    assert.deepEqual(refused, ['admission_busy']);
    release();
    assert.equal(await slow, 0);
    assert.equal(await login(url, 'box-b'), 0, 'taken once the node has room');
  } finally {
    await broker.close();
  }
});

test('over the rate a login gets CONNACK 3 until the clock refills the bucket', async () => {
  const clock = new ManualClock(Date.now());
  const refused: RefusalReason[] = [];
  const broker = await EmbeddedBroker.start({
    host: '127.0.0.1',
    port: 0,
    connectLimit: { max: 0, windowMs: 10_000 },
    clock,
    admission: { concurrency: 0, rate: 1, burst: 2 },
    authenticate: async (_uuid, secret) => secret === SECRET,
    onRefused: (reason) => {
      refused.push(reason);
    },
  });
  try {
    const url = broker.listenUrl!;
    assert.deepEqual([await login(url, 'a'), await login(url, 'b'), await login(url, 'c')], [0, 0, 3]);
    assert.deepEqual(refused, ['admission_rate']);
    clock.advance(1000);
    assert.equal(await login(url, 'c'), 0, 'a second later there is a token for it');
    assert.equal(await login(url, 'd'), 3);
  } finally {
    await broker.close();
  }
});
