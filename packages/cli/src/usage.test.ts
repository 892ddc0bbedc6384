// The command line contract of every `boxhub` command (docs/cli.md), walked over the command
// tree itself: a command added to it is covered here without a new test, and fails here if its
// usage errors are not like the others'. Its help: help.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env, leaves } from './testing/command-tree.ts';
import { assertPlain, boxhub, boxhubOnTerminal, pool } from './testing/boxhub.ts';

test('an unknown option is a one-line usage error (exit 2) naming it, on every command', async () => {
  await pool(leaves, 3, async ({ name, words }) => {
    const r = await boxhub([...words, '--no-such-option'], env);
    assert.equal(r.code, 2, `boxhub ${name} --no-such-option: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `boxhub ${name}: unknown option '--no-such-option'; see 'boxhub ${name} --help'\n`);
  });
  // A near miss is named.
  const typo = await boxhub(['scan', '--devcie', 'BX1'], env);
  assert.equal(typo.code, 2);
  assert.equal(
    typo.stderr,
    "boxhub scan: unknown option '--devcie' (did you mean --device?); see 'boxhub scan --help'\n",
  );
});

test('a missing required option or argument is a one-line usage error (exit 2), on every command that has one', async () => {
  const needy = leaves.filter(
    (l) => Object.values(l.spec.flags).some((f) => f.required) || (l.spec.args?.min ?? 0) > 0,
  );
  assert.ok(needy.length >= 10);
  await pool(needy, 3, async ({ name, words, spec }) => {
    const r = await boxhub(words, env);
    assert.equal(r.code, 2, `boxhub ${name}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    const first = Object.entries(spec.flags).find(([, f]) => f.required)?.[0];
    const what = first ? `--${first} is required` : `${spec.args!.name} is needed`;
    assert.equal(r.stderr, `boxhub ${name}: ${what}; see 'boxhub ${name} --help'\n`);
  });
  // A value the option needs, and a bad one.
  const noValue = await boxhub(['print', 'x.pdf', '--device'], env);
  assert.equal(noValue.code, 2);
  assert.equal(noValue.stderr, "boxhub print: --device needs a value; see 'boxhub print --help'\n");
  const bad = await boxhub(['scan', '--device', 'BX1', '--resolution', 'lots'], env);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    "boxhub scan: --resolution must be a whole number 100-1200, not 'lots'; see 'boxhub scan --help'\n",
  );
  const extra = await boxhub(['scan', '--device', 'BX1', 'stray'], env);
  assert.equal(extra.code, 2);
  assert.equal(extra.stderr, "boxhub scan: unexpected argument 'stray'; see 'boxhub scan --help'\n");
});

test('unknown commands, a group without its command, and boxhub alone are usage errors (exit 2)', async () => {
  const unknown = await boxhub(['scna'], env);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stderr, "boxhub: unknown command 'scna' (did you mean scan?); see 'boxhub --help'\n");
  const sub = await boxhub(['app', 'key', 'rotat'], env);
  assert.equal(sub.code, 2);
  assert.equal(
    sub.stderr,
    "boxhub app key: unknown command 'rotat' (did you mean rotate?); see 'boxhub app key --help'\n",
  );
  const group = await boxhub(['device'], env);
  assert.equal(group.code, 2);
  assert.equal(
    group.stderr,
    "boxhub device: a command is needed (register, import, list, rotate-secret, revoke); see 'boxhub device --help'\n",
  );
  const alone = await boxhub([], env);
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /^usage: boxhub <command>/);
  assert.equal(alone.stdout, '');
  const version = await boxhub(['--version'], env);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^boxhub \d+\.\d+\.\d+\n$/);
});

test('an unreachable service is exit 3 on every API command, with --json an {"error"} document on stdout', async () => {
  const api = [
    ['scan', '--device', 'BX1'],
    ['print', new URL('../package.json', import.meta.url).pathname, '--device', 'BX1'],
    ['card', 'run', '--device', 'BX1', '--template', 't'],
  ];
  await pool(api, 3, async (args) => {
    const r = await boxhub([...args, '--json'], { ...env, BOXHUB_API_KEY: 'bhk_x' });
    assert.equal(r.code, 3, `${args.join(' ')}: ${r.stderr}`);
    assertPlain(r, args.join(' '));
    assert.match(
      r.stderr,
      new RegExp(
        `^boxhub ${args[0] === 'card' ? 'card run' : args[0]}: cannot reach the service at http://127\\.0\\.0\\.1:9 \\(from (BOXHUB_URL|--server)\\): `,
      ),
    );
    const doc = JSON.parse(r.stdout) as { error: { exit_code: number; code: number | null; msg: string } };
    assert.equal(doc.error.exit_code, 3);
    assert.equal(doc.error.code, null);
  });
  // Without an API key anywhere: a usage error, before any call.
  const noKey = await boxhub(['scan', '--device', 'BX1'], env);
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /an API key is needed: set BOXHUB_API_KEY or give --key-file FILE/);
});

test('on a terminal, progress is redrawn in place; piped, the same command prints plain lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-tty-'));
  const adminEnv = { BOXHUB_DATA_DIR: dir, DATABASE_URL: '', MQTT_URL: '', LOG_LEVEL: 'silent' };
  try {
    const tty = await boxhubOnTerminal(['app', 'create', '--name', 'On a terminal'], adminEnv);
    assert.equal(tty.code, 0, tty.output);
    // The passing state ("database: …") is drawn and then erased.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI erase-line sequence a terminal gets
    assert.match(tty.output, /\r\x1b\[2Kdatabase: SQLite .*boxhub\.sqlite\r\x1b\[2K/);
    assert.match(tty.output, /application On a terminal \(/);
    const piped = await boxhub(['app', 'create', '--name', 'Piped'], adminEnv);
    assert.equal(piped.code, 0, piped.stderr);
    assertPlain(piped, 'app create');
    assert.match(piped.stderr, /^database: SQLite .*boxhub\.sqlite\n$/);
    assert.match(piped.stdout, /^application Piped \(/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
