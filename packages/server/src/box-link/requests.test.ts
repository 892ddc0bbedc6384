// A box request whose handler fails for now (the database restarting under the node: the chaos
// soak, docs/chaos.md) is answered `retry: true`, so the box asks again instead of ending its
// step; a refusal stays final (docs/box-protocol.md, "Requests"). The database failure is
// raised by the handler: a test cannot make a real one fail at exactly that query.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { BoxRequest } from '@boxhub/protocol';
import { BoxRequestRouter, RequestRefused } from './requests.ts';
import type { RequestHandler } from './gateway.ts';

function router() {
  const sent: Array<Record<string, unknown>> = [];
  let handle: RequestHandler | undefined;
  const r = new BoxRequestRouter(
    {
      onRequest: (h) => {
        handle = h;
      },
      send: async (_uuid, _type, params) => {
        sent.push(params);
      },
    },
    pino({ level: 'silent' }),
  );
  const ask = async (): Promise<Record<string, unknown>> => {
    const req: BoxRequest = {
      v: 1,
      id: randomUUID(),
      type: 'upload.url',
      params: { task: randomUUID(), item_id: 1, size: 10, md5: '0'.repeat(32) },
    };
    await handle?.('box', req);
    const reply = sent.at(-1);
    assert.ok(reply, 'a reply was sent');
    return reply;
  };
  return { r, ask };
}

test('a handler failing for now (the database unreachable) is answered retry: true', async () => {
  const { r, ask } = router();
  r.on('upload.url', async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  });
  const reply = await ask();
  assert.equal(reply.ok, false);
  assert.equal(reply.retry, true);
});

test('a refusal is final: no retry', async () => {
  const { r, ask } = router();
  r.on('upload.url', async () => {
    throw new RequestRefused('scan task t has ended');
  });
  const reply = await ask();
  assert.deepEqual(
    { ok: reply.ok, error: reply.error, retry: reply.retry },
    { ok: false, error: 'scan task t has ended', retry: undefined },
  );
});

test('a request before its handler (a node still starting) is answered retry: true', async () => {
  const { r, ask } = router();
  const early = await ask();
  assert.deepEqual({ ok: early.ok, retry: early.retry }, { ok: false, retry: true });
  r.on('upload.url', async () => ({ url: 'http://127.0.0.1:9/put' }));
  const later = await ask();
  assert.deepEqual({ ok: later.ok, data: later.data }, { ok: true, data: { url: 'http://127.0.0.1:9/put' } });
});
