// `boxhub card template|recognize` end to end, as a user runs it (the CLI is the recognizer's
// front door until the service endpoints exist).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../../', import.meta.url).pathname;
const bin = join(root, 'packages/cli/bin/boxhub.mjs');
const boxhub = (...args: string[]) =>
  spawnSync(process.execPath, [bin, 'card', ...args], { cwd: root, encoding: 'utf8' });

test('card template writes card.pdf and layout.json; usage errors exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-card-'));
  try {
    const students = join(dir, 'students.json');
    writeFileSync(students, JSON.stringify(['20240001', { student_id: '20240002', name: 'Ada' }]));
    const r = boxhub(
      'template',
      '--definition',
      join(root, 'docs/examples/card.json'),
      '--out',
      join(dir, 'out'),
      '--students',
      students,
    );
    assert.equal(r.status, 0, r.stderr);
    assert.ok(readFileSync(join(dir, 'out/card.pdf')).subarray(0, 5).toString() === '%PDF-');
    assert.equal(JSON.parse(readFileSync(join(dir, 'out/layout.json'), 'utf8')).format, 'boxhub-card-layout');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ id: 'x', chapters: [] }));
    const e = boxhub('template', '--definition', bad, '--out', join(dir, 'bad'));
    assert.equal(e.status, 2);
    assert.match(e.stderr, /qrcode: /);
    assert.ok(!existsSync(join(dir, 'bad')));
    assert.equal(boxhub('template', '--out', dir).status, 2);
    assert.equal(boxhub('recognize', '--layouts', dir).status, 2);
    // A scan file that is not there is a usage error naming it, not an unreadable student.
    const missing = boxhub('recognize', '--layouts', join(dir, 'out'), '--json', join(dir, 'scan.pdf'));
    assert.equal(missing.status, 2, missing.stderr);
    assert.equal(missing.stdout, '');
    assert.equal(
      missing.stderr,
      `boxhub card recognize: cannot read ${join(dir, 'scan.pdf')}: no such file; see 'boxhub card recognize --help'\n`,
    );
    const folder = boxhub('recognize', '--layouts', join(dir, 'out'), dir);
    assert.equal(folder.status, 2);
    assert.match(folder.stderr, /is a directory: give the scanned files in it/);
    assert.equal(boxhub('frobnicate').status, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('card recognize prints the per-student results of a scanned stack', () => {
  const dir = join(root, 'packages/recognizer/test/corpus/clean-duplex-bubbles');
  const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));
  const images = expected.pages.map((p: { file: string }) => join(dir, p.file));
  const r = boxhub('recognize', '--layouts', join(dir, 'layout'), '--duplex', '--json', ...images);
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  // The corpus numbers item_id per 4 pages; the CLI has one item.
  const want = expected.results.map((x: { pages: Array<{ item_id: number }> }) => ({
    ...x,
    pages: x.pages.map((p) => ({ ...p, item_id: 1 })),
  }));
  assert.deepEqual(got, want);
});
