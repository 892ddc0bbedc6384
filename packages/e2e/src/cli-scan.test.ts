// `boxhub scan` as a person or a script runs it (docs/cli.md): the real command as a child
// process against a real server and simulated box; the PDFs it saves are checked here again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { tempDirUntilExit } from '@boxhub/agent/store/temp-state-dir.ts';
import { runBoxhub, startBoxhub, startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => {
  rig = await startRig();
});
after(() => rig.close());

const boxhub = (args: string[], env: Record<string, string> = {}) => runBoxhub(rig, args, env);

test('scans the feeder, shows each item as plain lines when piped, and saves PDFs whose MD5 it checked', async () => {
  const box = await rig.box();
  await rig.load(box, [
    { front: 'text', back: 'text' },
    { front: 'text', back: 'blank' },
    { front: 'text', back: 'text' },
  ]);
  const out = join(tempDirUntilExit('boxhub-cli-scan-'), 'scans');
  // --item-seconds 0: one item however slow the machine (items as the stack scans: the test below).
  const r = await boxhub([
    'scan',
    '--device',
    box.code,
    '--duplex',
    '--resolution',
    '150',
    '--item-seconds',
    '0',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /scan [0-9a-f-]{36} started on /);
  assert.match(r.stderr, /item 1: 5 pages, \d+ KB, MD5 checked/);
  assert.match(r.stderr, /^scanning: \d+ pages? scanned(?: \(\d+ blank skipped\))?, \d+ in \d+ items?/m);
  assert.match(r.stdout, /^done: 5 pages in 1 PDF in /m);
  // What it saved is what the server recorded: the MD5 of item_data's check_sum, five pages.
  const files = readdirSync(out);
  assert.equal(files.length, 1);
  const bytes = readFileSync(join(out, files[0]!));
  assert.equal((await PDFDocument.load(bytes)).getPageCount(), 5);
  const scanUuid = /scan ([0-9a-f-]{36}) started/.exec(r.stderr)![1]!;
  const items = await rig.api.post<{ items: { check_sum: string }[] }>('/api/scan/item_data', {
    client_uuid: box.uuid,
    scan_uuid: scanUuid,
  });
  assert.equal(createHash('md5').update(bytes).digest('hex'), items.data.items[0]!.check_sum);

  // --json: one JSON document on stdout, nothing on stderr; blank pages kept on request.
  await rig.load(box, [{ front: 'text', back: 'blank' }]);
  const json = await boxhub(['scan', '--device', box.uuid, '--keep-blank', '--out', join(out, '..', 'json'), '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.stderr, '', '--json keeps stderr quiet too');
  const doc = JSON.parse(json.stdout) as {
    error_code: number;
    total_pages: number;
    items: { pages: number; md5: string }[];
  };
  assert.equal(doc.error_code, 0);
  assert.equal(doc.total_pages, 2);
  assert.deepEqual(
    doc.items.map((i) => i.pages),
    [2],
  );
});

test('exit codes say what went wrong', async () => {
  const box = await rig.box();
  assert.equal((await boxhub(['scan'])).code, 2, 'no device: usage');
  assert.equal((await boxhub(['scan', '--device', box.uuid, '--resolution', 'lots'])).code, 2, 'a bad number: usage');
  // An empty feeder: the service refuses before it starts (1: failed, with its error code).
  const empty = await boxhub(['scan', '--device', box.uuid]);
  assert.equal(empty.code, 1, empty.stderr);
  assert.match(empty.stderr, /^boxhub scan: error 30203: /m);
  // A jam half-way: the scan ends with its scan error (1: the task failed), the pages before it saved.
  await rig.load(box, 3);
  box.scanner.jamAfter(2);
  const jam = await boxhub(['scan', '--device', box.uuid, '--simplex', '--out', tempDirUntilExit('boxhub-cli-jam-')]);
  assert.equal(jam.code, 1, jam.stderr);
  assert.match(jam.stdout, /^ended with scan error 2001 \(docs\/errors\.md\): 2 pages in 1 PDF in /m);
  const down = await boxhub(['scan', '--device', box.uuid], { BOXHUB_URL: 'http://127.0.0.1:9' });
  assert.equal(down.code, 3);
  const help = await boxhub(['scan', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /usage: boxhub scan --device DEVICE/);
});

test('Ctrl-C in the middle of a stack stops the scan and keeps every item recorded, each downloaded and checked', async () => {
  // A third of a second a side, items of 2 pages: items are recorded while the stack scans.
  const box = await rig.box({ scanner: 'sim:?ppm=180' });
  await rig.load(box, 30);
  const out = join(tempDirUntilExit('boxhub-cli-sigint-'), 'scans');
  const run = startBoxhub(
    rig,
    ['scan', '--device', box.code, '--simplex', '--item-pages', '2', '--item-seconds', '0', '--out', out],
    /^item 2: 2 pages/m,
  );
  await run.ready();
  run.child.kill('SIGINT');
  const code = await run.exited;
  const { stdout, stderr } = run.output();
  assert.equal(code, 130, stderr);
  assert.match(stderr, /^stopping the scan… \(Ctrl-C again exits at once\)$/m);
  const scanUuid = /scan ([0-9a-f-]{36}) started/.exec(stderr)![1]!;
  // Page by page: the count of pages scanned was shown as it grew, ahead of the items.
  const counts = new Set([...stderr.matchAll(/^scanning: (\d+) pages? scanned/gm)].map((x) => Number(x[1])));
  assert.ok(counts.size >= 3, `counts shown: ${[...counts].join(', ')}`);
  // The task was stopped (error 0: the box answered), well before the 30 sheets were through.
  const info = await rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: scanUuid });
  assert.deepEqual([info.finished, info.error_code], [true, 0]);
  assert.ok(info.total_pages >= 4 && info.total_pages < 30, `${info.total_pages} pages recorded`);
  // Every item the service recorded is on disk, its bytes those of check_sum; nothing else is.
  const items = (await rig.sdk.scan.itemData({ client_uuid: box.uuid, scan_uuid: scanUuid })).items;
  assert.equal(items.length, info.item_size);
  assert.deepEqual(readdirSync(out).sort(), items.map((i) => `item-${i.item_id}.pdf`).sort());
  for (const it of items) {
    const bytes = readFileSync(join(out, `item-${it.item_id}.pdf`));
    assert.equal(createHash('md5').update(bytes).digest('hex'), it.check_sum, `item ${it.item_id}`);
    assert.equal((await PDFDocument.load(bytes)).getPageCount(), it.pages);
  }
  const m = /^stopped: (\d+) pages in (\d+) PDFs in /m.exec(stdout);
  assert.ok(m, stdout);
  assert.deepEqual([Number(m[1]), Number(m[2])], [info.total_pages, items.length]);
});
