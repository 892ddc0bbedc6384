// The teacher's review loop in a real browser (docs/console.md, "Review"): Debian's chromium
// driven by puppeteer-core against a real server, a simulated box scanning filled cards and a
// real receiver. A run is started from the console; the students that need review are listed;
// the teacher opens one, ticks an uncertain area on the page's overlay, opens another and types
// the student number the recognizer could not read; each correction arrives signed at the
// receiver as a revision, and the end callback is not sent again. Another application's
// session gets 404 for the same pages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { CallbackReceiver } from '@boxhub/sdk';
import { exampleCard } from './card-stack.ts';
import { ConsoleBrowser } from './console-browser.ts';
import { startRig, type Rig, type RigBox } from './fixtures.ts';
import { reviewStack, type ReviewStack } from './review-stack.ts';

/** With BOXHUB_CONSOLE_SCREENSHOTS=<dir> (npm run console:screenshots) the review page is saved there. */
const shots = process.env.BOXHUB_CONSOLE_SCREENSHOTS;

let rig: Rig;
let rx: Receiver;
let box: RigBox;
let c: ConsoleBrowser;
let page: Page;
let stack: ReviewStack;
let other: Awaited<ReturnType<Rig['t']['createApp']>>;
let runUuid = '';

interface Body {
  uuid: string;
  finish: boolean;
  error_code: number;
  result: null | { student_id: string; fills: number[][]; uncertain?: number[][] };
  revision?: number;
}
const posts = () => rx.received.filter((r) => r.method === 'POST' && r.path.endsWith('/class'));
const bodies = () => posts().map((p) => JSON.parse(p.body) as Body);

before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
  other = await rig.t.createApp('other-school', { ess: true });
  stack = await reviewStack(3);
  await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
  box = await rig.box();
  // Students 1-3 of the review stack: one clear, one with an uncertain area, one with an
  // ambiguous student number.
  await rig.load(
    box,
    [0, 1, 2].map((s) => ({
      front: { image: stack.pages[2 * s]!.jpeg, dpi: 200 },
      back: { image: stack.pages[2 * s + 1]!.jpeg, dpi: 200 },
    })),
  );
  c = await ConsoleBrowser.open(rig.t.url, { width: 1200, height: 900 });
  page = c.page;
});

after(async () => {
  await c?.close();
  await rig?.close();
  await rx?.close();
});

/** Presses the form's button and says yes in the console's confirmation dialog. */
async function confirmSubmit(selector: string): Promise<string> {
  await page.click(selector);
  await page.waitForSelector('#confirm-dialog[open]');
  const ask = await c.text('#confirm-dialog-ask');
  await Promise.all([page.waitForNavigation(), page.click('#confirm-dialog-yes')]);
  return ask;
}

describe('the review loop in chromium', () => {
  test("a run's students that need review; an uncertain area ticked and a student number typed on the page; signed revisions arrive", async () => {
    await page.goto(c.url('/console'));
    await page.waitForSelector('#api_key');
    await page.type('#api_key', rig.app.api_key);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    await page.goto(c.url('/console/recognition'));
    await page.waitForSelector('#run-device');
    await page.select('#run-device', box.uuid);
    await page.type('#run-callback', `${rx.url}/class`);
    await c.go('#start-run');
    runUuid = /\/console\/recognition\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    // The list of students to review comes in with the live part, without a reload.
    await page.waitForFunction(
      () =>
        /ended/.test(
          (
            globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }
          ).document.querySelector('#run-status')?.textContent ?? '',
        ),
      { timeout: 90_000 },
    );
    await page.waitForSelector('#review-items');
    const items = await page.$$eval('tr.review-item', (e) =>
      e.map((x) => [(x as unknown as { dataset: { student: string } }).dataset.student, x.textContent]),
    );
    assert.deepEqual(
      items.map((i) => i[0]),
      ['2', '3'],
      JSON.stringify(items),
    );
    assert.match(items[0]![1]!, /1 uncertain area/);
    assert.match(items[1]![1]!, /error 1001/);
    await eventually(
      () => rx.received.some((r) => r.method === 'PUT' && r.path.endsWith('/class')),
      'the end callback',
    );

    // Student 2: the page with its overlay; the uncertain area shows its score; tick it.
    await c.go('tr.review-item[data-student="2"] a.review-link');
    await page.waitForSelector('svg.page-svg');
    assert.ok(await page.$('svg.page-svg polygon.ov-qr'), 'the QR region is marked');
    assert.ok(await page.$('svg.page-svg polygon.ov-student'), 'the student-number grid is marked');
    assert.ok((await page.$$('svg.page-svg g.ov-filled')).length > 3);
    const unsure = await page.$$eval('g.ov-uncertain', (e) =>
      e.map((g) => [(g as unknown as { dataset: { area: string } }).dataset.area, g.textContent?.trim()]),
    );
    assert.equal(unsure.length, 1);
    assert.match(unsure[0]![1]!, /^\d\.\d\d$/, 'its score is shown');
    const [chapter, index] = unsure[0]![0]!.split('.').map(Number) as [number, number];
    // A click on the area on the page (the checkbox placed over it).
    await page.click(`g.ov-uncertain[data-area="${chapter}.${index}"] label.area-pick`);
    assert.equal(
      await page.$eval(`input[name="a_${chapter}_${index}"]`, (e) => (e as unknown as { checked: boolean }).checked),
      true,
    );
    await page.type('#review-reviewer', 'Ms. <b>Example</b>');
    if (shots) {
      mkdirSync(shots, { recursive: true });
      // The page's head and the first chapters: the overlay as a teacher sees it.
      const box = (await (await page.$('.review-page'))!.boundingBox())!;
      await page.screenshot({
        path: join(shots, 'review.png') as `${string}.png`,
        captureBeyondViewport: true,
        clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 760) },
      });
    }
    const ask = await confirmSubmit('#review-save');
    assert.match(ask, /student 2 .* revision 1/);
    assert.match(await c.text('.flash'), /Correction saved/);
    assert.match(await c.text('#review-now'), /revision 1/);
    assert.equal((await page.$$('g.ov-uncertain')).length, 0, 'the page now shows the decision');
    assert.match(await c.text('#review-trail'), /Ms\. <b>Example<\/b> .*console/s, 'the name shown as text');
    assert.equal(await page.$('#review-trail b'), null, 'never as markup');

    // Student 3: the student number could not be read; saving without it is refused on the page.
    await page.goto(c.url(`/console/recognition/${runUuid}`));
    await page.waitForSelector('#review-items');
    assert.match(await c.text('tr.review-item[data-student="2"]'), /resolved/);
    await c.go('tr.review-item[data-student="3"] a.review-link');
    await page.waitForSelector('#review-save');
    await confirmSubmit('#review-save');
    assert.match(await c.text('#review-error'), /type it .*code 30421/);
    await page.type('#review-student-id', stack.studentIds[2]!);
    await confirmSubmit('#review-save');
    assert.match(await c.text('.flash'), /Correction saved/);
    assert.match(await c.text('#review-now .student-id'), new RegExp(stack.studentIds[2]!));

    // Both revisions arrive, signed, with the API's per-student body plus revision.
    await eventually(
      () => (bodies().filter((b) => b.revision === 1).length === 2 ? true : undefined),
      'two revision callbacks',
      30_000,
    );
    const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
    for (const p of posts()) assert.equal(receiver.receive(p).type, 'recognition.result');
    const revised = bodies().filter((b) => b.revision === 1);
    const two = revised.find((b) => b.result!.student_id !== stack.studentIds[2])!;
    assert.ok(two.result!.fills[chapter - 1]!.includes(index), 'the ticked area is filled');
    assert.deepEqual(two.result!.uncertain!.flat(), []);
    assert.equal(two.finish, false);
    const three = revised.find((b) => b.result!.student_id === stack.studentIds[2])!;
    assert.equal(three.error_code, 0);
    assert.equal(rx.received.filter((r) => r.method === 'PUT').length, 1, 'the end callback is not sent twice');
    // The annotated image the page links to.
    const img = await page.goto(c.url(`/console/recognition/${runUuid}/pages/5/annotated`));
    assert.equal(img!.status(), 200);
    assert.equal(img!.headers()['content-type'], 'image/jpeg');
  });

  test("another application's session gets 404 for the run's review pages, images and corrections", async () => {
    const ctx = await c.browser.createBrowserContext();
    const p2 = await ctx.newPage();
    await p2.goto(c.url('/console'));
    await p2.waitForSelector('#api_key');
    await p2.type('#api_key', other.api_key);
    await Promise.all([p2.waitForNavigation(), p2.click('button[type=submit]')]);
    for (const path of [
      `/console/recognition/${runUuid}/students/2`,
      `/console/recognition/${runUuid}/pages/3/image`,
      `/console/recognition/${runUuid}/pages/3/annotated`,
    ]) {
      assert.equal((await p2.goto(c.url(path)))!.status(), 404, path);
    }
    const missing = await p2.goto(c.url('/console/recognition/00000000-0000-4000-8000-000000000000/students/2'));
    assert.equal(missing!.status(), 404);
    await ctx.close();
    assert.equal(bodies().filter((b) => b.revision).length, 2, 'nothing more was sent');
  });
});
