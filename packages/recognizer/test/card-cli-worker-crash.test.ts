// `boxhub card recognize` when a recognition worker dies: only the page it was reading fails
// (1004, saying so), the rest of the stack is read, the command ends normally. The crash is
// real: a module preloaded into the CLI process (--import) gets each worker through Node's
// process 'worker' event and posts it a null message ahead of page 2; the real
// page-worker throws on it outside its try, and the uncaught exception ends that thread.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StudentResult } from '../src/index.ts';

const root = new URL('../../../', import.meta.url).pathname;
const bin = join(root, 'packages/cli/bin/boxhub.mjs');
const dir = join(root, 'packages/recognizer/test/corpus/clean-duplex-bubbles');
const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as {
  pages: Array<{ file: string }>;
  results: StudentResult[];
};
const files = expected.pages.map((p) => join(dir, p.file));
const tmp = mkdtempSync(join(tmpdir(), 'boxhub-cli-crash-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const crash = join(tmp, 'crash-worker.mjs');
writeFileSync(
  crash,
  `
let pages = 0;
process.on('worker', (w) => {
  if (w.constructor.name !== 'Worker') return; // the module loader's own thread
  const post = w.postMessage.bind(w);
  w.postMessage = (m, t) => { if (++pages === 2) post(null); post(m, t); };
});
`,
);

function recognize(workers: number) {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      crash,
      bin,
      'card',
      'recognize',
      '--layouts',
      join(dir, 'layout'),
      '--duplex',
      '--workers',
      String(workers),
      '--json',
      ...files,
    ],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  assert.equal(r.status, 1, `a student failed: exit 1\n${r.stderr}`);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as StudentResult[];
}

/** Page 2 (the back of sheet 1) failed; sheet 2 was read in full. */
function assertOnlyPage2Failed(got: StudentResult[]) {
  assert.equal(got.length, 2);
  assert.equal(got[0]!.error_code, 1004);
  assert.deepEqual(got[0]!.pages, expected.results[0]!.pages);
  assert.equal(got[0]!.result, null);
  const detail = `page 2: ${files[1]}#1: recognition worker stopped: Cannot read properties of null`;
  assert.equal(got[0]!.detail?.slice(0, detail.length), detail);
  assert.deepEqual(got[1], expected.results[1]);
}

test('a worker that dies on page 2 while page 1 is awaited fails page 2 only (1004), not the process', () => {
  assertOnlyPage2Failed(recognize(2));
});

test('with a single worker, a new one reads the pages after the one its predecessor died on', () => {
  assertOnlyPage2Failed(recognize(1));
});
