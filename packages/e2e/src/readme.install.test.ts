// The README, run as a newcomer pastes it (with the install tests, in the last pass of
// scripts/test.mjs: it takes minutes and wants the machine to itself): every ```sh block of README.md in order (but those
// marked `<!-- readme-test: skip … -->`), in one bash, against the demo as `npm start` runs it,
// on a PATH without qpdf, poppler (pdftoppm, pdfinfo…) or Ghostscript: the demo prints, scans
// and reads cards with Node alone (docs/printing.md, "PDF engines"). So the README cannot drift
// from the product. The working directory is a fresh one with the checkout's package.json,
// node_modules, packages and docs linked in, and a data/ of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { startBoxhub } from '@boxhub/cli/testing/boxhub.ts';

const root = new URL('../../../', import.meta.url).pathname;
/** The system PDF tools the demo must do without. */
const HIDDEN = new Set([
  'qpdf',
  'pdftoppm',
  'pdfinfo',
  'pdftocairo',
  'pdftotext',
  'pdfimages',
  'gs',
  'mutool',
  'convert',
  'magick',
]);

/** The shell blocks a reader pastes, in order. */
export function readmeBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const re = /(<!-- readme-test: skip[^>]*-->\s*)?```sh\n([\s\S]*?)```/g;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) if (!m[1]) blocks.push(m[2]!);
  return blocks;
}

/** A directory of links to every command on PATH but the hidden ones. */
function pathWithout(hidden: Set<string>, dir: string): string {
  mkdirSync(dir);
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    if (!d || !existsSync(d)) continue;
    for (const name of readdirSync(d)) {
      if (hidden.has(name) || existsSync(join(dir, name))) continue;
      try {
        if (statSync(join(d, name)).isFile()) symlinkSync(join(d, name), join(dir, name));
      } catch {
        /* a dangling link */
      }
    }
  }
  return dir;
}

test('README: every shell block, pasted in order, works against the demo on a machine without qpdf or poppler', {
  timeout: 15 * 60_000,
}, async (t) => {
  const blocks = readmeBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  assert.ok(blocks.length >= 8, `README shell blocks found: ${blocks.length}`);
  const work = mkdtempSync(join(tmpdir(), 'boxhub-readme-'));
  for (const name of ['package.json', 'node_modules', 'packages', 'docs'])
    symlinkSync(join(root, name), join(work, name));
  const bin = pathWithout(HIDDEN, join(work, '.bin-without-pdf-tools'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: bin,
    PORT: '0',
    BOXHUB_MQTT_PORT: '0',
    LOG_LEVEL: 'silent',
    MQTT_URL: '',
    DATABASE_URL: '',
    BOXHUB_DATA_DIR: '',
    BOXHUB_URL: '',
    BOXHUB_API_KEY: '',
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  delete env.BOXHUB_DATA_DIR;
  delete env.BOXHUB_URL;
  delete env.BOXHUB_API_KEY;
  delete env.BOXHUB_PDF_ENGINE;
  // `npm start` in the checkout: the demo, its data in ./data.
  // (The demo is started from here, so its data directory is named: the work directory's ./data,
  // where the README's commands look.)
  const serve = startBoxhub(['serve', '--demo'], { ...env, BOXHUB_DATA_DIR: join(work, 'data') });
  const child = serve.child;
  try {
    await serve.waitFor(/boxhub is running at/);
    // The start says what does the PDF work, and which Debian packages would take it over.
    await serve.waitFor(
      /PDF engines: built-in pdf-lib for checks and page work, built-in pdf\.js for rendering \(every feature works; install the Debian packages qpdf and poppler-utils for the faster system tools\)/,
    );
    const script = ['set -euo pipefail', ...blocks.map((b, i) => `echo "### block ${i + 1}"\n${b}`)].join('\n');
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const sh = spawn(join(bin, 'bash'), ['-c', script], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      sh.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      sh.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      sh.once('close', (code) => resolve({ code, stdout, stderr }));
    });
    t.diagnostic(`${blocks.length} blocks; last lines: ${run.stdout.split('\n').slice(-3).join(' | ')}`);
    assert.equal(
      run.code,
      0,
      `the README's blocks failed:\n--- stdout\n${run.stdout.slice(-6000)}\n--- stderr\n${run.stderr.slice(-6000)}\n--- demo\n${serve.out.all.slice(-3000)}`,
    );
    // Every API answer was a success.
    const codes = [...run.stdout.matchAll(/"code":\s*(\d+)/g)].map((m) => Number(m[1]));
    assert.ok(codes.length >= 7, `API answers seen: ${codes.length}\n${run.stdout.slice(-4000)}`);
    assert.deepEqual(
      codes.filter((c) => c !== 0),
      [],
      run.stdout,
    );
    // Printed with the built-in engines: the check, the box's page work and the PNG per side.
    const printed = readdirSync(join(work, 'data/printed'));
    assert.ok(
      printed.some((f) => /-1\.png$/.test(f)),
      printed.join(' '),
    );
    // Scanned PDFs downloaded and checked by `boxhub scan`, the class's cards too.
    assert.ok(readdirSync(join(work, 'scans')).some((f) => f.endsWith('.pdf')));
    // The engine alone read the two students the class filled in (the last block's JSON).
    const last = run.stdout.slice(run.stdout.lastIndexOf(`### block ${blocks.length}`));
    const results = JSON.parse(last.slice(last.indexOf('\n['), last.lastIndexOf(']') + 1)) as Array<{
      error_code: number;
      result: { student_id: string } | null;
    }>;
    assert.equal(results.length, 2, last);
    assert.deepEqual(
      results.map((r) => r.error_code),
      [0, 0],
      last,
    );
  } finally {
    child.kill('SIGTERM');
    await serve.exited;
    rmSync(work, { recursive: true, force: true });
  }
});
