// The web console in a real browser (docs/console.md): Debian's chromium driven by
// puppeteer-core against a real server and simulated boxes on loopback: devices, scans (paged
// items), prints, callbacks, card templates, recognition runs with a box scanning filled cards,
// keys, the task list, and the operator's pages. With BOXHUB_CONSOLE_SCREENSHOTS=<dir> it saves
// the main pages there (npm run console:screenshots).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { randomBytes } from 'node:crypto';
import { keyId } from '@boxhub/protocol/e2e.ts';
import { jpegOf } from '@boxhub/pdf-tools/testing/hostile-pdf.ts';
import type { PrinterCapability } from '@boxhub/protocol';
import { cardStack, exampleCard } from './card-stack.ts';
import { startRig, type Rig, type RigBox } from './fixtures.ts';

/** The page's globals a test touches (the e2e package has no DOM types). */
interface InPage {
  settled: Promise<void>;
  document: { addEventListener(type: string, f: () => void, o: { once: boolean }): void };
}

const CHROMIUM = process.env.BOXHUB_CHROMIUM ?? '/usr/bin/chromium';
const shots = process.env.BOXHUB_CONSOLE_SCREENSHOTS;
const OPERATOR_TOKEN = `op-${randomBytes(16).toString('hex')}`;

let rig: Rig;
let rx: Receiver;
let box: RigBox;
let browser: Browser;
let page: Page;
let profile: string;
let attacker: Server;
let attackerUrl = '';
let otherDevice: { uuid: string };
let other: Awaited<ReturnType<Rig['t']['createApp']>>;
const files = mkdtempSync(join(tmpdir(), 'boxhub-console-'));

before(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_OPERATOR_TOKEN: OPERATOR_TOKEN } });
  rx = await startReceiver();
  box = await rig.box({ printer: 'sim:?side_ms=5' });
  assert.equal(
    (await rig.api.post('/api/client/edit', { uuid: box.uuid, name: 'Library box', remark: 'ground floor' })).code,
    0,
  );
  // Another application's box: never visible here.
  other = await rig.t.createApp('other-school', { ess: true });
  otherDevice = await rig.t.registerDevice();
  assert.equal(
    (await other.api.post('/api/client/bind', { uuid: otherDevice.uuid, name: 'Other school box' })).code,
    0,
  );
  // A page on another origin that posts a form to the console (no CSRF token: it cannot know it):
  // /rename, /template and /operator-app post to those forms.
  const forms: Record<string, { action: string; fields: Record<string, string> }> = {
    '/rename': { action: `/console/devices/${box.uuid}/rename`, fields: { name: 'pwned' } },
    '/template': {
      action: '/console/templates/create',
      fields: { definition: JSON.stringify({ ...exampleCard, id: 'pwned' }) },
    },
    '/operator-app': { action: '/console/operator/applications/create', fields: { name: 'pwned-app' } },
  };
  attacker = createServer((req, res) => {
    const f = forms[req.url ?? ''] ?? forms['/rename']!;
    const inputs = Object.entries(f.fields)
      .map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">`)
      .join('');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<form id="f" method="post" action="${rig.t.url}${f.action}">${inputs}</form><script>document.getElementById('f').submit()</script>`,
      );
  });
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
  const a = attacker.address();
  attackerUrl = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/`;
  profile = mkdtempSync(join(tmpdir(), 'boxhub-chromium-'));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 800 });
  page.setDefaultTimeout(20_000);
});

after(async () => {
  await browser?.close();
  await rig?.close();
  await rx?.close();
  await new Promise((r) => attacker?.close(r));
  rmSync(profile, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

type Dom = { document: { querySelector(s: string): { textContent: string | null } | null } };
type Win = { __pwned?: number };

async function shot(name: string, fullPage = true): Promise<void> {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`) as `${string}.png`, fullPage });
}
const text = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');
const waitText = (selector: string, re: RegExp) =>
  page.waitForFunction(
    (s, src) => new RegExp(src).test((globalThis as unknown as Dom).document.querySelector(s)?.textContent ?? ''),
    {},
    selector,
    re.source,
  );
const url = (path: string) => `${rig.t.url}${path}`;
const href = (selector: string) => page.$eval(selector, (a) => (a as unknown as { href: string }).href);
const count = (selector: string) => page.$$eval(selector, (e) => e.length);
/** Clicks and waits for the page it leads to. */
const go = async (selector: string) => {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
};
/** Sets a field's value at once (typing a long definition key by key is slow). */
const fill = (selector: string, value: string) =>
  page.$eval(
    selector,
    (e, v) => {
      (e as unknown as { value: string }).value = v;
    },
    value,
  );
const pwned = () => page.evaluate(() => (globalThis as unknown as Win).__pwned);
/**
 * Presses a destructive button and answers the console's dialog: yes confirms and waits for the
 * page it leads to; no cancels (the dialog closes, nothing is sent). Returns the question asked.
 */
async function answer(selector: string, yes: boolean): Promise<string> {
  await page.click(selector);
  await page.waitForSelector('#confirm-dialog[open]');
  const ask = await text('#confirm-dialog-ask');
  if (yes) await Promise.all([page.waitForNavigation(), page.click('#confirm-dialog-yes')]);
  else {
    await page.click('#confirm-dialog-no');
    await page.waitForSelector('#confirm-dialog:not([open])');
  }
  return ask;
}
const confirmed = (selector: string) => answer(selector, true);

describe('the console in chromium', () => {
  test("sign in with the API key, see the box online and no other application's box", async () => {
    await page.goto(url('/console'));
    await page.waitForSelector('#api_key');
    assert.match(page.url(), /\/console\/login$/);
    await shot('login');
    await page.type('#api_key', rig.app.api_key);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    assert.match(page.url(), /\/console\/devices$/, 'the key is in no URL');
    await page.waitForSelector(`tr[data-uuid="${box.uuid}"]`);
    assert.match(await text(`tr[data-uuid="${box.uuid}"] .state`), /online/);
    assert.equal(await text('#app-name'), 'rig');
    const body = await page.content();
    assert.ok(!body.includes('Other school box') && !body.includes(otherDevice.uuid));
    const cookies = await browser.cookies();
    const session = cookies.find((c) => c.name === 'bh_console')!;
    assert.ok(session.httpOnly);
    assert.equal(session.sameSite, 'Strict');
    assert.ok(!session.value.includes(rig.app.api_key));
    await shot('devices');
  });

  test('the device page: info, capability tree, buzz', async () => {
    await Promise.all([page.waitForNavigation(), page.click(`tr[data-uuid="${box.uuid}"] a.device-name`)]);
    await waitText('#device-title', /Library box/);
    await page.waitForSelector('#capability');
    assert.match(await text('#capability'), /media_sizes/);
    // Tall enough for the controls and the print form (the capability tree below is long).
    if (shots) {
      await page.setViewport({ width: 1200, height: 1500 });
      await shot('device', false);
      await page.setViewport({ width: 1200, height: 800 });
    }
    await Promise.all([page.waitForNavigation(), page.click('#buzz')]);
    await waitText('.flash', /buzzes/);
    await eventually(() => box.buzzer.played.length === 1, 'the box buzzed');
  });

  test('a scan: items appear live (no reload) with download links', async () => {
    // Continuous mode: the task waits for paper, so the page is open before any item exists.
    await page.type('#scan-callback', `${rx.url}/scan`);
    await page.click('#scan-continuous');
    await Promise.all([page.waitForNavigation(), page.click('#start-scan')]);
    assert.match(page.url(), /\/scans\/[0-9a-f-]{36}$/);
    assert.equal(await text('#scan-status'), 'scanning');
    assert.equal((await page.$$('.scan-item')).length, 0);
    await page.evaluate(() => {
      (globalThis as unknown as { __same?: boolean }).__same = true;
    });
    await rig.load(box, [
      { front: 'text', back: 'blank' },
      { front: 'text', back: 'text' },
    ]);
    await page.waitForSelector('.scan-item a.download');
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as { __same?: boolean }).__same),
      true,
      'the item came in without a page load (htmx polling)',
    );
    await confirmed('#stop-scan');
    await waitText('#scan-status', /^finished$/);
    await page.waitForSelector('.scan-item a.download');
    const href = await page.$eval('.scan-item a.download', (a) => (a as unknown as { href: string }).href);
    const pdf = Buffer.from(await (await fetch(href)).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    assert.match(await text('#scan-live'), /1 items · 3 pages/);
    // The task's history (docs/tasks.md "History"), refreshed with the live part.
    await waitText('#history', /item stored/);
    // The scanner's own state reports interleave with the task's steps as they come (a report
    // can land between `sent` and `acknowledged`), so the steps are compared without them.
    const steps = await page.$$eval('#history .history-entry', (rows) =>
      rows
        .map((r) => (r as unknown as { dataset: { source: string; what: string } }).dataset)
        .map((d) => `${d.source}:${d.what}`),
    );
    assert.deepEqual(steps.filter((s) => !s.startsWith('scanner:')).slice(0, 3), [
      'server:created',
      'server:sent',
      'box:acknowledged',
    ]);
    await shot('scan');
  });

  test('a print: upload a PDF, watch its timeline to the end', async () => {
    const d = await PDFDocument.create();
    for (let i = 0; i < 2; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
    const file = join(files, 'two-pages.pdf');
    writeFileSync(file, await d.save());
    await page.goto(url(`/console/devices/${box.uuid}`));
    // The scan just run is listed with a link to its page.
    assert.match(await text('#tasks'), /scan\s*ended/);
    const input = await page.waitForSelector('#print-file');
    await input!.uploadFile(file);
    await page.type('#print-callback', `${rx.url}/print`);
    await Promise.all([page.waitForNavigation(), page.click('#print')]);
    assert.match(page.url(), /\/prints\/[0-9a-f-]{36}$/);
    await waitText('#print-status', /^finished$/);
    assert.match(await text('#print-live'), /Printing started/);
    assert.match(await text('#print-live'), /Pages2/);
    // The history: who said what, the printer's own words included.
    await page.waitForSelector('#history .history-entry[data-what="finished"][data-source="printer"]');
    assert.equal(await count('#history .history-entry[data-what="accepted"][data-source="printer"]'), 1);
    assert.match(await text('#history'), /downloaded/);
    await shot('print');
  });

  test("device state and device events: the printer's reasons on the device page; the device events URL set and cleared", async () => {
    box.printer.setFault('media-empty');
    try {
      await eventually(
        async () =>
          (await rig.sdk.devices.info({ uuid: box.uuid })).client?.printer?.state_reasons?.includes('media_empty'),
        'paper out on the server',
      );
      await page.goto(url(`/console/devices/${box.uuid}`));
      assert.equal(await text('#printer-reasons'), 'media empty');
    } finally {
      box.printer.setFault(null);
    }
    await page.goto(url('/console/callbacks/settings'));
    assert.match(await text('#device-events-url'), /Not sent/);
    await fill('#device-events-input', `${rx.url}/devices`);
    await go('#device-events-save');
    assert.equal(await text('#device-events-url'), `${rx.url}/devices`);
    assert.equal((await rig.sdk.devices.eventCallback()).callback_url, `${rx.url}/devices`);
    await fill('#device-events-input', 'http://169.254.169.254/x');
    await go('#device-events-save');
    assert.match(await text('#error'), /not allowed|may not call|address/);
    await page.goto(url('/console/callbacks/settings'));
    await fill('#device-events-input', '');
    await go('#device-events-save');
    assert.match(await text('#device-events-url'), /Not sent/);
  });

  test('inkjet controls: clean the head, print a nozzle check, a power ink flush once per 24 hours', async () => {
    await page.goto(url(`/console/devices/${box.uuid}`));
    await page.waitForSelector('#head-clean');
    await confirmed('#head-clean');
    await waitText('.flash', /cleaned its print head/);
    await Promise.all([page.waitForNavigation(), page.click('#nozzle-check')]);
    await waitText('.flash', /nozzle check page/);
    await confirmed('#power-ink-flush');
    await waitText('.flash', /power ink flush/);
    assert.match(await text('#flush-next'), /next power ink flush is allowed after/);
    // A second flush within the window: the service's refusal, on the page.
    await confirmed('#power-ink-flush');
    await waitText('#refused', /once per 24 hours; the next is allowed after .*\(code \d+\)/);
    assert.deepEqual(box.printer.history, ['head_clean', 'nozzle_check', 'power_ink_flush']);
  });

  test('print options from the capability tree: media size, copies, sides; a refused option; a JPG', async () => {
    const d = await PDFDocument.create();
    for (let i = 0; i < 2; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
    const pdf = join(files, 'options.pdf');
    writeFileSync(pdf, await d.save());
    const cap = (await rig.api.get<PrinterCapability>('/api/print/capability', { client_uuid: box.uuid })).data;
    const other = cap.media_sizes.find((m) => m.media_size !== 'SVC_MS_A4')!;
    await page.goto(url(`/console/devices/${box.uuid}`));
    await page.waitForSelector('#print-media-size');
    const typesShown = () => page.$$eval('#print-media-type option', (o) => o.map((x) => x.getAttribute('value')));
    /** Picks a media size or type; htmx replaces the options that depend on it (no reload),
     *  and the next choice is made in the new options, not in the ones being replaced. */
    const pick = async (select: string, value: string) => {
      // htmx makes swapped-in elements live only when it settles them: the next choice waits
      // for that (a change on an element not yet settled sends nothing).
      await page.evaluate(() => {
        const w = globalThis as unknown as InPage;
        w.settled = new Promise((r) => w.document.addEventListener('htmx:afterSettle', () => r(), { once: true }));
      });
      await page.$eval('#print-options', (e) => e.setAttribute('data-old', '1'));
      await page.select(select, value);
      await page.waitForSelector('#print-options:not([data-old])');
      await page.evaluate(() => (globalThis as unknown as InPage).settled);
    };
    const pickSize = (size: string) => pick('#print-media-size', size);
    await pickSize(other.media_size);
    assert.deepEqual(
      await typesShown(),
      other.media_types.map((t) => t.media_type),
      'the types of that size',
    );
    await pickSize('SVC_MS_A4');
    await pick('#print-media-type', 'SVC_MT_PLAIN');
    await page.waitForSelector('#print-duplex option[value="SVC_DP_NOTUMBLE"]');
    await page.select('#print-duplex', 'SVC_DP_NOTUMBLE');
    await fill('#print-copies', '2');
    const input = await page.waitForSelector('#print-file');
    await input!.uploadFile(pdf);
    await Promise.all([page.waitForNavigation(), page.click('#print')]);
    assert.match(page.url(), /\/prints\/[0-9a-f-]{36}$/);
    assert.equal(await text('#job-copies'), '2 (collated)');
    assert.equal(await text('#job-duplex'), 'two-sided, long edge');
    await waitText('#print-status', /^finished$/);
    const job = box.printer.jobs.at(-1)!;
    assert.equal(job.task, page.url().split('/').pop());
    assert.equal(job.options.copies, 2);
    assert.equal(job.options.duplex, 'SVC_DP_NOTUMBLE');
    assert.equal(job.options.media_size, 'SVC_MS_A4');

    // Pages the document lacks: the service's own message, the form as sent.
    await page.goto(url(`/console/devices/${box.uuid}`));
    await page.waitForSelector('#print-pages');
    await page.type('#print-pages', '5-9');
    await (await page.waitForSelector('#print-file'))!.uploadFile(pdf);
    await Promise.all([page.waitForNavigation(), page.click('#print')]);
    const api = await rig.api.post('/api/print/create', {
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: readFileSync(pdf).toString('base64'),
      options: { page_ranges: '5-9' },
    });
    assert.notEqual(api.code, 0);
    assert.equal(await text('#refused'), `${api.msg} (code ${api.code})`);
    assert.equal(await page.$eval('#print-pages', (e) => (e as unknown as { value: string }).value), '5-9');

    // A JPG goes as file_type jpg.
    writeFileSync(join(files, 'photo.jpg'), jpegOf(600, 400));
    await (await page.waitForSelector('#print-file'))!.uploadFile(join(files, 'photo.jpg'));
    await fill('#print-pages', '');
    await Promise.all([page.waitForNavigation(), page.click('#print')]);
    assert.match(page.url(), /\/prints\/[0-9a-f-]{36}$/);
    assert.match(await text('#print-job'), /FileJPG/);
  });

  test('the callback log with attempts, and a replay', async () => {
    await eventually(
      () => rx.received.some((r) => r.path.endsWith('/print') && r.body.includes('print.finished')),
      `print.finished delivered (got ${rx.received.map((r) => r.path).join(' ')})`,
    );
    await page.goto(url('/console/callbacks'));
    await page.waitForSelector('tr.callback button.replay');
    assert.match(await text('#callbacks'), /delivered/);
    assert.match(await text('#callbacks'), /200 · \d+ ms/);
    const id = await page.$eval('tr.callback', (r) => r.getAttribute('data-id')!);
    const before = rx.byId(id).length;
    await shot('callbacks');
    await Promise.all([page.waitForNavigation(), page.click(`tr.callback[data-id="${id}"] button.replay`)]);
    await waitText('.flash', /queued/);
    await eventually(() => rx.byId(id).length === before + 1, 'the replayed callback arrived');
  });

  test('a test callback sent from the callback settings arrives', async () => {
    await page.goto(url('/console/callbacks/settings'));
    await page.waitForSelector('#test-url');
    await page.type('#test-url', `${rx.url}/test`);
    await Promise.all([page.waitForNavigation(), page.click('#send-test')]);
    await waitText('.flash', /Test callback queued/);
    assert.match(await text('#callbacks'), /callback\.test/);
    await eventually(
      () => rx.received.some((r) => r.path.endsWith('/test') && r.body.includes('callback.test')),
      'the test callback arrived',
    );
  });

  test('a hostile device name is shown as text, never run', async () => {
    const hostile = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
    await page.goto(url(`/console/devices/${box.uuid}`));
    const name = await page.waitForSelector('input[name=name]');
    await name!.evaluate((e) => {
      (e as unknown as { value: string }).value = '';
    });
    await name!.type(hostile);
    await Promise.all([page.waitForNavigation(), page.click('#rename')]);
    await waitText('.flash', /renamed/);
    assert.ok((await text('#device-title')).includes(hostile), 'the name is shown as the text it is');
    assert.equal(await page.evaluate(() => (globalThis as unknown as Win).__pwned), undefined);
    await page.goto(url('/console/devices'));
    await page.waitForSelector(`tr[data-uuid="${box.uuid}"]`);
    assert.equal(await text(`tr[data-uuid="${box.uuid}"] a.device-name`), hostile);
    assert.equal(await page.evaluate(() => (globalThis as unknown as Win).__pwned), undefined);
    assert.equal((await rig.api.post('/api/client/edit', { uuid: box.uuid, name: 'Library box' })).code, 0);
  });

  test('a cross-site form post without the CSRF token is refused', async () => {
    const response = page.waitForResponse((r) => r.url().endsWith('/rename'));
    await page.goto(attackerUrl);
    const r = await response;
    // Same site, another origin: the browser sends the cookie, and the console refuses the form.
    assert.equal(r.status(), 403);
    assert.match(await r.text(), /cross-origin request refused/);
    const c = await rig.api.get<{ client: { name: string } }>('/api/client/info', { uuid: box.uuid });
    assert.equal(c.data.client.name, 'Library box', 'the name was not changed');
  });

  test('reboot from the device page', async () => {
    await page.goto(url(`/console/devices/${box.uuid}`));
    await page.waitForSelector('#reboot');
    await confirmed('#reboot');
    await waitText('.flash', /rebooting/);
    await eventually(() => box.reboots.length === 1, 'the box rebooted');
  });

  test("another application's device page is not found", async () => {
    const r = await page.goto(url(`/console/devices/${otherDevice.uuid}`));
    assert.equal(r!.status(), 404);
    assert.ok(!(await page.content()).includes('Other school box'));
  });
  test('a scan of 22 items: the first 20 on its page, the rest on the next', async () => {
    // Items of one page each (the box's item cap), so 11 duplex sheets make 22 items.
    const many = await rig.box({ itemLimits: { maxPages: 1, maxBytes: 100 * 1024 * 1024 } });
    await rig.load(
      many,
      Array.from({ length: 11 }, () => ({ front: 'text' as const, back: 'text' as const })),
    );
    await page.goto(url(`/console/devices/${many.uuid}`));
    await page.waitForSelector('#start-scan');
    await go('#start-scan');
    await waitText('#scan-status', /^finished$/);
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
        ).document.querySelectorAll('.scan-item').length === 20,
    );
    assert.match(await text('#scan-live'), /22 items · 22 pages/);
    // The page-by-page bar: a recorded cell for each of the 22 pages (docs/scanning.md, "Progress").
    assert.match(await text('#scan-pages'), /^22 pages scanned · 22 in recorded items/);
    assert.equal(await count('#scan-progress .cell.rec'), 22);
    assert.match(await text('#scan-live'), /Items 1-20 of 22/);
    await go('#items-pager a.next');
    assert.match(page.url(), /\?page=2$/);
    assert.equal(await count('.scan-item'), 2);
    assert.match(await text('#scan-live'), /Items 21-22 of 22/);
    const pdf = Buffer.from(await (await fetch(await href('.scan-item a.download'))).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    // The application-wide task list has it, with the scans and prints of the other box.
    await page.goto(url('/console/tasks'));
    await page.waitForSelector('#task-list');
    assert.match(await text('#task-list'), /22 · 22/);
    assert.ok(await page.$('tr.task[data-kind="print"]'), 'the print task is listed too');
    await shot('tasks');
  });

  test('a card template: create it from a definition, see its layout, download its PDF', async () => {
    await page.goto(url('/console/templates'));
    await page.waitForSelector('#definition');
    // The form starts from the documented example card.
    assert.match(await page.$eval('#definition', (e) => (e as unknown as { value: string }).value), /"math-g7-unit3"/);
    await go('#create-template-button');
    await waitText('.flash', /Card template created/);
    assert.equal(await text('#template-card'), 'math-g7-unit3');
    assert.equal(await count('#layout-preview svg.layout'), 2, 'both sides of the duplex card are drawn');
    const pdf = Buffer.from(await (await fetch(await href('#download-pdf'))).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    const templateId = await text('#template-id');
    const api = await rig.api.post<{ card_id: string }>('/api/application/card/template/info', {
      template_id: templateId,
    });
    assert.equal(api.data.card_id, 'math-g7-unit3');
    await shot('template');
    await page.goto(url('/console/templates'));
    await page.waitForSelector(`tr.template[data-id="${templateId}"]`);
    await shot('templates');
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
    await page.goto(url('/console/recognition'));
    await page.waitForSelector('#run-device');
    await page.select('#run-device', cards.uuid);
    await page.type('#run-callback', `${rx.url}/cards`);
    await go('#start-run');
    assert.match(page.url(), /\/console\/recognition\/[0-9a-f-]{36}$/);
    await page.evaluate(() => {
      (globalThis as unknown as { __same?: boolean }).__same = true;
    });
    await waitText('#run-status', /ended/);
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
        ).document.querySelectorAll('tr.student').length === 2,
    );
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as { __same?: boolean }).__same),
      true,
      'the students came in without a page load (htmx polling)',
    );
    const ids = await page.$$eval('tr.student .student-id', (e) => e.map((x) => x.textContent));
    assert.deepEqual(
      ids,
      stack.expected.map((e) => e.result!.student_id),
    );
    assert.match(await text('#run-counts'), /4 pages received · 4 read · 2 students/);
    assert.equal(await count('tr.student a.page-link'), 4);
    const jpeg = Buffer.from(await (await fetch(await href('tr.student a.page-link'))).arrayBuffer());
    assert.equal(jpeg.subarray(0, 2).toString('hex'), 'ffd8', "a page link gives the page's image");
    await eventually(
      () => rx.received.some((r) => r.path.endsWith('/cards') && r.method === 'PUT'),
      'the end callback arrived',
    );
    await shot('recognition');
    await page.goto(url('/console/recognition'));
    await page.waitForSelector('tr.run');
    assert.match(await text('#runs'), /ended/);
  });

  test('keys: rotate and revoke an API key, register and rotate an encryption key, rotate the callback secret', async () => {
    const spare = await rig.t.server.services.applications.createKey(rig.app.id, 'ci');
    await page.goto(url('/console/keys'));
    await page.waitForSelector(`tr.api-key[data-id="${spare.id}"]`);
    assert.match(await text(`tr.api-key[data-id="${spare.id}"]`), new RegExp(`${spare.api_key.slice(0, 10)}…`));
    await confirmed(`tr.api-key[data-id="${spare.id}"] button.rotate-key`);
    const fresh = await text('#new-api-key');
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
    await confirmed(`tr.api-key[data-id="${freshId}"] button.revoke-key`);
    await waitText('.flash', /revoked/);
    assert.equal((await new ApiClient(rig.t.url, fresh).get('/api/client/list', { page: 1 })).code, 20001);
    // End-to-end encryption: register a public key, then another (the first is retired).
    const k1 = randomBytes(32).toString('hex');
    const k2 = randomBytes(32).toString('hex');
    for (const k of [k1, k2]) {
      await page.type('#e2e-public-key', k);
      await go('#register-e2e');
      await waitText('.flash', /Public key registered/);
    }
    assert.match(await text(`tr.e2e-key[data-kid="${keyId(k2)}"]`), /current/);
    assert.match(await text(`tr.e2e-key[data-kid="${keyId(k1)}"]`), /retired/);
    await shot('keys');
    await confirmed('#rotate-callback-secret');
    assert.match(await text('#callback-secret'), /^whsec_/);
  });

  test('the operator: sign in with the operator token, create an application, register a box that then comes online', async () => {
    await page.goto(url('/console/operator'));
    await page.waitForSelector('#operator_token');
    // The application's key is no operator credential.
    await page.type('#operator_token', rig.app.api_key);
    await go('button[type=submit]');
    assert.match(await text('.flash.bad'), /not the operator token/);
    await page.type('#operator_token', OPERATOR_TOKEN);
    await go('button[type=submit]');
    assert.match(page.url(), /\/console\/operator\/applications$/);
    const hostile = '<img src=x onerror="window.__pwned=3">Springfield';
    await page.type('#app-name-input', hostile);
    await go('#create-app');
    const key = await text('#new-app-key');
    assert.ok((await text('#new-application h2')).includes(hostile), 'the name is shown as the text it is');
    assert.equal(await pwned(), undefined);
    const { ApiClient } = await import('@boxhub/server/testing/harness.ts');
    assert.equal(
      (await new ApiClient(rig.t.url, key).get('/api/client/list', { page: 1 })).code,
      0,
      "the new application's key works",
    );
    await shot('operator-applications');
    // Register a box; the application binds it by its code; its agent logs in with the secret shown.
    await page.goto(url('/console/operator/devices'));
    const code = `OP${randomBytes(4).toString('hex').toUpperCase()}`;
    await page.type('#device-code', code);
    await page.type('#device-model', 'BX-SIM');
    await go('#register-device');
    const uuid = await text('#new-device-uuid');
    const secret = await text('#new-device-secret');
    await page.goto(url('/console/devices'));
    await page.type('#bind-code', code);
    await page.type('#bind-name', 'Registered by the operator');
    await go('#bind');
    await waitText('.flash', /bound/);
    await rig.box({ device: { uuid, secret } });
    await page.goto(url('/console/operator/devices'));
    await page.waitForSelector(`tr.device[data-uuid="${uuid}"]`);
    assert.match(await text(`tr.device[data-uuid="${uuid}"]`), /online/);
    assert.match(await text(`tr.device[data-uuid="${uuid}"]`), /rig as Registered by the operator/);
    await shot('operator-devices');
  });

  test('hostile text on the new pages is shown as text, never run', async () => {
    const hostile = '<img src=x onerror="window.__pwned=4">';
    await page.goto(url('/console/templates'));
    await page.waitForSelector('#definition');
    await fill(
      '#definition',
      JSON.stringify({
        ...exampleCard,
        id: 'hostile-card',
        title: hostile,
        chapters: [{ title: '<script>window.__pwned=5</script>', areas: 3 }],
      }),
    );
    await go('#create-template-button');
    await waitText('.flash', /Card template created/);
    assert.equal(await text('#template-title'), hostile);
    assert.match(await text('#chapters'), /<script>window.__pwned=5<\/script>/);
    assert.equal(await pwned(), undefined);
    // A definition the API refuses comes back with the API's message, as text.
    await page.goto(url('/console/templates'));
    await page.waitForSelector('#definition');
    await fill('#definition', JSON.stringify({ ...exampleCard, id: '<b>bad</b>' }));
    await go('#create-template-button');
    assert.match(await text('#template-error'), /id: 1-64 characters .* \(code 30410\)/);
    assert.equal(await page.$('#template-error b'), null);
  });

  test('forms of the new pages posted from another site are refused', async () => {
    for (const [path, endsWith] of [
      ['template', '/console/templates/create'],
      ['operator-app', '/console/operator/applications/create'],
    ] as const) {
      const response = page.waitForResponse((r) => r.url().endsWith(endsWith));
      await page.goto(`${attackerUrl}${path}`);
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
      await page.goto(url(p));
      const body = await page.content();
      assert.ok(
        !body.includes(theirs.data.template_id) && !body.includes('other-school-card') && !body.includes(run.data.uuid),
        p,
      );
    }
    assert.equal((await page.goto(url(`/console/templates/${theirs.data.template_id}`)))!.status(), 404);
    assert.equal((await page.goto(url(`/console/recognition/${run.data.uuid}`)))!.status(), 404);
  });

  test('destructive buttons ask first: Cancel (or Escape) leaves things as they are, the confirming button does it', async () => {
    const { ApiClient } = await import('@boxhub/server/testing/harness.ts');
    // Revoke an API key.
    const spare = await rig.t.server.services.applications.createKey(rig.app.id, 'ask-me');
    const works = async () => (await new ApiClient(rig.t.url, spare.api_key).get('/api/client/list', { page: 1 })).code;
    await page.goto(url('/console/keys'));
    const revoke = `tr.api-key[data-id="${spare.id}"] button.revoke-key`;
    await page.waitForSelector(revoke);
    assert.equal(
      await answer(revoke, false),
      `Revoke the API key "ask-me" (${spare.api_key.slice(0, 10)}…)? Applications using it are refused at once, on every node, and console sessions signed in with it end. This cannot be undone.`,
    );
    assert.equal(await text('#confirm-dialog-yes'), 'Revoke the key');
    await page.click(revoke);
    await page.waitForSelector('#confirm-dialog[open]');
    await page.keyboard.press('Escape');
    await page.waitForSelector('#confirm-dialog:not([open])');
    assert.match(page.url(), /\/console\/keys$/, 'no page was loaded');
    assert.equal(await works(), 0, 'the key still works');
    await confirmed(revoke);
    await waitText('.flash', /revoked/);
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
    await page.goto(url(`/console/devices/${held.uuid}`));
    await page.waitForSelector('#cancel-prints');
    assert.match(
      await answer('#cancel-prints', false),
      /^Cancel every print of the box "Held box" \(code [^)]+\)\? Every print task of the box ends/,
    );
    assert.equal(await finished(), false, 'the print goes on');
    await confirmed('#cancel-prints');
    await waitText('.flash', /Every print task of the box is cancelled/);
    assert.equal(await finished(), true, 'the print is cancelled');

    // Unbind the box.
    const bound = async () => (await rig.api.get('/api/client/info', { uuid: held.uuid })).code;
    assert.match(await answer('#unbind', false), /^Unbind the box "Held box"/);
    assert.equal(await bound(), 0, 'still bound');
    await confirmed('#unbind');
    await waitText('.flash', /unbound/);
    assert.notEqual(await bound(), 0, 'unbound');

    // Delete a card template.
    const tpl = await rig.api.post<{ template_id: string }>('/api/application/card/template/create', {
      definition: { ...exampleCard, id: 'to-delete' },
    });
    assert.equal(tpl.code, 0);
    const exists = async () =>
      (await rig.api.post('/api/application/card/template/info', { template_id: tpl.data.template_id })).code;
    await page.goto(url(`/console/templates/${tpl.data.template_id}`));
    await page.waitForSelector('#delete-template');
    assert.match(
      await answer('#delete-template', false),
      new RegExp(`^Delete the card template ${tpl.data.template_id} \\(card "to-delete"\\)\\?`),
    );
    assert.equal(await exists(), 0, 'the template is there');
    await confirmed('#delete-template');
    await waitText('.flash', /Card template deleted/);
    assert.notEqual(await exists(), 0, 'the template is deleted');

    // The operator revokes a box's secret (signed in as the operator by the test above).
    const dev = await rig.t.registerDevice();
    const secret = async () => (await rig.t.server.repos.devices.findByUuid(dev.uuid))!.secret_hash;
    const before = await secret();
    await page.goto(url('/console/operator/devices'));
    const revokeBox = `tr.device[data-uuid="${dev.uuid}"] button.revoke-device`;
    await page.waitForSelector(revokeBox);
    assert.match(await answer(revokeBox, false), new RegExp(`^Revoke the secret of the box ${dev.code}\\?`));
    assert.equal(await secret(), before, 'the secret is the same');
    await confirmed(revokeBox);
    await waitText('.flash', /secret is revoked/);
    assert.equal(await secret(), 'revoked');
  });

  test('without script a destructive button leads to a confirmation page: Cancel there leaves things as they are', async () => {
    const { ApiClient } = await import('@boxhub/server/testing/harness.ts');
    const spare = await rig.t.server.services.applications.createKey(rig.app.id, 'no-script');
    const works = async () => (await new ApiClient(rig.t.url, spare.api_key).get('/api/client/list', { page: 1 })).code;
    const plain = await browser.newPage();
    try {
      await plain.setJavaScriptEnabled(false);
      plain.setDefaultTimeout(20_000);
      await plain.goto(url('/console/keys'));
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
