// The `boxhub` command's contract with people and scripts (docs/cli.md): the real command as a
// child process against a real server and simulated box. Exit codes (1 with the service's error
// code, 3 unreachable or refused credentials, 130 interrupted), --json on stdout only (card run:
// one JSON object per line), --timeout, and progress redrawn on a terminal but plain lines when
// piped.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { assertPlain, boxhubOnTerminal } from '@boxhub/cli/testing/boxhub.ts';
import { tempDirUntilExit } from '@boxhub/agent/store/temp-state-dir.ts';
import { cardStack, exampleCard } from './card-stack.ts';
import { runBoxhub, startBoxhub, startRig, type Rig } from './fixtures.ts';

let rig: Rig;
let pdf = '';
before(async () => {
  // card run's listener is on loopback: the service may call it there.
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  const d = await PDFDocument.create();
  for (let i = 0; i < 2; i++) d.addPage([595.28, 841.89]);
  pdf = join(tempDirUntilExit('boxhub-cli-contract-'), 'sheet.pdf');
  writeFileSync(pdf, await d.save());
});
after(() => rig.close());

const env = () => ({ BOXHUB_URL: rig.t.url, BOXHUB_API_KEY: rig.app.api_key });
const boxhub = async (args: string[], extra: Record<string, string> = {}) => {
  const r = await runBoxhub(rig, args, extra);
  assertPlain(r, `boxhub ${args.join(' ')}`);
  return r;
};

const started = (args: string[], ready: RegExp) => startBoxhub(rig, args, ready);

test('an API error: exit 1, the envelope\'s code and msg on stderr, and with --json an {"error"} document on stdout', async () => {
  const box = await rig.box({ printer: 'sim:?side_ms=1' });
  const r = await boxhub(['print', pdf, '--device', box.uuid, '--pages', '5', '--json']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^boxhub print: error 30307: options\.page_ranges /m);
  const doc = JSON.parse(r.stdout) as { error: { exit_code: number; code: number; msg: string } };
  assert.deepEqual([doc.error.exit_code, doc.error.code], [1, 30307]);
  assert.match(doc.error.msg, /^error 30307: /);
  // A code that names no box of the application: the service's own answer, exit 1 too.
  const unknown = await boxhub(['scan', '--device', 'NO-SUCH-BOX']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^boxhub scan: error 30002: /m);
});

test('credentials the service refuses and a service that is not there: exit 3', async () => {
  const box = await rig.box({ printer: 'sim:?side_ms=1' });
  const refused = await boxhub(['print', pdf, '--device', box.uuid], {
    BOXHUB_API_KEY: 'bhk_not_a_key_of_this_service_00000000000000000',
  });
  assert.equal(refused.code, 3, refused.stderr);
  assert.match(refused.stderr, /^boxhub print: the service refused the credentials: error 20001: /m);
  // It says where it found the key and the server (docs/cli.md, "Where the server and key come from").
  assert.match(
    refused.stderr,
    /\(the API key from BOXHUB_API_KEY; the service http:\/\/\S+ from (BOXHUB_URL|--server)\)$/m,
  );
  const keyFile = join(tempDirUntilExit('boxhub-key-'), 'key');
  writeFileSync(keyFile, `${rig.app.api_key}\n`);
  const viaFile = await boxhub(['print', pdf, '--device', box.uuid, '--key-file', keyFile, '--json'], {
    BOXHUB_API_KEY: '',
  });
  assert.equal(viaFile.code, 0, viaFile.stderr);
  const down = await boxhub(['card', 'run', '--device', box.uuid, '--template', 'x', '--server', 'http://127.0.0.1:9']);
  assert.equal(down.code, 3);
  assert.match(
    down.stderr,
    /^boxhub card run: cannot reach the service at http:\/\/127\.0\.0\.1:9 \(from --server\): /m,
  );
});

test('Ctrl-C: scan stops the scan on the box, saves what was scanned and exits 130; print stops following and exits 130', async () => {
  const box = await rig.box({ printer: 'sim:?side_ms=3000' });
  await rig.load(box, 2);
  const out = join(tempDirUntilExit('boxhub-cli-int-'), 'scans');
  // Continuous mode waits for more paper until stopped.
  const scan = started(
    ['scan', '--device', box.code, '--simplex', '--continuous', '0', '--out', out],
    /^item 1: 2 pages/m,
  );
  await scan.ready();
  scan.child.kill('SIGINT');
  assert.equal(await scan.exited, 130, scan.output().stderr);
  assert.match(scan.output().stderr, /^stopping the scan… \(Ctrl-C again exits at once\)$/m);
  assert.match(scan.output().stdout, /^stopped: 2 pages in 1 PDF in /m);
  assert.deepEqual(readdirSync(out), ['item-1.pdf']);

  const print = started(['print', pdf, '--device', box.uuid], /printing 2 sides/);
  await print.ready();
  print.child.kill('SIGINT');
  assert.equal(await print.exited, 130);
  assert.match(print.output().stdout, /^stopped following: print [0-9a-f-]{36} goes on \(printing 2 sides\)\n$/);
});

test('--timeout: print stops following after that long and exits 1 with timed_out in --json', async () => {
  const box = await rig.box({ printer: 'sim:?side_ms=5000' });
  const r = await boxhub(['print', pdf, '--device', box.uuid, '--timeout', '1', '--json']);
  assert.equal(r.code, 1, r.stderr);
  const doc = JSON.parse(r.stdout) as {
    timed_out: boolean;
    interrupted: boolean;
    finished: boolean;
    print_uuid: string;
  };
  assert.equal(doc.timed_out, true);
  assert.equal(doc.interrupted, false);
  assert.equal(doc.finished, false);
  assert.equal(r.stderr, '');
  const bad = await boxhub(['print', pdf, '--device', box.uuid, '--timeout', '0']);
  assert.equal(bad.code, 2);
});

test('card run --json: one JSON object per line (started, each student, end) on stdout, nothing else', async () => {
  const made = await rig.api.post<{ template_id: string }>('/api/application/card/template/create', {
    definition: exampleCard,
  });
  assert.equal(made.code, 0, made.msg);
  const stack = await cardStack(1, { seed: 5 });
  const box = await rig.box();
  await rig.load(box, [
    { front: { image: stack.pages[0]!.jpeg, dpi: 200 }, back: { image: stack.pages[1]!.jpeg, dpi: 200 } },
  ]);
  const secretFile = join(tempDirUntilExit('boxhub-secret-'), 'whsec');
  writeFileSync(secretFile, rig.app.callback_secret);
  const r = await boxhub([
    'card',
    'run',
    '--device',
    box.code,
    '--template',
    made.data.template_id,
    '--callback-secret-file',
    secretFile,
    '--json',
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stderr, '');
  const lines = r.stdout
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          event: string;
          body?: { result?: { student_id: string; fills: number[][] } };
          students?: number;
          failed?: number;
          scan_uuid?: string;
        },
    );
  assert.deepEqual(
    lines.map((l) => l.event),
    ['started', 'student', 'end'],
  );
  assert.match(lines[0]!.scan_uuid!, /^[0-9a-f-]{36}$/);
  assert.equal(lines[1]!.body!.result!.student_id, stack.expected[0]!.result!.student_id);
  assert.deepEqual(lines[1]!.body!.result!.fills, stack.expected[0]!.result!.fills);
  assert.deepEqual([lines[2]!.students, lines[2]!.failed], [1, 0]);
});

test('card template --json; scan on a terminal redraws its progress line, piped it prints plain lines', async () => {
  const out = tempDirUntilExit('boxhub-cli-tpl-');
  const tpl = await boxhub([
    'card',
    'template',
    '--definition',
    new URL('../../../docs/examples/card.json', import.meta.url).pathname,
    '--out',
    out,
    '--json',
  ]);
  assert.equal(tpl.code, 0, tpl.stderr);
  const t = JSON.parse(tpl.stdout) as { layout_id: string; sheets: number; pdf: string; layout: string };
  assert.equal(t.pdf, join(out, 'card.pdf'));
  assert.ok(t.sheets >= 1);

  const box = await rig.box();
  await rig.load(box, 3);
  const tty = await boxhubOnTerminal(
    ['scan', '--device', box.code, '--simplex', '--item-seconds', '0', '--out', join(out, 'tty')],
    env(),
  );
  assert.equal(tty.code, 0, tty.output);
  // The bar grows a cell a page (docs/cli.md, "boxhub scan").
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI erase-line sequence a terminal gets
  assert.match(tty.output, /\r\x1b\[2K▕[█▒ ]{30}▏ scanning: \d+ pages? scanned, \d+ in \d+ items?/);
  assert.match(tty.output, /done: 3 pages in 1 PDF in /);
  await rig.load(box, 1);
  const piped = await boxhub(['scan', '--device', box.code, '--simplex', '--out', join(out, 'piped')]);
  assert.equal(piped.code, 0, piped.stderr);
  assert.match(piped.stderr, /^scanning: 1 page scanned, 1 in 1 item, done$/m);
});
