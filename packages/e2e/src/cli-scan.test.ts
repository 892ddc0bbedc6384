// `boxhub scan` as a person or a script runs it (issue 7, item 9): the real command as a child
// process against a real server and simulated box; the PDFs it saves are checked here again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { runBoxhub, startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => { rig = await startRig(); });
after(() => rig.close());

const boxhub = (args: string[], env: Record<string, string> = {}) => runBoxhub(rig, args, env);

test('scans the feeder, shows each item as plain lines when piped, and saves PDFs whose MD5 it checked', async () => {
  const box = await rig.box();
  await rig.load(box, [{ front: 'text', back: 'text' }, { front: 'text', back: 'blank' }, { front: 'text', back: 'text' }]);
  const out = join(mkdtempSync(join(tmpdir(), 'boxhub-cli-scan-')), 'scans');
  const r = await boxhub(['scan', '--device', box.code, '--duplex', '--resolution', '150', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /scan [0-9a-f-]{36} started on /);
  assert.match(r.stderr, /item 1: 5 pages, \d+ KB, MD5 checked/);
  assert.match(r.stdout, /^done: 5 pages in 1 PDF in /m);
  // What it saved is what the server recorded: the MD5 of item_data's check_sum, five pages.
  const files = readdirSync(out);
  assert.equal(files.length, 1);
  const bytes = readFileSync(join(out, files[0]!));
  assert.equal((await PDFDocument.load(bytes)).getPageCount(), 5);
  const scanUuid = /scan ([0-9a-f-]{36}) started/.exec(r.stderr)![1]!;
  const items = await rig.api.post<{ items: { check_sum: string }[] }>('/api/scan/item_data', { client_uuid: box.uuid, scan_uuid: scanUuid });
  assert.equal(createHash('md5').update(bytes).digest('hex'), items.data.items[0]!.check_sum);

  // --json: one JSON document on stdout, nothing on stderr; blank pages kept on request.
  await rig.load(box, [{ front: 'text', back: 'blank' }]);
  const json = await boxhub(['scan', '--device', box.uuid, '--keep-blank', '--out', join(out, '..', 'json'), '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.stderr, '', '--json keeps stderr quiet too');
  const doc = JSON.parse(json.stdout) as { error_code: number; total_pages: number; items: { pages: number; md5: string }[] };
  assert.equal(doc.error_code, 0);
  assert.equal(doc.total_pages, 2);
  assert.deepEqual(doc.items.map((i) => i.pages), [2]);
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
  const jam = await boxhub(['scan', '--device', box.uuid, '--simplex', '--out', mkdtempSync(join(tmpdir(), 'boxhub-cli-jam-'))]);
  assert.equal(jam.code, 1, jam.stderr);
  assert.match(jam.stdout, /^ended with scan error 2001 \(docs\/errors\.md\): 2 pages in 1 PDF in /m);
  const down = await boxhub(['scan', '--device', box.uuid], { BOXHUB_URL: 'http://127.0.0.1:9' });
  assert.equal(down.code, 3);
  const help = await boxhub(['scan', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /usage: boxhub scan --device DEVICE/);
});
