// The web console in a real browser (docs/console.md), its keys, the operator's pages and the
// confirmation every destructive button asks for: Debian's chromium driven by puppeteer-core
// (console-browser.ts) against a real server and simulated boxes. The device pages:
// console.test.ts; tasks, templates and recognition: console-tasks.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { keyId } from '@boxhub/protocol/e2e.ts';
import { exampleCard } from './card-stack.ts';
import { ConsoleBrowser } from './console-browser.ts';
import { startRig, type Rig } from './fixtures.ts';

const OPERATOR_TOKEN = `op-${randomBytes(16).toString('hex')}`;

let rig: Rig;
let c: ConsoleBrowser;

before(async () => {
  rig = await startRig({ env: { BOXHUB_OPERATOR_TOKEN: OPERATOR_TOKEN } });
  c = await ConsoleBrowser.open(rig.t.url);
  await c.signIn(rig.app.api_key);
});

after(async () => {
  await c?.close();
  await rig?.close();
});

describe('the console in chromium: keys, the operator, confirmations', () => {
  test('keys: rotate and revoke an API key, register and rotate an encryption key, rotate the callback secret', async () => {
    const spare = await rig.t.server.services.applications.createKey(rig.app.id, 'ci');
    await c.goto('/console/keys');
    await c.page.waitForSelector(`tr.api-key[data-id="${spare.id}"]`);
    assert.match(await c.text(`tr.api-key[data-id="${spare.id}"]`), new RegExp(`${spare.api_key.slice(0, 10)}…`));
    await c.confirmed(`tr.api-key[data-id="${spare.id}"] button.rotate-key`);
    const fresh = await c.text('#new-api-key');
    assert.ok(fresh.startsWith('bhk_') || fresh.length > 20, fresh);
    const { ApiClient } = await import('@boxhub/server/testing/harness.ts');
    assert.equal(
      (await new ApiClient(rig.t.url, spare.api_key).get('/api/client/list', { page: 1 })).code,
      20001,
      'the old key stopped working',
    );
    assert.equal(
      (await new ApiClient(rig.t.url, fresh).get('/api/client/list', { page: 1 })).code,
      0,
      'the new one works',
    );
    const freshId = (await rig.t.server.services.applications.listKeys(rig.app.id)).find(
      (k) => k.name === 'ci' && !k.revoked_at,
    )!.id;
    await c.confirmed(`tr.api-key[data-id="${freshId}"] button.revoke-key`);
    await c.waitText('.flash', /revoked/);
    assert.equal((await new ApiClient(rig.t.url, fresh).get('/api/client/list', { page: 1 })).code, 20001);
    // End-to-end encryption: register a public key, then another (the first is retired).
    const k1 = randomBytes(32).toString('hex');
    const k2 = randomBytes(32).toString('hex');
    for (const k of [k1, k2]) {
      await c.page.type('#e2e-public-key', k);
      await c.go('#register-e2e');
      await c.waitText('.flash', /Public key registered/);
    }
    assert.match(await c.text(`tr.e2e-key[data-kid="${keyId(k2)}"]`), /current/);
    assert.match(await c.text(`tr.e2e-key[data-kid="${keyId(k1)}"]`), /retired/);
    await c.shot('keys');
    await c.confirmed('#rotate-callback-secret');
    assert.match(await c.text('#callback-secret'), /^whsec_/);
  });

  test('the operator: sign in with the operator token, create an application, register a box that then comes online', async () => {
    await c.goto('/console/operator/login');
    await c.page.waitForSelector('#operator_token');
    // The application's key is no operator credential.
    await c.page.type('#operator_token', rig.app.api_key);
    await c.go('button[type=submit]');
    assert.match(await c.text('.flash.bad'), /not the operator token/);
    await c.page.type('#operator_token', OPERATOR_TOKEN);
    await c.go('button[type=submit]');
    assert.match(c.page.url(), /\/console\/operator\/applications$/);
    const hostile = '<img src=x onerror="window.__pwned=3">Springfield';
    await c.page.type('#app-name-input', hostile);
    await c.go('#create-app');
    const key = await c.text('#new-app-key');
    assert.ok((await c.text('#new-application h2')).includes(hostile), 'the name is shown as the text it is');
    assert.equal(await c.pwned(), undefined);
    const { ApiClient } = await import('@boxhub/server/testing/harness.ts');
    assert.equal(
      (await new ApiClient(rig.t.url, key).get('/api/client/list', { page: 1 })).code,
      0,
      "the new application's key works",
    );
    await c.shot('operator-applications');
    // Register a box; the application binds it by its code; its agent logs in with the secret shown.
    await c.goto('/console/operator/devices');
    const code = `OP${randomBytes(4).toString('hex').toUpperCase()}`;
    await c.page.type('#device-code', code);
    await c.page.type('#device-model', 'BX-SIM');
    await c.go('#register-device');
    const uuid = await c.text('#new-device-uuid');
    const secret = await c.text('#new-device-secret');
    await c.goto('/console/devices');
    await c.page.type('#bind-code', code);
    await c.page.type('#bind-name', 'Registered by the operator');
    await c.go('#bind');
    await c.waitText('.flash', /bound/);
    await rig.box({ device: { uuid, secret } });
    await c.goto('/console/operator/devices');
    await c.page.waitForSelector(`tr.device[data-uuid="${uuid}"]`);
    assert.match(await c.text(`tr.device[data-uuid="${uuid}"]`), /online/);
    assert.match(await c.text(`tr.device[data-uuid="${uuid}"]`), /rig as Registered by the operator/);
    await c.shot('operator-devices');
  });

  test('destructive buttons ask first: Cancel (or Escape) leaves things as they are, the confirming button does it', async () => {
    const { ApiClient } = await import('@boxhub/server/testing/harness.ts');
    // Revoke an API key.
    const spare = await rig.t.server.services.applications.createKey(rig.app.id, 'ask-me');
    const works = async () => (await new ApiClient(rig.t.url, spare.api_key).get('/api/client/list', { page: 1 })).code;
    await c.goto('/console/keys');
    const revoke = `tr.api-key[data-id="${spare.id}"] button.revoke-key`;
    await c.page.waitForSelector(revoke);
    assert.equal(
      await c.answer(revoke, false),
      `Revoke the API key "ask-me" (${spare.api_key.slice(0, 10)}…)? Applications using it are refused at once, on every node, and console sessions signed in with it end. This cannot be undone.`,
    );
    assert.equal(await c.text('#confirm-dialog-yes'), 'Revoke the key');
    await c.page.click(revoke);
    await c.page.waitForSelector('#confirm-dialog[open]');
    await c.page.keyboard.press('Escape');
    await c.page.waitForSelector('#confirm-dialog:not([open])');
    assert.match(c.page.url(), /\/console\/keys$/, 'no page was loaded');
    assert.equal(await works(), 0, 'the key still works');
    await c.confirmed(revoke);
    await c.waitText('.flash', /revoked/);
    assert.equal(await works(), 20001, 'the key is revoked');

    // Cancel every print: a print held half-way stays until the cancel is confirmed.
    const held = await rig.box({ printer: 'sim:?side_ms=5' });
    assert.equal((await rig.api.post('/api/client/edit', { uuid: held.uuid, name: 'Held box' })).code, 0);
    held.printer.pauseAfter(1);
    const d = await PDFDocument.create();
    for (let i = 0; i < 3; i++) d.addPage([595.28, 841.89]);
    const made = await rig.api.post<{ uuid: string }>('/api/print/create', {
      client_uuid: held.uuid,
      file_type: 'pdf',
      file_content: Buffer.from(await d.save()).toString('base64'),
    });
    assert.equal(made.code, 0, made.msg);
    const finished = async () =>
      (
        await rig.api.post<{ finished: boolean }>('/api/print/info', {
          client_uuid: held.uuid,
          print_uuid: made.data.uuid,
        })
      ).data.finished;
    await eventually(() => (held.printer.jobs[0]?.impressions ?? 0) >= 1, 'the print is under way');
    await c.goto(`/console/devices/${held.uuid}`);
    await c.page.waitForSelector('#cancel-prints');
    assert.match(
      await c.answer('#cancel-prints', false),
      /^Cancel every print of the box "Held box" \(code [^)]+\)\? Every print task of the box ends/,
    );
    assert.equal(await finished(), false, 'the print goes on');
    await c.confirmed('#cancel-prints');
    await c.waitText('.flash', /Every print task of the box is cancelled/);
    assert.equal(await finished(), true, 'the print is cancelled');

    // Unbind the box.
    const bound = async () => (await rig.api.get('/api/client/info', { uuid: held.uuid })).code;
    assert.match(await c.answer('#unbind', false), /^Unbind the box "Held box"/);
    assert.equal(await bound(), 0, 'still bound');
    await c.confirmed('#unbind');
    await c.waitText('.flash', /unbound/);
    assert.notEqual(await bound(), 0, 'unbound');

    // Delete a card template.
    const tpl = await rig.api.post<{ template_id: string }>('/api/application/card/template/create', {
      definition: { ...exampleCard, id: 'to-delete' },
    });
    assert.equal(tpl.code, 0);
    const exists = async () =>
      (await rig.api.post('/api/application/card/template/info', { template_id: tpl.data.template_id })).code;
    await c.goto(`/console/templates/${tpl.data.template_id}`);
    await c.page.waitForSelector('#delete-template');
    assert.match(
      await c.answer('#delete-template', false),
      new RegExp(`^Delete the card template ${tpl.data.template_id} \\(card "to-delete"\\)\\?`),
    );
    assert.equal(await exists(), 0, 'the template is there');
    await c.confirmed('#delete-template');
    await c.waitText('.flash', /Card template deleted/);
    assert.notEqual(await exists(), 0, 'the template is deleted');

    // The operator revokes a box's secret.
    await c.signInOperator(OPERATOR_TOKEN);
    const dev = await rig.t.registerDevice();
    const secret = async () => (await rig.t.server.repos.devices.findByUuid(dev.uuid))!.secret_hash;
    const before = await secret();
    await c.goto('/console/operator/devices');
    const revokeBox = `tr.device[data-uuid="${dev.uuid}"] button.revoke-device`;
    await c.page.waitForSelector(revokeBox);
    assert.match(await c.answer(revokeBox, false), new RegExp(`^Revoke the secret of the box ${dev.code}\\?`));
    assert.equal(await secret(), before, 'the secret is the same');
    await c.confirmed(revokeBox);
    await c.waitText('.flash', /secret is revoked/);
    assert.equal(await secret(), 'revoked');
  });

  test('without script a destructive button leads to a confirmation page: Cancel there leaves things as they are', async () => {
    const { ApiClient } = await import('@boxhub/server/testing/harness.ts');
    const spare = await rig.t.server.services.applications.createKey(rig.app.id, 'no-script');
    const works = async () => (await new ApiClient(rig.t.url, spare.api_key).get('/api/client/list', { page: 1 })).code;
    const plain = await c.browser.newPage();
    try {
      await plain.setJavaScriptEnabled(false);
      plain.setDefaultTimeout(20_000);
      await plain.goto(c.url('/console/keys'));
      const revoke = `tr.api-key[data-id="${spare.id}"] button.revoke-key`;
      await plain.waitForSelector(revoke);
      await Promise.all([plain.waitForNavigation(), plain.click(revoke)]);
      assert.match(plain.url(), new RegExp(`/console/keys/${spare.id}/revoke$`));
      assert.match(await plain.$eval('#confirm-ask', (e) => e.textContent ?? ''), /^Revoke the API key "no-script"/);
      assert.equal(await works(), 0, 'the POST without confirmation changed nothing');
      await Promise.all([plain.waitForNavigation(), plain.click('#confirm-no')]);
      assert.match(plain.url(), /\/console\/keys$/);
      assert.equal(await works(), 0, 'Cancel changed nothing');
      await Promise.all([plain.waitForNavigation(), plain.click(revoke)]);
      await Promise.all([plain.waitForNavigation(), plain.click('#confirm-yes')]);
      assert.match(await plain.$eval('.flash', (e) => e.textContent ?? ''), /revoked/);
      assert.equal(await works(), 20001, 'confirmed on the page, the key is revoked');
    } finally {
      await plain.close();
    }
  });
});
