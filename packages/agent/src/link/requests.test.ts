// The box's side of a request's reply (docs/box-protocol.md, "Requests"): `retry: true` is a
// failure for now, which callers take like no reply (they ask again); `ok: false` without it is
// a refusal (RequestRefusedError), which ends their step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoxRequests, RequestRefusedError } from './requests.ts';

/** A link that answers every request it carries with `answer`. */
function answering(answer: { ok: boolean; retry?: boolean; error?: string }): BoxRequests {
  const requests = new BoxRequests(
    {
      publish: async (_topic, payload) => {
        const { id } = JSON.parse(payload) as { id: string };
        setImmediate(() => requests.resolve({ request: id, ...answer }));
      },
    },
    'box',
  );
  return requests;
}

test('a reply with retry: true fails the ask with an error that is no refusal', async () => {
  const e = await answering({ ok: false, error: 'server error; ask again', retry: true })
    .ask('upload.url', {})
    .then(
      () => undefined,
      (x: unknown) => x,
    );
  assert.ok(e instanceof Error);
  assert.ok(!(e instanceof RequestRefusedError), 'not a refusal: the caller asks again');
  assert.match(e.message, /asking again/);
});

test('ok: false without retry is a refusal', async () => {
  await assert.rejects(
    answering({ ok: false, error: 'scan task t has ended' }).ask('upload.url', {}),
    (e: unknown) => e instanceof RequestRefusedError && /has ended/.test(e.message),
  );
});

test('ok: true gives the data', async () => {
  assert.deepEqual(await answering({ ok: true }).ask('upload.url', {}), {});
});
