// The device page's controls and print options over plain HTTP, with the printer a box last
// reported (its state written as the box link writes it; the box itself is offline here, so
// the services refuse what needs it online with their own messages): the inkjet controls the
// printer offers, the print options from its capability tree (and the part htmx asks for on a
// change of media size or type), refusals shown with the API's messages, the form kept as sent,
// escaping of the printer's strings, CSRF on the new forms. The browser test
// (packages/e2e/src/console.test.ts) presses them on an online box.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BOX_PROTOCOL_VERSION, type BoxState, type PrinterCapability } from '@boxhub/protocol';
import { escapeHtml } from './html.ts';
import { ConsoleClient } from '../../testing/console-client.ts';
import { startTestServer, type ApiClient, type TestServer } from '../../testing/harness.ts';

let t: TestServer;
type App = { id: string; api_key: string; api: ApiClient };
let a: App;
let b: App;
let inkjet: { uuid: string };
let laser: { uuid: string };
let others: { uuid: string };

const HOSTILE = '<script>window.__pwned=1</script>"><img src=x onerror=alert(1)>';
const capability: PrinterCapability = {
  make: HOSTILE,
  model: `Model ${HOSTILE}`,
  support_strict: true,
  color_mode: ['SVC_CM_MONO', 'SVC_CM_COLOR'],
  media_sizes: [
    {
      media_size: 'SVC_MS_A4',
      media_types: [
        {
          media_type: 'SVC_MT_PLAIN',
          duplex: ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE'],
          borderless: false,
          quality: ['SVC_QU_DRAFT', 'SVC_QU_NORMAL'],
        },
        {
          media_type: 'SVC_MT_PHOTO',
          duplex: ['SVC_DP_NONE'],
          borderless: true,
          quality: ['SVC_QU_HIGH'],
          input_slot: ['SVC_IS_PHOTO'],
        },
      ],
    },
    {
      media_size: 'SVC_MS_A5',
      media_types: [
        { media_type: 'SVC_MT_CARDSTOCK', duplex: ['SVC_DP_NONE'], borderless: false, quality: ['SVC_QU_NORMAL'] },
      ],
    },
  ],
};
const state = (printer: Partial<BoxState['printer']>): string =>
  JSON.stringify({
    v: BOX_PROTOCOL_VERSION,
    at: 1,
    printer: {
      connected: true,
      supported: true,
      make: HOSTILE,
      model: `Model ${HOSTILE}`,
      error_code: 0,
      kind: 'inkjet',
      strict: true,
      maintenance: ['head_clean', 'nozzle_check'],
      capability,
      ...printer,
    },
    scanner: { connected: false, supported: false },
  } satisfies BoxState);

async function boundBox(app: App, printer: Partial<BoxState['printer']>): Promise<{ uuid: string }> {
  const d = await t.registerDevice();
  assert.equal((await app.api.post('/api/client/bind', { uuid: d.uuid, name: 'Box' })).code, 0);
  await t.server.repos.devices.saveState(d.uuid, state(printer), Date.now());
  return d;
}

before(async () => {
  t = await startTestServer();
  a = await t.createApp('school-a');
  b = await t.createApp('school-b');
  inkjet = await boundBox(a, {});
  laser = await boundBox(a, { kind: 'laser', maintenance: [] });
  others = await boundBox(b, {});
});
after(() => t.close());

/** The print form as multipart, the token first (as the browser sends the page's form). */
function printForm(csrf: string, fields: Record<string, string>, file = Buffer.from('%PDF-1.4\n%%EOF\n')): FormData {
  const fd = new FormData();
  fd.append('_csrf', csrf);
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  fd.append('file', new Blob([file], { type: 'application/pdf' }), 'a.pdf');
  return fd;
}

describe('inkjet controls', () => {
  test('offered as the printer allows: its operations only, none (with why) for a laser printer', async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const page = await c.get(`/console/devices/${inkjet.uuid}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /id="head-clean"/);
    assert.match(page.body, /id="nozzle-check"/);
    assert.doesNotMatch(page.body, /id="power-ink-flush"/, 'the printer does not list it');
    const l = await c.get(`/console/devices/${laser.uuid}`);
    assert.doesNotMatch(l.body, /id="head-clean"/);
    assert.match(
      l.body,
      /id="inkjet-unavailable">Not available: only for inkjet printers that support strict mode; this printer is laser/,
    );
  });

  test("a refusal is shown on the device page with the API's message; unknown operations and other applications' boxes are 404", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    for (const [box, op] of [
      [inkjet, 'head_clean'],
      [laser, 'nozzle_check'],
      [inkjet, 'power_ink_flush'],
    ] as const) {
      const api = await a.api.post(`/api/control/${op}`, { client_uuid: box.uuid });
      assert.notEqual(api.code, 0);
      const r = await c.post(`/console/devices/${box.uuid}/inkjet/${op}`, { _confirmed: '1' });
      assert.equal(r.status, 400, op);
      assert.ok(
        r.body.includes(`id="refused">${escapeHtml(`${api.msg} (code ${api.code})`)}</div>`),
        `${op}: ${api.msg}`,
      );
    }
    assert.equal((await c.post(`/console/devices/${inkjet.uuid}/inkjet/format_disk`, { _confirmed: '1' })).status, 404);
    // Another application's box: not found, confirmed or not (the question names nothing of it).
    for (const fields of [{}, { _confirmed: '1' }] as Array<Record<string, string>>) {
      assert.equal((await c.post(`/console/devices/${others.uuid}/inkjet/head_clean`, fields)).status, 404);
      assert.equal((await c.post(`/console/devices/${others.uuid}/print/cancel`, fields)).status, 404);
    }
  });

  test("CSRF: the inkjet and cancel forms without the session's token are refused", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const other = await new ConsoleClient(t.url).signIn(a.api_key);
    for (const path of [
      `/console/devices/${inkjet.uuid}/inkjet/head_clean`,
      `/console/devices/${inkjet.uuid}/inkjet/power_ink_flush`,
      `/console/devices/${inkjet.uuid}/print/cancel`,
    ]) {
      assert.equal((await c.post(path, { _confirmed: '1' }, { csrf: null })).status, 403, path);
      assert.equal((await c.post(path, { _confirmed: '1' }, { csrf: other.csrf })).status, 403, path);
      assert.equal(
        (await c.post(path, { _confirmed: '1' }, { headers: { origin: 'http://evil.example' } })).status,
        403,
        path,
      );
    }
    assert.equal(
      (await t.server.repos.devices.findByUuid(inkjet.uuid))!.last_power_ink_flush_at,
      null,
      'nothing was claimed',
    );
  });
});

describe('print options', () => {
  test("offered from the capability tree; the part for another media size or type; the printer's strings escaped", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const page = await c.get(`/console/devices/${inkjet.uuid}`);
    for (const v of [
      'SVC_MS_A4',
      'SVC_MS_A5',
      'SVC_MT_PLAIN',
      'SVC_MT_PHOTO',
      'SVC_DP_NOTUMBLE',
      'SVC_QU_DRAFT',
      'SVC_CM_MONO',
    ])
      assert.match(page.body, new RegExp(`<option value="${v}"`), v);
    assert.doesNotMatch(page.body, /<option value="SVC_MT_CARDSTOCK"/, "A5's types only once A5 is chosen");
    assert.doesNotMatch(page.body, /id="print-borderless"/, 'plain A4 has no borderless');
    assert.match(page.body, /id="print-strict"/);
    assert.ok(
      !page.body.includes(HOSTILE) && !page.body.includes('<img src=x'),
      "the printer's make and model are text",
    );
    assert.ok(page.body.includes(escapeHtml(HOSTILE)));
    const photo = await c.get(
      `/console/devices/${inkjet.uuid}/print-options?media_size=SVC_MS_A4&media_type=SVC_MT_PHOTO&quality=SVC_QU_DRAFT`,
    );
    assert.equal(photo.status, 200);
    assert.match(photo.body, /^<div id="print-options"/);
    assert.match(photo.body, /id="print-borderless"/);
    assert.match(photo.body, /<option value="SVC_IS_PHOTO"/);
    assert.match(photo.body, /<option value="SVC_MT_PHOTO" selected>/);
    assert.doesNotMatch(photo.body, /SVC_QU_DRAFT/, 'draft is not offered for photo paper');
    const a5 = await c.get(
      `/console/devices/${inkjet.uuid}/print-options?media_size=SVC_MS_A5&media_type=SVC_MT_PHOTO`,
    );
    assert.match(
      a5.body,
      /<option value="SVC_MT_CARDSTOCK" selected>/,
      'a type the size lacks falls back to one it has',
    );
    assert.equal((await c.get(`/console/devices/${others.uuid}/print-options?media_size=SVC_MS_A4`)).status, 404);
  });

  test("bad options are refused with the API's message, the form kept as sent", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const cases: Array<[Record<string, string>, Record<string, unknown>]> = [
      [{ media_size: 'SVC_MS_A4', number: '0' }, { number: 0 }],
      [{ media_size: 'SVC_MS_A4', number: 'two' }, { number: 'two' }],
      [{ media_size: 'SVC_MS_B52' }, { media_size: 'SVC_MS_B52' }],
      [{ media_size: 'SVC_MS_A4', duplex: 'both' }, { duplex: 'both' }],
      [{ media_size: 'SVC_MS_A4', callback_url: 'ftp://x' }, { callback_url: 'ftp://x' }],
    ];
    for (const [fields, options] of cases) {
      const api = await a.api.post('/api/print/create', {
        client_uuid: inkjet.uuid,
        file_type: 'pdf',
        file_content: Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64'),
        options: { collate: true, reverse: true, ...options },
      });
      assert.notEqual(api.code, 0);
      const r = await c.req(`/console/devices/${inkjet.uuid}/print`, {
        method: 'POST',
        body: printForm(c.csrf, { collate: '1', reverse: '1', ...fields }),
      });
      const body = await r.text();
      assert.equal(r.status, 400, JSON.stringify(fields));
      assert.ok(
        body.includes(`id="refused">${escapeHtml(`${api.msg} (code ${api.code})`)}</div>`),
        `${JSON.stringify(fields)}: ${api.msg}`,
      );
      if (fields.number)
        assert.match(body, new RegExp(`id="print-copies"[^>]*value="${fields.number}"`), 'the form as sent');
    }
    // Good options, but the box is offline: the service's answer, as the API's.
    const api = await a.api.post('/api/print/create', {
      client_uuid: inkjet.uuid,
      file_type: 'pdf',
      file_content: 'JVBERi0=',
      options: { number: 2, duplex: 'SVC_DP_NOTUMBLE' },
    });
    const r = await c.req(`/console/devices/${inkjet.uuid}/print`, {
      method: 'POST',
      body: printForm(c.csrf, { media_size: 'SVC_MS_A4', number: '2', duplex: 'SVC_DP_NOTUMBLE', collate: '1' }),
    });
    assert.equal(r.status, 400);
    assert.ok((await r.text()).includes(escapeHtml(`${api.msg} (code ${api.code})`)), api.msg);
  });

  test('CSRF: the print form with options and a wrong or late token is refused', async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const wrong = await c.req(`/console/devices/${inkjet.uuid}/print`, {
      method: 'POST',
      body: printForm('wrong', { media_size: 'SVC_MS_A4', number: '2' }),
    });
    assert.equal(wrong.status, 403);
    const late = new FormData();
    late.append('media_size', 'SVC_MS_A4');
    late.append('file', new Blob([Buffer.from('%PDF-1.4')]), 'a.pdf');
    late.append('_csrf', c.csrf);
    assert.equal(
      (await c.req(`/console/devices/${inkjet.uuid}/print`, { method: 'POST', body: late })).status,
      403,
      'the token must come before the file',
    );
  });
});
