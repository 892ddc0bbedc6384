// The web console in a real browser (docs/console.md), its task and recognition pages: Debian's
// chromium driven by puppeteer-core (console-browser.ts) against a real server and simulated
// boxes: a scan of 22 items paged, the application's task list, card templates, a recognition
// run with a box scanning filled cards, the callback log with a replay and a test callback, hostile
// text on these pages, their forms posted from another site, and another application's runs and
// templates kept out. The device pages: console.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { plainPdf } from '@boxhub/pdf-tools/testing/hostile-pdf.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { cardStack, exampleCard } from './card-stack.ts';
import { ConsoleBrowser } from './console-browser.ts';
import { crossSiteForms, type CrossSite } from './cross-site.ts';
import { startRig, type Rig, type RigBox } from './fixtures.ts';

const OPERATOR_TOKEN = `op-${randomBytes(16).toString('hex')}`;

let rig: Rig;
let rx: Receiver;
let box: RigBox;
let c: ConsoleBrowser;
let attacker: CrossSite;
let other: Awaited<ReturnType<Rig['t']['createApp']>>;

before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_OPERATOR_TOKEN: OPERATOR_TOKEN } });
  rx = await startReceiver();
  box = await rig.box({ printer: 'sim:?side_ms=5' });
  other = await rig.t.createApp('other-school', { ess: true });
  attacker = await crossSiteForms(rig.t.url, {
    '/template': {
      action: '/console/templates/create',
      fields: { definition: JSON.stringify({ ...exampleCard, id: 'pwned' }) },
    },
    '/operator-app': { action: '/console/operator/applications/create', fields: { name: 'pwned-app' } },
  });
  c = await ConsoleBrowser.open(rig.t.url);
  await c.signIn(rig.app.api_key);
  await c.signInOperator(OPERATOR_TOKEN);
});

after(async () => {
  await c?.close();
  await attacker?.close();
  await rig?.close();
  await rx?.close();
});

describe('the console in chromium: tasks, templates, recognition, callbacks', () => {
  test('a scan of 22 items: the first 20 on its page, the rest on the next', async () => {
    // Items of one page each (the box's item cap), so 11 duplex sheets make 22 items.
    const many = await rig.box({ itemLimits: { maxPages: 1, maxBytes: 100 * 1024 * 1024 } });
    await rig.load(
      many,
      Array.from({ length: 11 }, () => ({ front: 'text' as const, back: 'text' as const })),
    );
    await c.goto(`/console/devices/${many.uuid}`);
    await c.page.waitForSelector('#start-scan');
    await c.go('#start-scan');
    await c.waitText('#scan-status', /^finished$/);
    await c.waitCount('.scan-item', 20);
    assert.match(await c.text('#scan-live'), /22 items · 22 pages/);
    // The page-by-page bar: a recorded cell for each of the 22 pages (docs/scanning.md, "Progress").
    assert.match(await c.text('#scan-pages'), /^22 pages scanned · 22 in recorded items/);
    assert.equal(await c.count('#scan-progress .cell.rec'), 22);
    assert.match(await c.text('#scan-live'), /Items 1-20 of 22/);
    await c.go('#items-pager a.next');
    assert.match(c.page.url(), /\?page=2$/);
    assert.equal(await c.count('.scan-item'), 2);
    assert.match(await c.text('#scan-live'), /Items 21-22 of 22/);
    const pdf = Buffer.from(await (await fetch(await c.href('.scan-item a.download'))).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    // The application-wide task list has it, and a print of the same box beside it.
    const printed = await rig.sdk.print.create({
      client_uuid: many.uuid,
      file_type: 'pdf',
      file_content: plainPdf(1).toString('base64'),
    });
    assert.ok(printed.uuid);
    await c.goto('/console/tasks');
    await c.page.waitForSelector('#task-list');
    assert.match(await c.text('#task-list'), /22 · 22/);
    assert.ok(await c.page.$('tr.task[data-kind="print"]'), 'the print task is listed too');
    await c.shot('tasks');
  });

  test('a card template: create it from a definition, see its layout, download its PDF', async () => {
    await c.goto('/console/templates');
    await c.page.waitForSelector('#definition');
    // The form starts from the documented example card.
    assert.match(
      await c.page.$eval('#definition', (e) => (e as unknown as { value: string }).value),
      /"math-g7-unit3"/,
    );
    await c.go('#create-template-button');
    await c.waitText('.flash', /Card template created/);
    assert.equal(await c.text('#template-card'), 'math-g7-unit3');
    assert.equal(await c.count('#layout-preview svg.layout'), 2, 'both sides of the duplex card are drawn');
    const pdf = Buffer.from(await (await fetch(await c.href('#download-pdf'))).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    const templateId = await c.text('#template-id');
    const api = await rig.api.post<{ card_id: string }>('/api/application/card/template/info', {
      template_id: templateId,
    });
    assert.equal(api.data.card_id, 'math-g7-unit3');
    await c.shot('template');
    await c.goto('/console/templates');
    await c.page.waitForSelector(`tr.template[data-id="${templateId}"]`);
    await c.shot('templates');
  });

  test("a recognition run: a box scans filled cards, each student's result appears live", async () => {
    assert.equal((await rig.api.post('/api/application/card/template/create', { definition: exampleCard })).code, 0);
    const stack = await cardStack(2, { seed: 31 });
    const cards = await rig.box();
    assert.equal((await rig.api.post('/api/client/edit', { uuid: cards.uuid, name: 'Card scanner' })).code, 0);
    await rig.load(
      cards,
      [0, 1].map((s) => ({
        front: { image: stack.pages[2 * s]!.jpeg, dpi: 200 },
        back: { image: stack.pages[2 * s + 1]!.jpeg, dpi: 200 },
      })),
    );
    await c.goto('/console/recognition');
    await c.page.waitForSelector('#run-device');
    await c.page.select('#run-device', cards.uuid);
    await c.page.type('#run-callback', `${rx.url}/cards`);
    await c.go('#start-run');
    assert.match(c.page.url(), /\/console\/recognition\/[0-9a-f-]{36}$/);
    await c.page.evaluate(() => {
      (globalThis as unknown as { __same?: boolean }).__same = true;
    });
    await c.waitText('#run-status', /ended/);
    await c.waitCount('tr.student', 2);
    assert.equal(
      await c.page.evaluate(() => (globalThis as unknown as { __same?: boolean }).__same),
      true,
      'the students came in without a page load (htmx polling)',
    );
    const ids = await c.page.$$eval('tr.student .student-id', (e) => e.map((x) => x.textContent));
    assert.deepEqual(
      ids,
      stack.expected.map((e) => e.result!.student_id),
    );
    assert.match(await c.text('#run-counts'), /4 pages received · 4 read · 2 students/);
    assert.equal(await c.count('tr.student a.page-link'), 4);
    const jpeg = Buffer.from(await (await fetch(await c.href('tr.student a.page-link'))).arrayBuffer());
    assert.equal(jpeg.subarray(0, 2).toString('hex'), 'ffd8', "a page link gives the page's image");
    await eventually(
      () => rx.received.some((r) => r.path.endsWith('/cards') && r.method === 'PUT'),
      'the end callback arrived',
    );
    await c.shot('recognition');
    await c.goto('/console/recognition');
    await c.page.waitForSelector('tr.run');
    assert.match(await c.text('#runs'), /ended/);
  });

  test('the callback log with attempts, and a replay', async () => {
    // A print of its own whose callbacks the receiver takes.
    await rig.sdk.print.create({
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: plainPdf(1).toString('base64'),
      options: { callback_url: `${rx.url}/print-log` },
    });
    await eventually(
      () => rx.received.some((r) => r.path.endsWith('/print-log') && r.body.includes('print.finished')),
      `print.finished delivered (got ${rx.received.map((r) => r.path).join(' ')})`,
    );
    await c.goto('/console/callbacks');
    await c.page.waitForSelector('tr.callback button.replay');
    assert.match(await c.text('#callbacks'), /delivered/);
    assert.match(await c.text('#callbacks'), /200 · \d+ ms/);
    // The first row that has a replay button: the newest row can be a callback still on its way
    // (no button yet), as the external-broker pass once had it.
    const id = await c.page.$eval('tr.callback button.replay', (b) => b.closest('tr')!.getAttribute('data-id')!);
    const before = rx.byId(id).length;
    await c.shot('callbacks');
    await Promise.all([c.page.waitForNavigation(), c.page.click(`tr.callback[data-id="${id}"] button.replay`)]);
    await c.waitText('.flash', /queued/);
    await eventually(() => rx.byId(id).length === before + 1, 'the replayed callback arrived');
  });

  test('a test callback sent from the callback settings arrives', async () => {
    await c.goto('/console/callbacks/settings');
    await c.page.waitForSelector('#test-url');
    await c.page.type('#test-url', `${rx.url}/test`);
    await Promise.all([c.page.waitForNavigation(), c.page.click('#send-test')]);
    await c.waitText('.flash', /Test callback queued/);
    assert.match(await c.text('#callbacks'), /callback\.test/);
    await eventually(
      () => rx.received.some((r) => r.path.endsWith('/test') && r.body.includes('callback.test')),
      'the test callback arrived',
    );
  });

  test('hostile text on the new pages is shown as text, never run', async () => {
    const hostile = '<img src=x onerror="window.__pwned=4">';
    await c.goto('/console/templates');
    await c.page.waitForSelector('#definition');
    await c.fill(
      '#definition',
      JSON.stringify({
        ...exampleCard,
        id: 'hostile-card',
        title: hostile,
        chapters: [{ title: '<script>window.__pwned=5</script>', areas: 3 }],
      }),
    );
    await c.go('#create-template-button');
    await c.waitText('.flash', /Card template created/);
    assert.equal(await c.text('#template-title'), hostile);
    assert.match(await c.text('#chapters'), /<script>window.__pwned=5<\/script>/);
    assert.equal(await c.pwned(), undefined);
    // A definition the API refuses comes back with the API's message, as text.
    await c.goto('/console/templates');
    await c.page.waitForSelector('#definition');
    await c.fill('#definition', JSON.stringify({ ...exampleCard, id: '<b>bad</b>' }));
    await c.go('#create-template-button');
    assert.match(await c.text('#template-error'), /id: 1-64 characters .* \(code 30410\)/);
    assert.equal(await c.page.$('#template-error b'), null);
  });

  test('forms of the new pages posted from another site are refused', async () => {
    for (const [path, endsWith] of [
      ['template', '/console/templates/create'],
      ['operator-app', '/console/operator/applications/create'],
    ] as const) {
      const response = c.page.waitForResponse((r) => r.url().endsWith(endsWith));
      await c.page.goto(`${attacker.url}${path}`);
      const r = await response;
      assert.equal(r.status(), 403, path);
      assert.match(await r.text(), /cross-origin request refused/);
    }
    const templates = await rig.api.post<{ templates: Array<{ card_id: string }> }>(
      '/api/application/card/template/list',
      {},
    );
    assert.ok(!templates.data.templates.some((x) => x.card_id === 'pwned'));
    assert.ok(!(await rig.t.server.services.applications.list(1)).applications.some((a) => a.name === 'pwned-app'));
  });

  test("another application's recognition tasks and card templates are not shown", async () => {
    const theirs = await other.api.post<{ template_id: string }>('/api/application/card/template/create', {
      definition: { ...exampleCard, id: 'other-school-card' },
    });
    const run = await other.api.post<{ uuid: string }>('/api/application/ess/create', {
      callback_url: `${rx.url}/other`,
    });
    assert.equal(theirs.code, 0);
    assert.equal(run.code, 0);
    for (const p of ['/console/templates', '/console/recognition', '/console/tasks']) {
      await c.goto(p);
      const body = await c.page.content();
      assert.ok(
        !body.includes(theirs.data.template_id) && !body.includes('other-school-card') && !body.includes(run.data.uuid),
        p,
      );
    }
    assert.equal((await c.goto(`/console/templates/${theirs.data.template_id}`))!.status(), 404);
    assert.equal((await c.goto(`/console/recognition/${run.data.uuid}`))!.status(), 404);
  });
});
