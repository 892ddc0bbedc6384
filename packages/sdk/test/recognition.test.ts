// The SDK's recognition resource against the real server: card templates, a recognition task
// (20005 without the capability), and the callback body types the receiver parses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestServer } from '@boxhub/server/testing/harness.ts';
import { Boxhub, BoxhubError, ErrorCode, type CardDefinition } from '@boxhub/sdk';

const card = JSON.parse(
  readFileSync(new URL('../../../docs/examples/card.json', import.meta.url), 'utf8'),
) as CardDefinition;

test('recognition: templates (create, list, info, delete) and recognition tasks', async () => {
  const server = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  try {
    const app = await server.createApp('cards', { ess: true });
    const boxhub = new Boxhub({ baseUrl: server.url, apiKey: app.api_key });
    const t = await boxhub.recognition.createTemplate({ definition: card });
    assert.match(t.template_id, /^[0-9a-f]{8}$/);
    assert.ok(t.pdf_url.startsWith(server.url));
    assert.deepEqual(
      (await boxhub.recognition.listTemplates()).templates.map((x) => x.template_id),
      [t.template_id],
    );
    assert.equal((await boxhub.recognition.templateInfo({ template_id: t.template_id })).card_id, 'math-g7-unit3');
    // A definition the types refuse (cast), as a hand-written JSON file might be: 30410.
    const bad = await boxhub.recognition
      .createTemplate({ definition: { id: 'bad' } as unknown as CardDefinition })
      .then(
        () => assert.fail('accepted'),
        (e: unknown) => e as BoxhubError,
      );
    assert.ok(bad instanceof BoxhubError && bad.code === 30410);
    // dataOf: the data typed for its code, nothing for another.
    assert.ok(
      (bad.dataOf(ErrorCode.CARD_DEFINITION_INVALID)?.problems ?? []).some((p) => /qrcode/.test(p)),
      JSON.stringify(bad.data),
    );
    assert.equal(bad.dataOf(ErrorCode.SCAN_EXISTS), undefined);

    const task = await boxhub.recognition.create({ callback_url: 'http://127.0.0.1:9/results' });
    assert.match(task.direct_addr, /\/direct\/[A-Za-z0-9_-]{43}$/);
    await boxhub.recognition.deleteTemplate({ template_id: t.template_id });
    assert.deepEqual((await boxhub.recognition.listTemplates()).templates, []);

    const plain = new Boxhub({ baseUrl: server.url, apiKey: (await server.createApp('plain')).api_key });
    await assert.rejects(
      plain.recognition.create({ callback_url: 'http://127.0.0.1:9/x' }),
      (e: unknown) => e instanceof BoxhubError && e.code === 20005,
    );
  } finally {
    await server.close();
  }
});
