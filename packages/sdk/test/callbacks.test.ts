// Receiving callbacks: real deliveries from the server verified with the application's secret,
// through a secret rotation; typed events; refusals with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Received } from '@boxhub/server/testing/receiver.ts';
import { signatureHeader } from '@boxhub/server/modules/callbacks/signing.ts';
import { Boxhub, CallbackReceiver, InvalidCallbackError, RecognitionErrorCode, type CallbackEvent } from '@boxhub/sdk';

const refusal = (fn: () => unknown): InvalidCallbackError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvalidCallbackError) return e;
    throw e;
  }
  assert.fail('the callback was accepted');
};

test('real callbacks verify with the application secret, and with either secret during a rotation', async () => {
  const server = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  const app = await server.createApp();
  const receiver = await startReceiver();
  const boxhub = new Boxhub({ baseUrl: server.url, apiKey: app.api_key });
  const delivered = async (): Promise<Received> => {
    const { id } = await boxhub.callbacks.test({ callback_url: receiver.url });
    return eventually(() => receiver.byId(id)[0], 'the test callback');
  };
  try {
    const first = await delivered();
    const event = new CallbackReceiver({ secrets: app.callback_secret }).receive(first);
    assert.equal(event.type, 'callback.test');
    if (event.type !== 'callback.test') return;
    assert.equal(event.id, first.id);
    assert.equal(event.body.id, first.id);
    assert.ok(Math.abs(event.body.created_at - Date.now()) < 60_000);

    const { callback_secret: next } = await boxhub.callbacks.rotateSecret();
    const second = await delivered();
    assert.equal(String(second.headers['webhook-signature']).split(' ').length, 2);
    for (const secrets of [[app.callback_secret], [next], [next, app.callback_secret]]) {
      assert.equal(
        new CallbackReceiver({ secrets }).receive(second).type,
        'callback.test',
        `secrets ${secrets.length}`,
      );
    }
    // After the rotation's grace period only the new secret signs; a receiver that kept only
    // the old one refuses, as it must.
    const stranger = refusal(() =>
      new CallbackReceiver({ secrets: `whsec_${Buffer.alloc(24, 7).toString('base64')}` }).receive(second),
    );
    assert.equal(stranger.reason, 'signature');

    // The body exactly as received: a changed byte is a different message.
    const tampered = refusal(() =>
      new CallbackReceiver({ secrets: next }).receive({
        ...second,
        body: second.body.replace('callback.test', 'callback.tesT'),
      }),
    );
    assert.equal(tampered.reason, 'signature');
  } finally {
    await receiver.close();
    await server.close();
  }
});

// The recognition callbacks are sent once recognition lands; their bodies are the API's, signed
// here by the server's own signing code, so the SDK's side is checked against the server's.
const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
function signed(method: string, body: unknown, o: { id?: string; at?: number; raw?: string } = {}) {
  const id = o.id ?? randomUUID();
  const ts = Math.floor((o.at ?? Date.now()) / 1000);
  const raw = o.raw ?? JSON.stringify(body);
  return {
    method,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader([secret], id, ts, raw),
      'x-svc-callback-id': id,
    },
    body: raw,
  };
}
const receiver = new CallbackReceiver({ secrets: [secret] });

test('recognition result and end callbacks parse into typed events', () => {
  const uuid = randomUUID();
  const page = {
    paper_number: 1,
    page_number: 1,
    front: true,
    item_id: 1,
    temp_download_url: 'https://files.example.org/p1.jpg',
  };
  const ok = receiver.receive(
    signed('POST', {
      uuid,
      finish: false,
      error_code: 0,
      pages: [page],
      result: { student_id: '20240017', qrcode: 'Q-1', fills: [[1, 3], []] },
    }),
  );
  assert.equal(ok.type, 'recognition.result');
  if (ok.type === 'recognition.result') {
    assert.deepEqual(ok.body.result?.fills, [[1, 3], []]);
    assert.equal(ok.body.pages?.[0]?.temp_download_url, page.temp_download_url);
  }

  const failed = receiver.receive(
    signed('POST', { uuid, finish: false, error_code: RecognitionErrorCode.studentNumber, result: null }),
  );
  assert.ok(failed.type === 'recognition.result' && failed.body.result === null && failed.body.error_code === 1001);

  // Buffer bodies and fetch Headers are accepted as well as strings and node's header objects.
  const s = signed('PUT', { uuid, finish: true });
  const end: CallbackEvent = receiver.receive({
    method: 'put',
    headers: new Headers(s.headers),
    body: Buffer.from(s.body),
  });
  assert.deepEqual(end, {
    type: 'recognition.end',
    id: s.headers['webhook-id'],
    method: 'PUT',
    body: { uuid, finish: true },
  });
});

test("a signed body that is not its event's shape is refused with the field that is wrong", () => {
  const bad = refusal(() =>
    receiver.receive(
      signed('POST', {
        uuid: 'u',
        finish: false,
        error_code: 0,
        result: { student_id: '1', qrcode: '', fills: [['1']] },
      }),
    ),
  );
  assert.equal(bad.reason, 'body');
  assert.match(bad.message, /recognition\.result callback .*\/result\/fills\/0\/0 must be integer/);

  const missing = refusal(() => receiver.receive(signed('PUT', { uuid: 'u' })));
  assert.match(missing.message, /recognition\.end .*finish/);

  const notJson = refusal(() => receiver.receive(signed('POST', null, { raw: '{"uuid":' })));
  assert.equal(notJson.reason, 'body');
  assert.match(notJson.message, /not JSON/);
});

test('an event this SDK does not know is handed out as unknown, to be acknowledged', () => {
  const e = receiver.receive(signed('POST', { event: 'box.teleported', uuid: 'u', created_at: 1 }));
  assert.deepEqual([e.type, e.type === 'unknown' ? e.event : ''], ['unknown', 'box.teleported']);
});

test('scan and print events are typed by their `event` field and checked against their schema', () => {
  const head = { uuid: 'task-1', client_uuid: 'box-1', occurred_at: 1795000000000 };
  const finish = receiver.receive(
    signed('POST', {
      event: 'scan.finish',
      ...head,
      action_ack: true,
      finished: true,
      item_size: 2,
      total_pages: 7,
      total_file_size: 900,
      error_code: 0,
      created_at: 1795000000000,
      finished_at: 1795000009000,
      expires_at: 1795086400,
    }),
  );
  assert.equal(finish.type, 'scan.finish');
  if (finish.type === 'scan.finish') assert.equal(finish.body.total_pages, 7);
  const printed = receiver.receive(
    signed('POST', {
      event: 'print.finished',
      ...head,
      action_ack: true,
      started: true,
      finished: true,
      error_code: 0,
      created_at: 1,
      expires_at: 2,
      printed_pages: 4,
    }),
  );
  assert.equal(printed.type, 'print.finished');
  assert.equal(
    refusal(() => receiver.receive(signed('POST', { event: 'scan.item_data', ...head }))).reason,
    'body',
    'a scan.item_data without its item fields is refused',
  );
});

test('missing headers and old or future timestamps are refused', () => {
  const s = signed('PUT', { uuid: 'u', finish: true });
  const { 'webhook-signature': _, ...unsigned } = s.headers;
  assert.equal(refusal(() => receiver.receive({ ...s, headers: unsigned })).reason, 'headers');
  // Standard Webhooks: timestamps more than 5 minutes away are refused (replayed messages).
  assert.equal(
    refusal(() => receiver.receive(signed('PUT', { uuid: 'u', finish: true }, { at: Date.now() - 6 * 60_000 }))).reason,
    'timestamp',
  );
  assert.equal(
    refusal(() => receiver.receive(signed('PUT', { uuid: 'u', finish: true }, { at: Date.now() + 6 * 60_000 }))).reason,
    'timestamp',
  );
  assert.equal(
    receiver.receive(signed('PUT', { uuid: 'u', finish: true }, { at: Date.now() - 4 * 60_000 })).type,
    'recognition.end',
  );
});
