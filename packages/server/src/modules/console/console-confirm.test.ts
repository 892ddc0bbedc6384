// Confirmation of the console's destructive actions over plain HTTP, i.e. as a browser without
// script sends them (docs/console.md "Confirmation"): every such button's form carries its
// question (data-confirm, for the dialog of console.js); a POST with the CSRF token but without
// `_confirmed=1` changes nothing and answers the confirmation page, whose form then does it.
// The browser test (packages/e2e/src/console-accounts.test.ts) answers the dialog both ways.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { BOX_PROTOCOL_VERSION, type BoxState } from '@boxhub/protocol';
import { ConsoleClient, fieldOf } from '../../testing/console-client.ts';
import { ApiClient, startTestServer, type TestServer } from '../../testing/harness.ts';
import { escapeHtml } from './html.ts';

const OPERATOR_TOKEN = `op-${randomBytes(16).toString('hex')}`;
let t: TestServer;
let app: { id: string; api_key: string; callback_secret: string; api: ApiClient };
let box: { uuid: string; code: string };
let spare: { id: string; api_key: string };
let template: string;

const inkjetState = (): string =>
  JSON.stringify({
    v: BOX_PROTOCOL_VERSION,
    at: 1,
    printer: {
      connected: true,
      supported: true,
      make: 'Ink',
      model: 'Jet',
      error_code: 0,
      kind: 'inkjet',
      strict: true,
      maintenance: ['head_clean', 'nozzle_check', 'power_ink_flush'],
    },
    scanner: { connected: false, supported: false },
  } satisfies BoxState);

before(async () => {
  t = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: OPERATOR_TOKEN } });
  app = await t.createApp('confirming');
  box = await t.registerDevice();
  assert.equal((await app.api.post('/api/client/bind', { uuid: box.uuid, name: 'Hall "B" <box>' })).code, 0);
  await t.server.repos.devices.saveState(box.uuid, inkjetState(), Date.now());
  spare = await t.server.services.applications.createKey(app.id, 'ci');
  const made = await app.api.post<{ template_id: string }>('/api/application/card/template/create', {
    definition: {
      id: 'unit-9',
      title: 'Unit 9',
      qrcode: 'https://school.example/u9',
      student_number: { type: 'bubbles', digits: 4 },
      duplex: false,
      chapters: [{ title: 'One', areas: 4 }],
    },
  });
  assert.equal(made.code, 0);
  template = made.data.template_id;
});
after(() => t.close());

/** The forms of a page: action and the rest of the opening tag. */
const formsOf = (body: string) =>
  [...body.matchAll(/<form method="post" action="([^"]+)"([^>]*)>/g)].map((m) => ({
    action: m[1]!.replace(/&amp;/g, '&'),
    attrs: m[2]!,
  }));

/** Posts without confirmation: the confirmation page, asking `ask`, with a form that confirms. */
async function asks(
  c: ConsoleClient,
  path: string,
  ask: RegExp,
): Promise<{ action: string; fields: Record<string, string> }> {
  const r = await c.post(path);
  assert.equal(r.status, 200, `${path}: ${r.body.slice(0, 300)}`);
  assert.match(r.body, /<h1>Are you sure\?<\/h1>/, path);
  const question = /id="confirm-ask">([^<]*)</.exec(r.body)?.[1] ?? '';
  assert.match(question, ask, path);
  const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(
    r.body.slice(r.body.indexOf('id="confirm"')),
  )!;
  assert.equal(form[1], path, 'the confirming form posts to the same action');
  assert.equal(fieldOf(form[2]!, '_confirmed'), '1');
  assert.equal(fieldOf(form[2]!, '_csrf'), c.csrf);
  assert.match(form[2]!, /id="confirm-no" class="cancel" href="\/console\//, 'and Cancel goes back');
  return { action: form[1]!, fields: { _confirmed: '1' } };
}

describe('destructive actions ask first', () => {
  test("their buttons carry the question for the dialog; the page loads the console's script, under the same CSP", async () => {
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const pages: Array<[string, string[]]> = [
      [
        `/console/devices/${box.uuid}`,
        ['/reboot', '/unbind', '/print/cancel', '/inkjet/head_clean', '/inkjet/power_ink_flush'],
      ],
      [
        '/console/keys',
        [
          `/console/keys/${spare.id}/revoke`,
          `/console/keys/${spare.id}/rotate`,
          '/rotate',
          '/console/callbacks/rotate_secret',
        ],
      ],
      ['/console/callbacks/settings', ['/console/callbacks/rotate_secret']],
      [`/console/templates/${template}`, ['/delete']],
    ];
    for (const [path, ends] of pages) {
      const r = await c.get(path);
      assert.equal(r.status, 200, path);
      assert.match(r.body, /<script src="\/console\/assets\/console\.js" defer><\/script>/);
      assert.doesNotMatch(r.body, /\son[a-z]+=/, 'no inline handler');
      assert.doesNotMatch(r.res.headers.get('content-security-policy') ?? '', /unsafe/);
      const forms = formsOf(r.body);
      for (const end of ends) {
        const f = forms.find((x) => x.action.endsWith(end));
        assert.ok(f, `${path}: a form to …${end}`);
        assert.match(f.attrs, /data-confirm="[^"]+\?[^"]*" data-confirm-yes="[^"]+"/, `${path} …${end} asks`);
      }
      // Nothing else asks: bind, rename, buzz, scan, print, the nozzle check, test, e2e keys, sign-out.
      for (const f of forms.filter((x) => !ends.some((e) => x.action.endsWith(e))))
        assert.doesNotMatch(f.attrs, /data-confirm/, `${path}: ${f.action}`);
    }
    const device = await c.get(`/console/devices/${box.uuid}`);
    assert.ok(
      device.body.includes(`data-confirm="Unbind the box ${escapeHtml('"Hall "B" <box>"')} (code ${box.code})?`),
      'the box is named, escaped',
    );
    const js = await c.req('/console/assets/console.js');
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.match(await js.text(), /data-confirm/);
    assert.equal((await fetch(`${t.url}/console/assets/console.js`)).status, 200, 'served before sign-in too');
  });

  test("without _confirmed an application's destructive POST changes nothing and answers the question; its form then does it", async () => {
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const d = `/console/devices/${box.uuid}`;
    const prefix = escapeHtml(spare.api_key.slice(0, 10));
    const cases: Array<[string, RegExp]> = [
      [
        `/console/keys/${spare.id}/revoke`,
        new RegExp(`^Revoke the API key &quot;ci&quot; \\(${prefix}…\\)\\? Applications using it are refused at once`),
      ],
      [`/console/keys/${spare.id}/rotate`, new RegExp(`^Rotate the API key &quot;ci&quot; \\(${prefix}…\\)\\?`)],
      ['/console/callbacks/rotate_secret', /^Rotate the callback secret\?/],
      [
        `${d}/unbind`,
        new RegExp(`^Unbind the box &quot;Hall &quot;B&quot; &lt;box&gt;&quot; \\(code ${box.code}\\)\\?`),
      ],
      [`${d}/reboot`, /^Reboot the box .*a scan or print it is running is interrupted/],
      [`${d}/print/cancel`, /^Cancel every print of the box /],
      [`${d}/inkjet/head_clean`, /^Clean the print head .*uses ink/],
      [`${d}/inkjet/power_ink_flush`, /^Run a power ink flush .*a lot of ink.*24 hours/],
      [`${d}/scans/0b7e1c7e-1111-4222-8333-944445555666/stop`, /^Stop the scan running on the box /],
      [
        `/console/templates/${template}/delete`,
        new RegExp(`^Delete the card template ${template} \\(card &quot;unit-9&quot;\\)\\?`),
      ],
    ];
    const secrets = async () => (await t.server.repos.applications.callbackSecrets([app.id])).get(app.id);
    for (const [path, ask] of cases) await asks(c, path, ask);
    // Nothing happened.
    assert.equal(
      (await new ApiClient(t.url, spare.api_key).get('/api/client/list', { page: 1 })).code,
      0,
      'the key works',
    );
    assert.equal((await secrets())?.current, app.callback_secret, 'the callback secret is the same');
    assert.equal((await app.api.get('/api/client/info', { uuid: box.uuid })).code, 0, 'the box is bound');
    assert.equal(
      (await app.api.post('/api/application/card/template/info', { template_id: template })).code,
      0,
      'the template is there',
    );
    assert.equal(
      (await t.server.repos.devices.findByUuid(box.uuid))!.last_power_ink_flush_at,
      null,
      'no flush was claimed',
    );

    // The confirmation page's form does it.
    const revoke = await asks(c, `/console/keys/${spare.id}/revoke`, /^Revoke/);
    assert.equal((await c.post(revoke.action, revoke.fields)).status, 303);
    assert.equal(
      (await new ApiClient(t.url, spare.api_key).get('/api/client/list', { page: 1 })).code,
      20001,
      'the key is revoked',
    );
    const del = await asks(c, `/console/templates/${template}/delete`, /^Delete/);
    assert.equal((await c.post(del.action, del.fields)).status, 303);
    assert.notEqual(
      (await app.api.post('/api/application/card/template/info', { template_id: template })).code,
      0,
      'the template is deleted',
    );
    const unbind = await asks(c, `${d}/unbind`, /^Unbind/);
    assert.equal((await c.post(unbind.action, unbind.fields)).status, 303);
    assert.notEqual((await app.api.get('/api/client/info', { uuid: box.uuid })).code, 0, 'the box is unbound');
    // _confirmed is no credential: without the token it is refused as before.
    assert.equal((await c.post('/console/callbacks/rotate_secret', { _confirmed: '1' }, { csrf: null })).status, 403);
    assert.equal((await secrets())?.current, app.callback_secret);
  });

  test("the operator's destructive POSTs ask too: key rotate and revoke, a box's new secret and revoke", async () => {
    const op = await new ConsoleClient(t.url).signInOperator(OPERATOR_TOKEN);
    const other = await t.createApp('operated');
    const [key] = await t.server.services.applications.listKeys(other.id);
    const dev = await t.registerDevice();
    const hash = async () => (await t.server.repos.devices.findByUuid(dev.uuid))!.secret_hash;
    const before = await hash();
    const page = await op.get(`/console/operator/applications/${other.id}`);
    for (const end of ['/rotate', '/revoke'])
      assert.match(
        formsOf(page.body).find((f) => f.action === `/console/operator/keys/${key!.id}${end}`)!.attrs,
        /data-confirm=/,
      );
    const devices = await op.get('/console/operator/devices');
    for (const end of ['/rotate_secret', '/revoke'])
      assert.match(
        formsOf(devices.body).find((f) => f.action === `/console/operator/devices/${dev.uuid}${end}`)!.attrs,
        /data-confirm=/,
      );
    await asks(op, `/console/operator/keys/${key!.id}/rotate`, /^Rotate the API key &quot;default&quot;/);
    await asks(op, `/console/operator/keys/${key!.id}/revoke`, /^Revoke the API key &quot;default&quot;/);
    await asks(
      op,
      `/console/operator/devices/${dev.uuid}/rotate_secret`,
      new RegExp(`^Give the box ${dev.code} a new secret\\? Its current secret stops working at once`),
    );
    const revoke = await asks(
      op,
      `/console/operator/devices/${dev.uuid}/revoke`,
      new RegExp(`^Revoke the secret of the box ${dev.code}\\?`),
    );
    assert.equal((await other.api.get('/api/client/list', { page: 1 })).code, 0, 'the key works');
    assert.equal(await hash(), before, "the box's secret is the same");
    assert.equal((await op.post(revoke.action, revoke.fields)).status, 303);
    assert.equal(await hash(), 'revoked');
    assert.equal(
      (await op.post('/console/operator/keys/key-nope/revoke')).status,
      404,
      'no question about what does not exist',
    );
  });
});
