// Remote scanning end to end (docs/api.md: "Scanning", "Scan task", "Scan item", "Events"):
// a real server, broker and simulated box with paper in its feeder, a real callback receiver.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { CallbackReceiver } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { startRig, type Rig } from './fixtures.ts';

let rig: Rig;
let rx: Receiver;
let dir: string;
before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
  dir = await mkdtemp(join(tmpdir(), 'boxhub-scan-'));
});
after(async () => {
  await rig.close();
  await rx.close();
  await rm(dir, { recursive: true, force: true });
});

const info = (client_uuid: string, scan_uuid: string) => rig.sdk.scan.info({ client_uuid, scan_uuid });
const finished = (client_uuid: string, scan_uuid: string) =>
  rig.sdk.scan.waitForFinish({ client_uuid, scan_uuid }, { intervalMs: 50, timeoutMs: 30_000 });

describe('a scan from create to finish', () => {
  test('pages become PDF items; scan.item_data and scan.finish callbacks; info and item_data with download links', async () => {
    const box = await rig.box();
    // Three sheets, printed fronts and blank backs: with blank-page skip (the default) three pages.
    await rig.load(box, [
      { front: 'text', back: 'blank' },
      { front: 'text', back: 'blank' },
      { front: 'text', back: 'text' },
    ]);
    // item_seconds 0: one item whatever the machine's speed (the item rule has its own test below).
    const created = await rig.sdk.scan.create({
      client_uuid: box.uuid,
      options: { callback_url: `${rx.url}/scan`, resolution: 150, item_seconds: 0 },
    });
    const uuid = created.uuid!;
    assert.match(uuid, /^[0-9a-f-]{36}$/);
    assert.ok(
      Math.abs(created.expires_at! - (Date.now() / 1000 + 86400)) < 120,
      'expires about 24 hours from now, in Unix seconds',
    );

    const done = await finished(box.uuid, uuid);
    assert.equal(done.action_ack, true);
    assert.equal(typeof done.action_ack_at, 'number');
    assert.equal(done.error_code, 0);
    assert.equal(done.item_size, 1, 'one batch of paper within the item rule, one item');
    assert.deepEqual(
      [done.scanned_pages, done.skipped_pages],
      [4, 2],
      'every side scanned is counted: 4 kept, 2 blank backs skipped',
    );
    assert.equal(done.total_pages, 4, '3 fronts and the one printed back');
    assert.ok((done.total_file_size ?? 0) > 0);
    assert.ok(done.finished_at! >= done.created_at);

    const current = await rig.sdk.scan.current({ client_uuid: box.uuid });
    assert.deepEqual(current, { exist: false }, 'the lock is released');

    const items = await rig.sdk.scan.itemData({ client_uuid: box.uuid, scan_uuid: uuid, page: 1 });
    assert.equal(items.total, 1);
    assert.equal(items.page_size, 20);
    const item = items.items[0]!;
    assert.equal(item.item_id, 1);
    assert.equal(item.pages, 4);
    // The SDK's download checks the MD5 and the size as it streams (and refuses otherwise).
    const file = await rig.sdk.scan.download(item, join(dir, 'item-1.pdf'));
    const pdf = await readFile(file.path);
    assert.equal(createHash('md5').update(pdf).digest('hex'), item.check_sum, 'the download is the file the box made');
    assert.equal(file.md5, item.check_sum);
    assert.equal(Math.ceil(pdf.length / 1024), item.file_size);
    assert.equal((await PDFDocument.load(pdf)).getPageCount(), 4);

    // Callbacks: one scan.item_data per item, then scan.finish, signed, carrying the task and
    // device; the SDK's receiver checks each signature and the body's schema.
    const got = await eventually(() => {
      const l = rx.received.filter((r) => r.path.endsWith('/scan') && JSON.parse(r.body).uuid === uuid);
      return l.length >= 2 ? l : undefined;
    }, 'scan callbacks');
    const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
    const events = got.map((r) => receiver.receive(r));
    const itemEvent = events.find((e) => e.type === 'scan.item_data');
    const finishEvent = events.find((e) => e.type === 'scan.finish');
    assert.ok(
      itemEvent?.type === 'scan.item_data' && finishEvent?.type === 'scan.finish',
      'a scan.item_data and a scan.finish',
    );
    assert.equal(itemEvent.body.client_uuid, box.uuid);
    assert.equal(itemEvent.body.item_id, 1);
    assert.equal(itemEvent.body.pages, 4);
    assert.equal(itemEvent.body.check_sum, item.check_sum);
    assert.match(String(itemEvent.body.temp_download_url), /^http/);
    assert.equal(finishEvent.body.finished, true);
    assert.equal(finishEvent.body.item_size, 1);
    assert.equal(finishEvent.body.error_code, 0);
    for (const r of got) assert.equal(r.headers['user-agent'], 'SVC');
  });

  test('continuous mode: more paper within the wait goes into a new item; the scan ends by itself after the wait', async () => {
    const box = await rig.box();
    // What the box's scan job asked of its scanner, and how long each wait for paper lasted
    // (measured at the scanner: how long the server takes to hear of it is another matter).
    const waits: Array<{ more: boolean; ms: number; timeoutMs: number }> = [];
    const waitForPaper = box.scanner.waitForPaper.bind(box.scanner);
    box.scanner.waitForPaper = async (signal, timeoutMs) => {
      const t0 = performance.now();
      const more = await waitForPaper(signal, timeoutMs);
      waits.push({ more, ms: performance.now() - t0, timeoutMs });
      return more;
    };
    await rig.load(box, 1);
    const uuid = (
      await rig.sdk.scan.create({
        client_uuid: box.uuid,
        options: { continuous: true, continuous_wait: 2, duplex: false },
      })
    ).uuid!;
    await eventually(async () => (await info(box.uuid, uuid)).item_size === 1, 'first item');
    await rig.load(box, 2);
    await eventually(async () => (await info(box.uuid, uuid)).item_size === 2, 'second item from the reloaded feeder');
    const done = await finished(box.uuid, uuid);
    assert.equal(done.error_code, 0);
    assert.equal(done.total_pages, 3);
    // It waited for the paper loaded while it waited, then waited the whole continuous_wait in
    // vain and ended by itself.
    assert.deepEqual(
      waits.map((w) => [w.more, w.timeoutMs]),
      [
        [true, 2000],
        [false, 2000],
      ],
    );
    assert.ok(waits[1]!.ms >= 1990, `the last wait lasted ${waits[1]!.ms.toFixed(0)} ms of its 2000`);
  });

  test('continuous_wait 0 waits until stop; stop ends the task at once and releases the lock', async () => {
    const box = await rig.box();
    await rig.load(box, 1);
    const uuid = (
      await rig.sdk.scan.create({
        client_uuid: box.uuid,
        options: { continuous: true, continuous_wait: 0, callback_url: `${rx.url}/stop` },
      })
    ).uuid!;
    await eventually(async () => (await info(box.uuid, uuid)).item_size === 1, 'first item');
    assert.equal((await info(box.uuid, uuid)).finished, false, 'still waiting for paper');
    const current = await rig.sdk.scan.current({ client_uuid: box.uuid });
    assert.deepEqual(current, { exist: true, scan_uuid: uuid });
    await rig.sdk.scan.stop({ client_uuid: box.uuid }); // resolves only when the service answered code 0
    const i = await info(box.uuid, uuid);
    assert.equal(i.finished, true, 'finished when stop answers');
    assert.equal(i.error_code, 0);
    const finish = await eventually(
      () => rx.received.find((r) => r.path.endsWith('/stop') && JSON.parse(r.body).event === 'scan.finish'),
      'scan.finish after stop',
    );
    assert.equal(JSON.parse(finish.body).uuid, uuid);
    await rig.load(box, 1);
    const again = await rig.sdk.scan.create({ client_uuid: box.uuid }); // a new scan is allowed after the stop
    await finished(box.uuid, again.uuid!);
  });

  test('a jam ends the scan with its error code; the pages before it are kept', async () => {
    const box = await rig.box();
    await rig.load(box, 5);
    box.scanner.jamAfter(2);
    const uuid = (await rig.sdk.scan.create({ client_uuid: box.uuid, options: { duplex: false, item_seconds: 0 } }))
      .uuid!;
    const done = await finished(box.uuid, uuid);
    assert.equal(done.error_code, 2001);
    assert.equal(done.total_pages, 2);
    assert.equal(done.item_size, 1);
  });
});

describe('a long stack reaches the application as it scans (docs/scanning.md, "Items as the stack scans", "Progress")', () => {
  test('each page is reported as it is scanned; items are cut by item_pages and called back while the scanner goes on', async () => {
    // Half a second a side: 6 sheets, 12 sides, about 6 s of scanning.
    const box = await rig.box({ scanner: 'sim:?ppm=120' });
    await rig.load(
      box,
      [1, 2, 3, 4, 5, 6].map((n) => ({
        front: 'text' as const,
        back: n % 2 === 1 ? ('text' as const) : ('blank' as const),
      })),
    );
    const uuid = (
      await rig.sdk.scan.create({
        client_uuid: box.uuid,
        options: { callback_url: `${rx.url}/long`, item_pages: 4, item_seconds: 0 },
      })
    ).uuid!;
    const seen: Array<{ scanned: number; recorded: number; finished: boolean }> = [];
    const done = await rig.sdk.scan.waitForFinish(
      { client_uuid: box.uuid, scan_uuid: uuid },
      {
        intervalMs: 50,
        timeoutMs: 60_000,
        onProgress: (i) => {
          seen.push({ scanned: i.scanned_pages ?? -1, recorded: i.total_pages, finished: i.finished });
        },
      },
    );
    assert.equal(done.error_code, 0);
    // Two sheets of 3 kept sides (the next whole sheet would make 5 of the 4 allowed) per item.
    assert.deepEqual([done.item_size, done.total_pages, done.scanned_pages, done.skipped_pages], [3, 9, 9, 3]);
    assert.equal(typeof done.last_page_at, 'number');
    const items = await rig.sdk.scan.itemData({ client_uuid: box.uuid, scan_uuid: uuid });
    assert.deepEqual(
      items.items.map((i) => [i.item_id, i.pages]),
      [
        [1, 3],
        [2, 3],
        [3, 3],
      ],
    );
    // Page by page: the count never goes back, it runs ahead of the recorded items (the open
    // item's pages), and items were recorded while the scan went on.
    for (let i = 1; i < seen.length; i++)
      assert.ok(seen[i]!.scanned >= seen[i - 1]!.scanned, `scanned_pages went back: ${JSON.stringify(seen)}`);
    assert.ok(
      seen.some((x) => !x.finished && x.scanned > x.recorded),
      'pages counted before their item is recorded',
    );
    assert.ok(
      seen.some((x) => !x.finished && x.recorded > 0),
      'an item recorded before the scan ended',
    );
    assert.ok(
      new Set(seen.filter((x) => !x.finished).map((x) => x.scanned)).size >= 5,
      `counts seen page by page: ${JSON.stringify(seen.map((x) => x.scanned))}`,
    );
    // The first scan.item_data callback was sent before the box scanned its last side.
    const first = await eventually(
      () => rx.received.find((r) => r.path.endsWith('/long') && JSON.parse(r.body).event === 'scan.item_data'),
      'the first item callback',
    );
    assert.ok(
      JSON.parse(first.body).occurred_at < done.last_page_at!,
      'item 1 called back while the stack was scanning',
    );
  });

  test("a progress report counts only from the task's own box, never goes back, and stops with the task", async () => {
    const box = await rig.box();
    const other = await rig.box();
    await rig.load(box, 1);
    const uuid = (
      await rig.sdk.scan.create({
        client_uuid: box.uuid,
        options: { continuous: true, continuous_wait: 0, duplex: false },
      })
    ).uuid!;
    const now = async () => {
      const i = await info(box.uuid, uuid);
      return [i.scanned_pages, i.skipped_pages, i.last_page_at];
    };
    await eventually(async () => {
      const i = await info(box.uuid, uuid);
      return i.item_size === 1 && i.last_page_at !== undefined;
    }, "first item and its page's report");
    const [pages, skipped, at] = await now();
    assert.deepEqual([pages, skipped], [1, 0]);
    // Another box naming this task: answered, and nothing changes.
    await other.agent.requests.ask('scan.progress', { task: uuid, pages: 50, skipped: 5, at: at! + 1000 });
    assert.deepEqual(await now(), [pages, skipped, at]);
    // An older report (overtaken on the way) or fewer pages: nothing changes; a newer one counts.
    await box.agent.requests.ask('scan.progress', { task: uuid, pages: 7, skipped: 1, at: at! - 1 });
    await box.agent.requests.ask('scan.progress', { task: uuid, pages: 0, skipped: 0, at: at! + 1 });
    assert.deepEqual(await now(), [pages, skipped, at]);
    await box.agent.requests.ask('scan.progress', { task: uuid, pages: 3, skipped: 1, at: at! + 2 });
    assert.deepEqual(await now(), [3, 1, at! + 2]);
    // Once the task has ended its counts stay what they were.
    await rig.sdk.scan.stop({ client_uuid: box.uuid });
    await box.agent.requests.ask('scan.progress', { task: uuid, pages: 9, skipped: 1, at: at! + 3 });
    assert.deepEqual(await now(), [3, 1, at! + 2]);
    // A malformed one is refused by the server, not applied.
    await assert.rejects(
      box.agent.requests.ask('scan.progress', { task: uuid, pages: -1, skipped: 0, at: 0 }),
      /params/,
    );
  });
});
