// `boxhub print` as a person or a script runs it (docs/cli.md, "boxhub print"):
// the real command as a child process against a real server and simulated box.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { generateKeyPair } from '@boxhub/protocol/e2e.ts';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { tempDirUntilExit } from '@boxhub/agent/store/temp-state-dir.ts';
import { runBoxhub, startBoxhub, startRig, type Rig } from './fixtures.ts';

let rig: Rig;
let file = '';
before(async () => {
  rig = await startRig();
  const d = await PDFDocument.create();
  for (let i = 0; i < 3; i++) d.addPage([595.28, 841.89]);
  file = join(tempDirUntilExit('boxhub-cli-'), 'worksheet.pdf');
  writeFileSync(file, await d.save());
});
after(() => rig.close());

const boxhub = (args: string[], env: Record<string, string> = {}) => runBoxhub(rig, args, env);

test('prints a file, shows its progress as plain lines when piped, and the printed page count', async () => {
  // The job holds after its first side until the command has shown it printing (it looks at
  // the task every 500 ms), however slow the machine.
  const box = await rig.box({ printer: 'sim:?side_ms=1' });
  box.printer.pauseAfter(1);
  const run = startBoxhub(rig, ['print', file, '--device', box.code, '--duplex', '--strict'], /printing 3 sides/);
  await run.ready();
  box.printer.resume();
  const code = await run.exited;
  const r = { code, ...run.output() };
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /print [0-9a-f-]{36} sent to/);
  assert.match(r.stderr, /printing 3 sides/);
  assert.match(r.stdout, /printed: 3 sides \(the printer counted 4\)/);
  const json = await boxhub(['print', file, '--device', box.uuid, '--copies', '2', '--json']);
  assert.equal(json.code, 0, json.stderr);
  const out = JSON.parse(json.stdout) as { error_code: number; pages: number; finished: boolean };
  assert.equal(out.error_code, 0);
  assert.equal(out.pages, 6);
  assert.equal(json.stderr, '', '--json keeps stderr quiet too');
});

test('exit codes say what went wrong', async () => {
  const box = await rig.box({ printer: 'sim:?side_ms=1' });
  assert.equal((await boxhub(['print', '--device', box.uuid])).code, 2, 'no file: usage');
  assert.equal((await boxhub(['print', file])).code, 2, 'no device: usage');
  const missing = await boxhub(['print', '/nonexistent.pdf', '--device', box.uuid]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read \/nonexistent\.pdf: no such file/);
  const refused = await boxhub(['print', file, '--device', box.uuid, '--pages', '7-9']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^boxhub print: error 30307: /m);
  const down = await boxhub(['print', file, '--device', box.uuid], { BOXHUB_URL: 'http://127.0.0.1:9' });
  assert.equal(down.code, 3);
  const help = await boxhub(['print', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /usage: boxhub print FILE/);
});

test("print --encrypt encrypts to the box's key before sending; scan --encrypt --decrypt-key saves the decrypted PDFs", async () => {
  const box = await rig.box({ printer: 'sim:?side_ms=1' });
  await eventually(
    async () =>
      (await rig.api.get<{ client: { e2e_public_key?: string } }>('/api/client/info', { uuid: box.uuid })).data.client
        .e2e_public_key,
    'box key',
  );
  const p = await boxhub(['print', file, '--device', box.code, '--encrypt']);
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stderr, /encrypted to the box's key [0-9a-f]{16}/);
  assert.match(p.stdout, /printed: 3 sides/);

  const keys = await generateKeyPair();
  assert.equal((await rig.api.post('/api/application/e2e_key/register', { public_key: keys.publicKey })).code, 0);
  const dir = tempDirUntilExit('boxhub-cli-scan-');
  writeFileSync(join(dir, 'key'), `${keys.privateKey}\n`);
  await rig.load(box, 2);
  const s = await boxhub([
    'scan',
    '--device',
    box.code,
    '--simplex',
    '--item-seconds',
    '0',
    '--encrypt',
    '--decrypt-key',
    join(dir, 'key'),
    '--out',
    join(dir, 'out'),
    '--json',
  ]);
  assert.equal(s.code, 0, s.stderr);
  const result = JSON.parse(s.stdout) as { items: { path: string }[] };
  assert.equal(result.items.length, 1);
  assert.equal((await PDFDocument.load(readFileSync(result.items[0]!.path))).getPageCount(), 2);
  assert.deepEqual(readdirSync(join(dir, 'out')), ['item-1.pdf'], 'only the decrypted PDF stays');
  const usage = await boxhub(['scan', '--device', box.code, '--decrypt-key', join(dir, 'key')]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--decrypt-key goes with --encrypt/);
});
