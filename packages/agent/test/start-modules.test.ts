// What the agent loads at start (docs/box-protocol.md, "Memory on the box"): sharp, pdf-lib and
// undici come with the first task that uses them, not with the agent, so a box holds less
// before its first page. Checked in a child process that records every module it loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

// A load hook that writes the URL of every file module to stderr as it loads.
const HOOK = `import { writeSync } from 'node:fs';
export async function load(url, context, next) {
  const r = await next(url, context);
  if (url.startsWith('file:')) writeSync(2, 'LOADED ' + url + '\\n');
  return r;
}`;

/** The npm packages (node_modules/…) a fresh node process has loaded after `body`. */
async function packagesLoadedBy(body: string): Promise<Set<string>> {
  const script = `import { register } from 'node:module';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});
${body}
process.exit(0);`;
  // The test runner's NODE_OPTIONS (source mode) are inherited: the agent runs as in the tests.
  const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    maxBuffer: 64 << 20,
  });
  const names = new Set<string>();
  for (const line of stderr.split('\n')) {
    const m = /^LOADED .*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (m) names.add(m[1]!);
  }
  return names;
}

const LATER = ['sharp', 'pdf-lib', 'undici', 'pdfjs-dist', '@napi-rs/canvas'];

test('a started agent with the simulated printer and scanner has not loaded sharp, pdf-lib or undici', async () => {
  const loaded = await packagesLoadedBy(`
const { createSimulatedBox, createPrinterDriver, createScannerDriver } = await import('@boxhub/agent');
await createPrinterDriver('sim:');
await createScannerDriver('sim:');
const { mkdtempSync, rmSync } = await import('node:fs');
const stateDir = mkdtempSync((await import('node:os')).tmpdir() + '/boxhub-start-');
const box = createSimulatedBox({ url: 'mqtt://127.0.0.1:9', uuid: '00000000-0000-4000-8000-000000000001', secret: 'x', stateDir });
await box.agent.start();
await box.agent.stop();
rmSync(stateDir, { recursive: true, force: true });`);
  // What a box needs from its start is there: the hook saw the packages it loads.
  for (const name of ['mqtt', 'typebox'])
    assert.ok(loaded.has(name), `${name} loaded at start: ${[...loaded].join(', ')}`);
  for (const name of LATER) assert.ok(!loaded.has(name), `${name} is loaded at start`);
});

test('sharp is loaded by the first page that needs it', async () => {
  const loaded = await packagesLoadedBy(`
const { loadSharp } = await import('@boxhub/agent/media/page-image.ts');
const sharp = await loadSharp();
if (typeof sharp !== 'function') throw new Error('not sharp');`);
  assert.ok(loaded.has('sharp'), [...loaded].join(', '));
});
