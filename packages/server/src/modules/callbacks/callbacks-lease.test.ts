// A claim is a lease: timeout + margin. When a node is slow (an attempt that starts late, an
// outcome written late) the lease can run out while the node still works on the callback; the
// node must not claim it again and send it twice. The stall is a transport that waits before
// the real HTTP attempt: an event-loop pause cannot be caused on demand.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';
import { eventually, startTestServer, type TestServer } from '../../testing/harness.ts';
import { startReceiver, type Receiver } from '../../testing/receiver.ts';
import { undiciTransport } from './transport.ts';

const TIMEOUT = 300;
const MARGIN = 100; // lease = 400 ms
const STALL = 900; // the attempt starts 900 ms after its claim: the lease is long over
let t: TestServer;
let rx: Receiver;
const agent = new Agent();

before(async () => {
  rx = await startReceiver();
  const http = undiciTransport(agent);
  t = await startTestServer({
    env: {
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
      BOXHUB_CALLBACK_TIMEOUT_MS: String(TIMEOUT),
      BOXHUB_CALLBACK_CLAIM_MARGIN_MS: String(MARGIN),
      BOXHUB_JOB_POLL_MS: '20',
    },
    callbackTransport: async (req, signal) => {
      await delay(STALL);
      return http(req, signal);
    },
  });
});
after(async () => {
  await t.close();
  await rx.close();
  await agent.close();
});

test('a node whose attempt outlives its lease does not claim the callback again', async () => {
  const app = await t.createApp();
  const r = await app.api.post<{ id: string }>('/api/application/callback/test', { callback_url: rx.url });
  assert.equal(r.code, 0, r.msg);
  const id = r.data.id;
  const cb = await eventually(
    async () => {
      const l = await app.api.get<{ callbacks: { id: string; status: string; attempts: unknown[] }[] }>(
        '/api/application/callback/list',
        { page: 1 },
      );
      const c = l.data.callbacks.find((x) => x.id === id);
      return c?.status === 'delivered' ? c : undefined;
    },
    'delivered',
    10_000,
  );
  // A second claim could only have happened before the outcome was written (a delivered row
  // is never claimed); its attempt would still be in flight. None left: everything is final.
  await eventually(() => t.server.jobRunner.busy() === 0, 'no attempt in flight');
  assert.equal(rx.byId(id).length, 1, 'the receiver got the callback once');
  assert.equal(cb.attempts.length, 1, 'one attempt recorded');
  const row = await t.server.db.kysely
    .selectFrom('callbacks')
    .select(['attempts'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  assert.equal(Number(row.attempts), 1);
  const job = await t.server.db.kysely.selectFrom('jobs').selectAll().where('ref', '=', id).executeTakeFirst();
  assert.equal(job, undefined, 'the delivery job was settled under the original claim');
});
