// The help of every `boxhub` command (docs/cli.md), walked over the command tree itself: a
// command added to it is covered here without a new test, and fails here if its help is not
// like the others'. Its usage errors: usage.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assertPlain, boxhub, pool } from './testing/boxhub.ts';
import { env, leaves, paths } from './testing/command-tree.ts';

test('the command tree has every command the docs list', () => {
  const names = paths.map((p) => p.path.join(' '));
  for (const want of [
    'serve',
    'agent',
    'app create',
    'app key list',
    'app key create',
    'app key rotate',
    'app key revoke',
    'device register',
    'device rotate-secret',
    'device revoke',
    'bind',
    'unbind',
    'devices',
    'scan',
    'print',
    'card run',
    'card template',
    'card recognize',
  ]) {
    assert.ok(names.includes(want), `${want} is a command`);
  }
});

test('docs/cli.md has a section for every command, with each of its options', async () => {
  const doc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
  for (const { name, spec } of leaves) {
    const section = doc.split(`\n### boxhub ${name}\n`)[1]?.split('\n### ')[0];
    assert.ok(section, `docs/cli.md: no section "### boxhub ${name}"`);
    assert.ok(
      section.includes(`boxhub ${name} ${spec.usage}`),
      `docs/cli.md: the usage of boxhub ${name} is "boxhub ${name} ${spec.usage}"`,
    );
    for (const [flag, f] of Object.entries(spec.flags)) {
      if (!f.deprecatedFor)
        assert.match(section, new RegExp(`\`--${flag}\\b`), `docs/cli.md: boxhub ${name} --${flag}`);
    }
  }
});

test('--help on every command and group: usage, each option, an example, the exit codes; same as `boxhub help …`', async () => {
  const all = [
    { words: [] as string[], kind: 'group' as const },
    ...paths.map((p) => ({ words: p.path, kind: p.kind })),
  ];
  await pool(all, 3, async ({ words, kind }) => {
    const name = words.join(' ');
    const r = await boxhub([...words, '--help'], env);
    assert.equal(r.code, 0, `boxhub ${name} --help: ${r.stderr}`);
    assert.equal(r.stderr, '', `boxhub ${name} --help writes only to stdout`);
    assertPlain(r, `boxhub ${name} --help`);
    assert.ok(
      r.stdout.startsWith(`usage: boxhub ${name ? `${name} ` : ''}`),
      `boxhub ${name} --help starts with its usage:\n${r.stdout}`,
    );
    const examples = r.stdout.split('\nexamples:\n')[1] ?? '';
    assert.ok(examples.includes(`boxhub ${name}`), `boxhub ${name} --help has an example of it`);
    assert.match(
      r.stdout,
      /exit codes: 0 done, 1 failed .* 2 usage, 3 service\nunreachable or credentials refused, 130 interrupted/,
      `boxhub ${name} --help lists the exit codes`,
    );
    if (kind === 'leaf') {
      const leaf = leaves.find((l) => l.name === name)!;
      for (const [flag, f] of Object.entries(leaf.spec.flags)) {
        assert.ok(f.help || f.deprecatedFor, `boxhub ${name} --${flag} has a help line`);
        assert.match(r.stdout, new RegExp(`\\n {2}--${flag}\\b`), `boxhub ${name} --help lists --${flag}`);
      }
    } else {
      assert.match(r.stdout, /\ncommands:\n/);
    }
    const viaHelp = await boxhub(['help', ...words], env);
    assert.equal(viaHelp.code, 0);
    assert.equal(viaHelp.stdout, r.stdout, `boxhub help ${name} is boxhub ${name} --help`);
  });
});
