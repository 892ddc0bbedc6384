// `boxhub serve`: the real command as a child process (the demo, --json, SIGTERM). Apart from
// the administration commands' tests (cli.test.ts), so that each file has its own time budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, testSchemaName } from '@boxhub/server/testing/harness.ts';
import { BOXHUB_BIN } from './testing/boxhub.ts';

const bin = BOXHUB_BIN;

test('serve --demo starts with a data directory that does not exist yet, on either database engine', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'boxhub-serve-'));
  const dataDir = join(parent, 'not', 'yet');
  // The external pass runs it on PostgreSQL (the case that crashed writing demo.json), in a
  // schema of its own that scripts/test.mjs drops with the other t_* schemas.
  const pg = process.env.BOXHUB_TEST_ENGINE === 'external' && process.env.BOXHUB_TEST_DATABASE_URL;
  const env = {
    ...process.env, BOXHUB_DATA_DIR: dataDir, PORT: '0', BOXHUB_MQTT_PORT: '0', LOG_LEVEL: 'silent', MQTT_URL: '',
    DATABASE_URL: pg || '', BOXHUB_DATABASE_SCHEMA: pg ? testSchemaName() : '',
  };
  const child = spawn(process.execPath, [bin, 'serve', '--demo'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const started = await Promise.race([
      (async () => { while (!out.includes('boxhub is running at')) { if (child.exitCode !== null) return false; await new Promise((r) => setTimeout(r, 50)); } return true; })(),
      exited.then(() => false),
    ]);
    assert.ok(started, `serve --demo did not start:\n${out}`);
    assert.doesNotMatch(out, /ENOENT|Error:/);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as { api_key: string; device_code: string; base_url: string };
    assert.match(demo.api_key, /^bhk_/);
    const r = await new ApiClient(demo.base_url, demo.api_key).get<{ uuid: string }>('/api/client/get_uuid', { code: demo.device_code });
    assert.equal(r.code, 0, r.msg);
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    rmSync(parent, { recursive: true, force: true });
  }
});

test('serve --json: one JSON line on stdout once the service is ready, its logs on stderr; SIGTERM ends it with 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-serve-json-'));
  const env = { ...process.env, BOXHUB_DATA_DIR: dir, PORT: '0', BOXHUB_MQTT_PORT: '0', LOG_LEVEL: 'info', MQTT_URL: '', DATABASE_URL: '' };
  const child = spawn(process.execPath, [bin, 'serve', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const ready = await Promise.race([
      (async () => { while (!stdout.includes('\n')) { if (child.exitCode !== null) return false; await new Promise((r) => setTimeout(r, 50)); } return true; })(),
      exited.then(() => false),
    ]);
    assert.ok(ready, `serve --json did not start:\n${stderr}`);
    const doc = JSON.parse(stdout) as { url: string; mqtt_url: string; demo: unknown };
    assert.match(doc.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(doc.mqtt_url, /^mqtt:\/\//);
    assert.equal(doc.demo, null);
    const r = await new ApiClient(doc.url, 'bhk_nobody').get('/api/client/list', { page: 1 });
    assert.equal(r.code, 20001, 'the service answers');
    // Its logs (pino JSON lines) went to stderr.
    assert.match(stderr, /"level":30/);
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.equal(stdout.split('\n').filter(Boolean).length, 1, 'stdout holds the one ready line only');
    rmSync(dir, { recursive: true, force: true });
  }
});
