// The web console in a real browser (docs/console.md): Debian's chromium driven by
// puppeteer-core (console-browser.ts) against a real server and a simulated box on loopback: the
// device list and page, a scan whose items come in live, prints with options and their timelines,
// the inkjet controls, device events settings, rename (hostile names, a cross-site form), reboot.
// Templates, recognition, callbacks and the task list: console-tasks.test.ts; keys, the operator
// and the confirmation dialogs: console-accounts.test.ts. With BOXHUB_CONSOLE_SCREENSHOTS=<dir>
// the main pages are saved there (npm run console:screenshots).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { jpegOf } from '@boxhub/pdf-tools/testing/hostile-pdf.ts';
import type { PrinterCapability } from '@boxhub/protocol';
import { ConsoleBrowser } from './console-browser.ts';
import { crossSiteForms, type CrossSite } from './cross-site.ts';
import { startRig, type Rig, type RigBox } from './fixtures.ts';

/** The page's globals a test touches (the e2e package has no DOM types). */
interface InPage {
  settled: Promise<void>;
  document: { addEventListener(type: string, f: () => void, o: { once: boolean }): void };
}

let rig: Rig;
let rx: Receiver;
let box: RigBox;
let c: ConsoleBrowser;
let attacker: CrossSite;
let otherDevice: { uuid: string };
const files = mkdtempSync(join(tmpdir(), 'boxhub-console-'));

before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
  box = await rig.box({ printer: 'sim:?side_ms=5' });
  assert.equal(
    (await rig.api.post('/api/client/edit', { uuid: box.uuid, name: 'Library box', remark: 'ground floor' })).code,
    0,
  );
  // Another application's box: never visible here.
  const other = await rig.t.createApp('other-school', { ess: true });
  otherDevice = await rig.t.registerDevice();
  assert.equal(
    (await other.api.post('/api/client/bind', { uuid: otherDevice.uuid, name: 'Other school box' })).code,
    0,
  );
  attacker = await crossSiteForms(rig.t.url, {
    '/rename': { action: `/console/devices/${box.uuid}/rename`, fields: { name: 'pwned' } },
  });
  c = await ConsoleBrowser.open(rig.t.url);
  await c.signIn(rig.app.api_key);
});

after(async () => {
  await c?.close();
  await attacker?.close();
  await rig?.close();
  await rx?.close();
  rmSync(files, { recursive: true, force: true });
});

describe('the console in chromium: devices, scans, prints', () => {
  test("sign in with the API key, see the box online and no other application's box", async () => {
    // A session of its own, signed in as no one yet.
    const s = await c.session();
    try {
      await s.goto('/console');
      await s.page.waitForSelector('#api_key');
      assert.match(s.page.url(), /\/console\/login$/);
      await s.shot('login');
      await s.page.type('#api_key', rig.app.api_key);
      await s.go('button[type=submit]');
      assert.match(s.page.url(), /\/console\/devices$/, 'the key is in no URL');
      await s.page.waitForSelector(`tr[data-uuid="${box.uuid}"]`);
      assert.match(await s.text(`tr[data-uuid="${box.uuid}"] .state`), /online/);
      assert.equal(await s.text('#app-name'), 'rig');
      const body = await s.page.content();
      assert.ok(!body.includes('Other school box') && !body.includes(otherDevice.uuid));
      const cookies = await s.page.browserContext().cookies();
      const session = cookies.find((x) => x.name === 'bh_console')!;
      assert.ok(session.httpOnly);
      assert.equal(session.sameSite, 'Strict');
      assert.ok(!session.value.includes(rig.app.api_key));
      await s.shot('devices');
    } finally {
      await s.close();
    }
  });

  test('the device page: info, capability tree, buzz', async () => {
    await c.goto('/console/devices');
    await c.page.waitForSelector(`tr[data-uuid="${box.uuid}"] a.device-name`);
    await c.go(`tr[data-uuid="${box.uuid}"] a.device-name`);
    await c.waitText('#device-title', /Library box/);
    await c.page.waitForSelector('#capability');
    assert.match(await c.text('#capability'), /media_sizes/);
    // Tall enough for the controls and the print form (the capability tree below is long).
    if (c.shots) {
      await c.page.setViewport({ width: 1200, height: 1500 });
      await c.shot('device', false);
      await c.page.setViewport({ width: 1200, height: 800 });
    }
    await Promise.all([c.page.waitForNavigation(), c.page.click('#buzz')]);
    await c.waitText('.flash', /buzzes/);
    await eventually(() => box.buzzer.played.length === 1, 'the box buzzed');
  });

  test('a scan: items appear live (no reload) with download links', async () => {
    // Continuous mode: the task waits for paper, so the page is open before any item exists.
    await c.goto(`/console/devices/${box.uuid}`);
    await c.page.waitForSelector('#scan-callback');
    await c.page.type('#scan-callback', `${rx.url}/scan`);
    await c.page.click('#scan-continuous');
    await Promise.all([c.page.waitForNavigation(), c.page.click('#start-scan')]);
    assert.match(c.page.url(), /\/scans\/[0-9a-f-]{36}$/);
    assert.equal(await c.text('#scan-status'), 'scanning');
    assert.equal((await c.page.$$('.scan-item')).length, 0);
    await c.page.evaluate(() => {
      (globalThis as unknown as { __same?: boolean }).__same = true;
    });
    await rig.load(box, [
      { front: 'text', back: 'blank' },
      { front: 'text', back: 'text' },
    ]);
    await c.page.waitForSelector('.scan-item a.download');
    assert.equal(
      await c.page.evaluate(() => (globalThis as unknown as { __same?: boolean }).__same),
      true,
      'the item came in without a page load (htmx polling)',
    );
    await c.confirmed('#stop-scan');
    await c.waitText('#scan-status', /^finished$/);
    await c.page.waitForSelector('.scan-item a.download');
    const href = await c.page.$eval('.scan-item a.download', (a) => (a as unknown as { href: string }).href);
    const pdf = Buffer.from(await (await fetch(href)).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    // Items are cut as the stack scans (item_seconds, 3 s by default, docs/scanning.md): a loaded
    // machine may make two of the three pages; the pages are what the stack holds.
    assert.match(await c.text('#scan-live'), /· [12] items · 3 pages/);
    // The task's history (docs/tasks.md "History"), refreshed with the live part.
    await c.waitText('#history', /item stored/);
    // The scanner's own state reports interleave with the task's steps as they come (a report
    // can land between `sent` and `acknowledged`), so the steps are compared without them.
    const steps = await c.page.$$eval('#history .history-entry', (rows) =>
      rows
        .map((r) => (r as unknown as { dataset: { source: string; what: string } }).dataset)
        .map((d) => `${d.source}:${d.what}`),
    );
    assert.deepEqual(steps.filter((s) => !s.startsWith('scanner:')).slice(0, 3), [
      'server:created',
      'server:sent',
      'box:acknowledged',
    ]);
    await c.shot('scan');
    // The device page lists the scan under its recent tasks.
    await c.goto(`/console/devices/${box.uuid}`);
    assert.match(await c.text('#tasks'), /scan\s*ended/);
  });

  test('a print: upload a PDF, watch its timeline to the end', async () => {
    const d = await PDFDocument.create();
    for (let i = 0; i < 2; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
    const file = join(files, 'two-pages.pdf');
    writeFileSync(file, await d.save());
    await c.goto(`/console/devices/${box.uuid}`);
    const input = await c.page.waitForSelector('#print-file');
    await input!.uploadFile(file);
    await c.page.type('#print-callback', `${rx.url}/print`);
    await Promise.all([c.page.waitForNavigation(), c.page.click('#print')]);
    assert.match(c.page.url(), /\/prints\/[0-9a-f-]{36}$/);
    await c.waitText('#print-status', /^finished$/);
    assert.match(await c.text('#print-live'), /Printing started/);
    assert.match(await c.text('#print-live'), /Pages2/);
    // The history: who said what, the printer's own words included.
    await c.page.waitForSelector('#history .history-entry[data-what="finished"][data-source="printer"]');
    assert.equal(await c.count('#history .history-entry[data-what="accepted"][data-source="printer"]'), 1);
    assert.match(await c.text('#history'), /downloaded/);
    await c.shot('print');
  });

  test("device state and device events: the printer's reasons on the device page; the device events URL set and cleared", async () => {
    box.printer.setFault('media-empty');
    try {
      await eventually(
        async () =>
          (await rig.sdk.devices.info({ uuid: box.uuid })).client?.printer?.state_reasons?.includes('media_empty'),
        'paper out on the server',
      );
      await c.goto(`/console/devices/${box.uuid}`);
      assert.equal(await c.text('#printer-reasons'), 'media empty');
    } finally {
      box.printer.setFault(null);
    }
    await c.goto('/console/callbacks/settings');
    assert.match(await c.text('#device-events-url'), /Not sent/);
    await c.fill('#device-events-input', `${rx.url}/devices`);
    await c.go('#device-events-save');
    assert.equal(await c.text('#device-events-url'), `${rx.url}/devices`);
    assert.equal((await rig.sdk.devices.eventCallback()).callback_url, `${rx.url}/devices`);
    await c.fill('#device-events-input', 'http://169.254.169.254/x');
    await c.go('#device-events-save');
    assert.match(await c.text('#error'), /not allowed|may not call|address/);
    await c.goto('/console/callbacks/settings');
    await c.fill('#device-events-input', '');
    await c.go('#device-events-save');
    assert.match(await c.text('#device-events-url'), /Not sent/);
  });

  test('inkjet controls: clean the head, print a nozzle check, a power ink flush once per 24 hours', async () => {
    await c.goto(`/console/devices/${box.uuid}`);
    await c.page.waitForSelector('#head-clean');
    await c.confirmed('#head-clean');
    await c.waitText('.flash', /cleaned its print head/);
    await Promise.all([c.page.waitForNavigation(), c.page.click('#nozzle-check')]);
    await c.waitText('.flash', /nozzle check page/);
    await c.confirmed('#power-ink-flush');
    await c.waitText('.flash', /power ink flush/);
    assert.match(await c.text('#flush-next'), /next power ink flush is allowed after/);
    // A second flush within the window: the service's refusal, on the c.page.
    await c.confirmed('#power-ink-flush');
    await c.waitText('#refused', /once per 24 hours; the next is allowed after .*\(code \d+\)/);
    assert.deepEqual(box.printer.history, ['head_clean', 'nozzle_check', 'power_ink_flush']);
  });

  test('print options from the capability tree: media size, copies, sides; a refused option; a JPG', async () => {
    const d = await PDFDocument.create();
    for (let i = 0; i < 2; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
    const pdf = join(files, 'options.pdf');
    writeFileSync(pdf, await d.save());
    const cap = (await rig.api.get<PrinterCapability>('/api/print/capability', { client_uuid: box.uuid })).data;
    const other = cap.media_sizes.find((m) => m.media_size !== 'SVC_MS_A4')!;
    await c.goto(`/console/devices/${box.uuid}`);
    await c.page.waitForSelector('#print-media-size');
    const typesShown = () => c.page.$$eval('#print-media-type option', (o) => o.map((x) => x.getAttribute('value')));
    /** Picks a media size or type; htmx replaces the options that depend on it (no reload),
     *  and the next choice is made in the new options, not in the ones being replaced. */
    const pick = async (select: string, value: string) => {
      // htmx makes swapped-in elements live only when it settles them: the next choice waits
      // for that (a change on an element not yet settled sends nothing).
      await c.page.evaluate(() => {
        const w = globalThis as unknown as InPage;
        w.settled = new Promise((r) => w.document.addEventListener('htmx:afterSettle', () => r(), { once: true }));
      });
      await c.page.$eval('#print-options', (e) => e.setAttribute('data-old', '1'));
      await c.page.select(select, value);
      await c.page.waitForSelector('#print-options:not([data-old])');
      await c.page.evaluate(() => (globalThis as unknown as InPage).settled);
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
    await c.page.waitForSelector('#print-duplex option[value="SVC_DP_NOTUMBLE"]');
    await c.page.select('#print-duplex', 'SVC_DP_NOTUMBLE');
    await c.fill('#print-copies', '2');
    const input = await c.page.waitForSelector('#print-file');
    await input!.uploadFile(pdf);
    await Promise.all([c.page.waitForNavigation(), c.page.click('#print')]);
    assert.match(c.page.url(), /\/prints\/[0-9a-f-]{36}$/);
    assert.equal(await c.text('#job-copies'), '2 (collated)');
    assert.equal(await c.text('#job-duplex'), 'two-sided, long edge');
    await c.waitText('#print-status', /^finished$/);
    const job = box.printer.jobs.at(-1)!;
    assert.equal(job.task, c.page.url().split('/').pop());
    assert.equal(job.options.copies, 2);
    assert.equal(job.options.duplex, 'SVC_DP_NOTUMBLE');
    assert.equal(job.options.media_size, 'SVC_MS_A4');

    // Pages the document lacks: the service's own message, the form as sent.
    await c.goto(`/console/devices/${box.uuid}`);
    await c.page.waitForSelector('#print-pages');
    await c.page.type('#print-pages', '5-9');
    await (await c.page.waitForSelector('#print-file'))!.uploadFile(pdf);
    await Promise.all([c.page.waitForNavigation(), c.page.click('#print')]);
    const api = await rig.api.post('/api/print/create', {
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: readFileSync(pdf).toString('base64'),
      options: { page_ranges: '5-9' },
    });
    assert.notEqual(api.code, 0);
    assert.equal(await c.text('#refused'), `${api.msg} (code ${api.code})`);
    assert.equal(await c.page.$eval('#print-pages', (e) => (e as unknown as { value: string }).value), '5-9');

    // A JPG goes as file_type jpg.
    writeFileSync(join(files, 'photo.jpg'), jpegOf(600, 400));
    await (await c.page.waitForSelector('#print-file'))!.uploadFile(join(files, 'photo.jpg'));
    await c.fill('#print-pages', '');
    await Promise.all([c.page.waitForNavigation(), c.page.click('#print')]);
    assert.match(c.page.url(), /\/prints\/[0-9a-f-]{36}$/);
    assert.match(await c.text('#print-job'), /FileJPG/);
  });

  test('a hostile device name is shown as text, never run', async () => {
    const hostile = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
    await c.goto(`/console/devices/${box.uuid}`);
    const name = await c.page.waitForSelector('input[name=name]');
    await name!.evaluate((e) => {
      (e as unknown as { value: string }).value = '';
    });
    await name!.type(hostile);
    await Promise.all([c.page.waitForNavigation(), c.page.click('#rename')]);
    await c.waitText('.flash', /renamed/);
    assert.ok((await c.text('#device-title')).includes(hostile), 'the name is shown as the text it is');
    assert.equal(await c.page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), undefined);
    await c.goto('/console/devices');
    await c.page.waitForSelector(`tr[data-uuid="${box.uuid}"]`);
    assert.equal(await c.text(`tr[data-uuid="${box.uuid}"] a.device-name`), hostile);
    assert.equal(await c.page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), undefined);
    assert.equal((await rig.api.post('/api/client/edit', { uuid: box.uuid, name: 'Library box' })).code, 0);
  });

  test('a cross-site form post without the CSRF token is refused', async () => {
    const response = c.page.waitForResponse((r) => r.url().endsWith(`/console/devices/${box.uuid}/rename`));
    await c.page.goto(`${attacker.url}rename`);
    const r = await response;
    // Same site, another origin: the browser sends the cookie, and the console refuses the form.
    assert.equal(r.status(), 403);
    assert.match(await r.text(), /cross-origin request refused/);
    const info = await rig.api.get<{ client: { name: string } }>('/api/client/info', { uuid: box.uuid });
    assert.equal(info.data.client.name, 'Library box', 'the name was not changed');
  });

  test("another application's device page is not found", async () => {
    const r = await c.goto(`/console/devices/${otherDevice.uuid}`);
    assert.equal(r!.status(), 404);
    assert.ok(!(await c.page.content()).includes('Other school box'));
  });

  test('reboot from the device page', async () => {
    await c.goto(`/console/devices/${box.uuid}`);
    await c.page.waitForSelector('#reboot');
    await c.confirmed('#reboot');
    await c.waitText('.flash', /rebooting/);
    await eventually(() => box.reboots.length === 1, 'the box rebooted');
  });
});
