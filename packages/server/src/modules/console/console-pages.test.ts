// The console's application pages beyond devices and callbacks, over plain HTTP: card templates
// (created with the API's validation and messages), recognition runs with their students, the
// application-wide task list, keys (API key rotation and revocation, end-to-end encryption
// keys); CSRF on their forms, escaping, and one application never seeing another's data.
// The browser tests (packages/e2e/src/console-tasks.test.ts, console-accounts.test.ts) run the
// same pages with a real box.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { keyId } from '@boxhub/protocol/e2e.ts';
import { escapeHtml } from './html.ts';
import { ConsoleClient } from '../../testing/console-client.ts';
import { startTestServer, type ApiClient, type TestServer } from '../../testing/harness.ts';
import { startReceiver, type Receiver } from '../../testing/receiver.ts';

let t: TestServer;
let rx: Receiver;
type App = { id: string; api_key: string; api: ApiClient };
let a: App;
let b: App;

const definition = (o: Record<string, unknown> = {}) => ({
  id: 'unit-1',
  title: 'Unit 1',
  qrcode: 'https://school.example/u1',
  student_number: { type: 'bubbles', digits: 4 },
  duplex: false,
  chapters: [
    { title: 'One', areas: 4 },
    { title: 'Two', areas: 3 },
  ],
  ...o,
});

before(async () => {
  t = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
  a = await t.createApp('school-a', { ess: true });
  b = await t.createApp('school-b', { ess: true });
});
after(async () => {
  await t.close();
  await rx.close();
});

describe('card templates', () => {
  test('create from a definition, see its layout, download its PDF, delete it', async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const list = await c.get('/console/templates');
    assert.equal(list.status, 200);
    assert.match(list.body, /id="definition"[^>]*>\{/, 'the form starts from the documented example');
    const made = await c.post('/console/templates/create', { definition: JSON.stringify(definition()), students: '' });
    assert.equal(made.status, 303, made.body);
    const location = made.res.headers.get('location')!;
    const id = /^\/console\/templates\/([0-9a-f]{8})\?msg=template_created$/.exec(location)?.[1];
    assert.ok(id, location);
    const page = await c.get(location);
    assert.equal(page.status, 200);
    assert.match(page.body, /Card template created/);
    assert.match(page.body, new RegExp(`id="template-id">${id}<`));
    assert.match(page.body, /<svg class="layout"/, 'the layout is drawn');
    assert.match(page.body, /<td>One<\/td><td>4<\/td>/);
    const pdfUrl = /id="download-pdf" class="download" href="([^"]+)"/.exec(page.body)?.[1];
    assert.ok(pdfUrl);
    const pdf = Buffer.from(await (await fetch(new URL(pdfUrl.replace(/&amp;/g, '&'), t.url))).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    // The same template through the API.
    const info = await a.api.post<{ card_id: string }>('/api/application/card/template/info', { template_id: id });
    assert.equal(info.data.card_id, 'unit-1');
    assert.match((await c.get('/console/templates')).body, new RegExp(`data-id="${id}"`));
    const gone = await c.post(`/console/templates/${id}/delete`, { _confirmed: '1' });
    assert.equal(gone.status, 303);
    assert.equal(gone.res.headers.get('location'), '/console/templates?msg=template_deleted');
    assert.equal((await a.api.post('/api/application/card/template/info', { template_id: id })).code, 20404);
    assert.equal((await c.get(`/console/templates/${id}`)).status, 404);
  });

  test("a bad definition or class list gets the API's own message, with the form as typed", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const cases: Array<{
      definition: unknown;
      students?: Array<{ student_id: string; name?: string }>;
      lines: string;
    }> = [
      { definition: definition({ chapters: [] }), lines: '' },
      { definition: definition({ id: 'bad id!' }), lines: '' },
      { definition: definition(), students: [{ student_id: 'x'.repeat(40) }], lines: `${'x'.repeat(40)}` },
      {
        definition: definition(),
        students: [{ student_id: '1001', name: 'y'.repeat(90) }],
        lines: `1001, ${'y'.repeat(90)}`,
      },
    ];
    for (const k of cases) {
      const api = await a.api.post('/api/application/card/template/create', {
        definition: k.definition,
        ...(k.students ? { students: k.students } : {}),
      });
      assert.notEqual(api.code, 0);
      const r = await c.post('/console/templates/create', {
        definition: JSON.stringify(k.definition),
        students: k.lines,
      });
      assert.equal(r.status, 400);
      assert.ok(
        r.body.includes(`${escapeHtml(api.msg)} (code ${api.code})`),
        `${api.msg} in ${/id="template-error">([^<]*)/.exec(r.body)?.[1]}`,
      );
      assert.ok(r.body.includes(escapeHtml(JSON.stringify(k.definition))), 'the definition typed is kept');
    }
    // A form larger than the console's 64 KiB for other forms: this one takes what the API takes.
    const roomy = await c.post('/console/templates/create', {
      definition: JSON.stringify(definition({ id: 'roomy' })) + ' '.repeat(200_000),
      students: '',
    });
    assert.equal(roomy.status, 303, roomy.body.slice(0, 300));
    assert.equal(
      (
        await a.api.post('/api/application/card/template/delete', {
          template_id: /templates\/([0-9a-f]{8})/.exec(roomy.res.headers.get('location')!)![1],
        })
      ).code,
      0,
    );
    const notJson = await c.post('/console/templates/create', { definition: '{ nope', students: '' });
    assert.equal(notJson.status, 400);
    assert.match(notJson.body, /body\.definition is not valid JSON/);
    assert.equal(
      (await a.api.post<{ templates: unknown[] }>('/api/application/card/template/list', {})).data.templates.length,
      0,
    );
  });

  test("hostile titles are shown as text; another application's template is not found", async () => {
    const hostile = '<img src=x onerror=alert(1)>"\'';
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const made = await c.post('/console/templates/create', {
      definition: JSON.stringify(
        definition({ id: 'hostile', title: hostile, chapters: [{ title: '<script>alert(2)</script>', areas: 2 }] }),
      ),
    });
    assert.equal(made.status, 303, made.body);
    const page = await c.get(made.res.headers.get('location')!);
    assert.ok(!page.body.includes('<img src=x') && !page.body.includes('<script>alert'));
    assert.ok(page.body.includes(escapeHtml(hostile)) && page.body.includes('&lt;script&gt;alert(2)&lt;/script&gt;'));
    const theirs = await b.api.post<{ template_id: string }>('/api/application/card/template/create', {
      definition: definition({ id: 'theirs' }),
    });
    assert.equal(theirs.code, 0);
    assert.ok(!(await c.get('/console/templates')).body.includes(theirs.data.template_id));
    assert.equal((await c.get(`/console/templates/${theirs.data.template_id}`)).status, 404);
    assert.equal((await c.post(`/console/templates/${theirs.data.template_id}/delete`)).status, 404);
    assert.equal(
      (await c.post(`/console/templates/${theirs.data.template_id}/delete`, { _confirmed: '1' })).status,
      404,
    );
    assert.equal(
      (await b.api.post('/api/application/card/template/info', { template_id: theirs.data.template_id })).code,
      0,
      'theirs is still there',
    );
  });
});

describe('recognition runs and the task list', () => {
  /** A student's result callback, queued as the recognition assembler queues it. */
  const result = async (app: App, uuid: string, k: number, body: Record<string, unknown>) => {
    await t.server.services.callbacks.enqueue(t.server.repos.tasks.db, {
      appId: app.id,
      url: `${rx.url}/cards`,
      method: 'POST',
      event: 'recognition.result',
      taskUuid: uuid,
      body: { uuid, finish: false, error_code: 0, pages: [], result: null, ...body },
      group: `recognition:${uuid}:${k}`,
    });
  };

  test("a run lists each student's result as its callback carried it, live until the task ends; hostile text stays text", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const run = await a.api.post<{ uuid: string }>('/api/application/ess/create', { callback_url: `${rx.url}/cards` });
    assert.equal(run.code, 0, run.msg);
    const uuid = run.data.uuid;
    await result(a, uuid, 0, {
      pages: [{ paper_number: 1, page_number: 1, front: true, item_id: 1, temp_download_url: 'x' }],
      result: { student_id: '20240017', qrcode: 'q', fills: [[2, 7], [], [1]] },
    });
    await result(a, uuid, 1, { error_code: 1004, detail: '<script>alert("detail")</script>' });
    const list = await c.get('/console/recognition');
    assert.match(list.body, new RegExp(`data-uuid="${uuid}"`));
    assert.match(list.body, /waiting for its scan/);
    const page = await c.get(`/console/recognition/${uuid}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /class="student-id">20240017</);
    assert.match(page.body, /<li>2, 7<\/li><li>—<\/li><li>1<\/li>/);
    assert.match(page.body, /error 1004/);
    assert.ok(
      !page.body.includes('<script>alert') &&
        page.body.includes('&lt;script&gt;alert(&quot;detail&quot;)&lt;/script&gt;'),
    );
    assert.match(page.body, /page 1<\/span>|page 1 <span|>page 1</, 'the page is listed');
    assert.match(
      page.body,
      new RegExp(`hx-get="/console/recognition/${uuid}/live\\?page=1" hx-trigger="every 1s"`),
      'it polls while the task runs',
    );
    const live = await c.get(`/console/recognition/${uuid}/live`);
    assert.match(live.body, /^<div id="run-live"/);
    assert.match(live.body, /2 students/);
  });

  test("another application's recognition task is not listed and not found", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const theirs = await b.api.post<{ uuid: string }>('/api/application/ess/create', { callback_url: `${rx.url}/b` });
    assert.equal(theirs.code, 0);
    await result(b, theirs.data.uuid, 0, { result: { student_id: 'b-secret-student', qrcode: 'q', fills: [] } });
    for (const p of ['/console/recognition', '/console/tasks', '/console/tasks?kind=recognition']) {
      const body = (await c.get(p)).body;
      assert.ok(!body.includes(theirs.data.uuid), p);
    }
    for (const p of [`/console/recognition/${theirs.data.uuid}`, `/console/recognition/${theirs.data.uuid}/live`]) {
      const r = await c.get(p);
      assert.equal(r.status, 404, p);
      assert.ok(!r.body.includes('b-secret-student'));
    }
  });

  test('the task list pages through every kind, newest first, and filters by kind', async () => {
    const app = await t.createApp('many-runs', { ess: true });
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const made: string[] = [];
    for (let i = 0; i < 22; i++)
      made.push(
        (await app.api.post<{ uuid: string }>('/api/application/ess/create', { callback_url: `${rx.url}/m` })).data
          .uuid,
      );
    const first = await c.get('/console/tasks');
    assert.match(first.body, /Tasks <span class="muted">\(22\)<\/span>/);
    assert.match(first.body, /Page 1 of 2\./);
    assert.equal((first.body.match(/class="task"/g) ?? []).length, 20);
    const second = await c.get('/console/tasks?page=2');
    assert.equal((second.body.match(/class="task"/g) ?? []).length, 2);
    const all = [
      ...first.body.matchAll(/class="task" data-uuid="([^"]+)"/g),
      ...second.body.matchAll(/class="task" data-uuid="([^"]+)"/g),
    ].map((m) => m[1]);
    assert.deepEqual(new Set(all), new Set(made));
    assert.match(first.body, /href="\/console\/tasks\?page=2"/);
    const scans = await c.get('/console/tasks?kind=scan');
    assert.match(scans.body, /Tasks <span class="muted">\(0\)<\/span>/);
    const recognition = await c.get('/console/tasks?kind=recognition&page=2');
    assert.match(recognition.body, /href="\/console\/tasks\?kind=recognition&amp;page=1"/);
    const runs = await c.get('/console/recognition');
    assert.match(runs.body, /Recognition runs <span class="muted">\(22\)<\/span>/);
  });

  test('starting a run needs a device of this application and a callback URL the API takes', async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const theirs = await t.registerDevice();
    assert.equal((await b.api.post('/api/client/bind', { uuid: theirs.uuid, name: 'B box' })).code, 0);
    const foreign = await c.post('/console/recognition/start', { device: theirs.uuid, callback_url: `${rx.url}/x` });
    assert.equal(foreign.status, 404);
    const mine = await t.registerDevice();
    assert.equal((await a.api.post('/api/client/bind', { uuid: mine.uuid, name: 'A box' })).code, 0);
    const api = await a.api.post('/api/application/ess/create', { callback_url: 'x'.repeat(300) });
    const tooLong = await c.post('/console/recognition/start', { device: mine.uuid, callback_url: 'x'.repeat(300) });
    assert.equal(tooLong.status, 400);
    assert.ok(tooLong.body.includes(escapeHtml(api.msg)), api.msg);
    const noEss = await t.createApp('no-cards');
    const n = await new ConsoleClient(t.url).signIn(noEss.api_key);
    assert.match((await n.get('/console/recognition')).body, /id="no-ess"/);
  });
});

describe('keys', () => {
  test("rotate the session's own API key: the new one is shown once, the old one stops, the session goes on", async () => {
    const app = await t.createApp('rotating');
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const page = await c.get('/console/keys');
    const keyIdOf = /class="api-key" data-id="([^"]+)"/.exec(page.body)?.[1];
    assert.ok(keyIdOf);
    assert.match(page.body, /this session/);
    assert.ok(page.body.includes(`${app.api_key.slice(0, 10)}…`), "the key's prefix is shown");
    assert.ok(!page.body.includes(app.api_key), 'the key itself is not');
    const r = await c.post(`/console/keys/${keyIdOf}/rotate`, { _confirmed: '1' });
    assert.equal(r.status, 200);
    const fresh = /id="new-api-key">([^<]+)</.exec(r.body)?.[1];
    assert.ok(fresh && fresh !== app.api_key);
    assert.equal((await app.api.get('/api/client/list', { page: 1 })).code, 20001, 'the old key stops working');
    const { ApiClient } = await import('../../testing/harness.ts');
    assert.equal((await new ApiClient(t.url, fresh).get('/api/client/list', { page: 1 })).code, 0);
    c.adopt(r.res, r.body);
    const after = await c.get('/console/keys');
    assert.equal(after.status, 200, 'signed in still, with the new key');
    assert.ok(!after.body.includes(fresh), 'the new key is not shown again');
    // The session's own key cannot be revoked here.
    const newId = /class="api-key" data-id="([^"]+)"><td>default <span class="pill wait">this session/.exec(
      after.body,
    )?.[1];
    assert.ok(newId);
    const self = await c.post(`/console/keys/${newId}/revoke`, { _confirmed: '1' });
    assert.equal(self.status, 400);
    assert.match(self.body, /this session signed in with that key/);
  });

  test("revoke another key of the application; another application's key cannot be touched", async () => {
    const app = await t.createApp('revoking');
    const spare = await t.server.services.applications.createKey(app.id, 'ci');
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const { ApiClient } = await import('../../testing/harness.ts');
    assert.equal((await new ApiClient(t.url, spare.api_key).get('/api/client/list', { page: 1 })).code, 0);
    const r = await c.post(`/console/keys/${spare.id}/revoke`, { _confirmed: '1' });
    assert.equal(r.status, 303);
    assert.equal(r.res.headers.get('location'), '/console/keys?msg=key_revoked');
    assert.equal((await new ApiClient(t.url, spare.api_key).get('/api/client/list', { page: 1 })).code, 20001);
    const bKeys = await t.server.services.applications.listKeys(b.id);
    for (const action of ['rotate', 'revoke']) {
      for (const fields of [{}, { _confirmed: '1' }] as Array<Record<string, string>>) {
        const foreign = await c.post(`/console/keys/${bKeys[0]!.id}/${action}`, fields);
        assert.equal(foreign.status, 404, action);
        assert.ok(!foreign.body.includes('new-api-key') && !foreign.body.includes('confirm-ask'));
      }
    }
    assert.equal((await b.api.get('/api/client/list', { page: 1 })).code, 0, 'their key still works');
    assert.ok(!(await c.get('/console/keys')).body.includes(bKeys[0]!.id));
  });

  test("register end-to-end encryption keys: key id shown, a new one retires the current one; bad keys get the API's message", async () => {
    const app = await t.createApp('e2e');
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const k1 = randomBytes(32).toString('hex');
    const k2 = randomBytes(32).toString('base64url');
    assert.equal((await c.post('/console/keys/e2e', { public_key: k1 })).status, 303);
    let page = (await c.get('/console/keys?msg=e2e_registered')).body;
    assert.match(page, new RegExp(`data-kid="${keyId(k1)}"[\\s\\S]*?current`));
    assert.equal((await c.post('/console/keys/e2e', { public_key: k2 })).status, 303);
    page = (await c.get('/console/keys')).body;
    assert.match(page, new RegExp(`data-kid="${keyId(k1)}"[\\s\\S]*?retired`));
    assert.match(page, new RegExp(`data-kid="${keyId(k2)}"[\\s\\S]*?current`));
    const listed = await app.api.get<{ keys: Array<{ kid: string; current: boolean }> }>(
      '/api/application/e2e_key/list',
    );
    assert.deepEqual(
      listed.data.keys.map((k) => [k.kid, k.current]).sort(),
      [
        [keyId(k1), false],
        [keyId(k2), true],
      ].sort(),
    );
    for (const bad of ['00'.repeat(32), 'z'.repeat(50), 'short']) {
      const api = await app.api.post('/api/application/e2e_key/register', { public_key: bad });
      assert.notEqual(api.code, 0);
      const r = await c.post('/console/keys/e2e', { public_key: bad });
      assert.equal(r.status, 400);
      assert.ok(r.body.includes(`${escapeHtml(api.msg)} (code ${api.code})`), api.msg);
    }
    assert.ok(
      !(await new ConsoleClient(t.url).signIn(a.api_key).then((x) => x.get('/console/keys'))).body.includes(keyId(k2)),
      'another application does not see them',
    );
  });
});

describe('CSRF on the new forms', () => {
  test("every new form refuses a POST without the session's token, or from another origin, and changes nothing", async () => {
    const app = await t.createApp('csrf', { ess: true });
    const c = await new ConsoleClient(t.url).signIn(app.api_key);
    const other = await new ConsoleClient(t.url).signIn(app.api_key);
    const made = await app.api.post<{ template_id: string }>('/api/application/card/template/create', {
      definition: definition({ id: 'csrf' }),
    });
    const [key] = await t.server.services.applications.listKeys(app.id);
    const forms: Array<[string, Record<string, string>]> = [
      ['/console/templates/create', { definition: JSON.stringify(definition({ id: 'csrf-new' })) }],
      [`/console/templates/${made.data.template_id}/delete`, { _confirmed: '1' }],
      ['/console/recognition/start', { device: 'x', callback_url: `${rx.url}/x` }],
      [`/console/keys/${key!.id}/rotate`, { _confirmed: '1' }],
      [`/console/keys/${key!.id}/revoke`, { _confirmed: '1' }],
      ['/console/keys/e2e', { public_key: randomBytes(32).toString('hex') }],
    ];
    for (const [path, fields] of forms) {
      assert.equal((await c.post(path, fields, { csrf: null })).status, 403, `${path} without a token`);
      assert.equal(
        (await c.post(path, fields, { csrf: other.csrf })).status,
        403,
        `${path} with another session's token`,
      );
      assert.equal(
        (await c.post(path, fields, { headers: { origin: 'http://evil.example' } })).status,
        403,
        `${path} from another origin`,
      );
    }
    assert.equal(
      (await app.api.post<{ templates: unknown[] }>('/api/application/card/template/list', {})).data.templates.length,
      1,
    );
    assert.equal((await app.api.get('/api/client/list', { page: 1 })).code, 0, 'the key still works');
    assert.equal((await app.api.get<{ keys: unknown[] }>('/api/application/e2e_key/list')).data.keys.length, 0);
    assert.equal(
      (await app.api.post('/api/application/card/template/info', { template_id: made.data.template_id })).code,
      0,
    );
  });
});
