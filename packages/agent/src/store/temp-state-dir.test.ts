// temp-state-dir.ts: a box's own temporary disk is there while its process runs and gone once
// the process has exited (a test suite's boxes left one each in /tmp before).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempStateDir } from './temp-state-dir.ts';

test('a temporary state directory is a boxhub-box-* directory under the system temp dir', () => {
  const dir = tempStateDir();
  try {
    assert.ok(statSync(dir).isDirectory());
    assert.equal(dirname(dir), tmpdir());
    assert.match(basename(dir), /^boxhub-box-/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the directories a process made, files and all, are removed when it exits', () => {
  const module = fileURLToPath(new URL('./temp-state-dir.ts', import.meta.url));
  const script = `
    import { writeFileSync, existsSync } from 'node:fs';
    import { join } from 'node:path';
    const { tempStateDir } = await import(${JSON.stringify(module)});
    const dirs = [tempStateDir(), tempStateDir()];
    writeFileSync(join(dirs[0], 'outbox'), 'x');
    console.log(JSON.stringify({ dirs, there: dirs.every((d) => existsSync(d)) }));
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
    encoding: 'utf8',
  });
  const { dirs, there } = JSON.parse(out) as { dirs: string[]; there: boolean };
  assert.equal(dirs.length, 2);
  assert.equal(there, true, 'they exist while the process runs');
  for (const d of dirs) assert.equal(existsSync(d), false, `${d} is gone after the exit`);
});
