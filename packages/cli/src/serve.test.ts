// `boxhub serve`: the real command as a child process (the demo, --json, SIGTERM). Apart from
// the administration commands' tests (cli.test.ts), so that each file has its own time budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '@boxhub/server/testing/harness.ts';
import { demoServeEnv, startBoxhub } from './testing/boxhub.ts';

test('serve --demo starts with a data directory that does not exist yet, on either database engine', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'boxhub-serve-'));
  const dataDir = join(parent, 'not', 'yet');
  // The external pass runs it on PostgreSQL (the case that crashed writing demo.json).
  const env = demoServeEnv(dataDir);
  const serve = startBoxhub(['serve', '--demo'], env);
  try {
    const started = await serve.waitFor(/boxhub is running at/).then(
      () => true,
      () => false,
    );
    assert.ok(started, `serve --demo did not start:\n${serve.out.all}`);
    assert.doesNotMatch(serve.out.all, /ENOENT|Error:/);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
      api_key: string;
      device_code: string;
      base_url: string;
    };
    assert.match(demo.api_key, /^bhk_/);
    const r = await new ApiClient(demo.base_url, demo.api_key).get<{ uuid: string }>('/api/client/get_uuid', {
      code: demo.device_code,
    });
    assert.equal(r.code, 0, r.msg);
  } finally {
    serve.child.kill('SIGTERM');
    assert.equal(await serve.exited, 0, serve.out.all);
    rmSync(parent, { recursive: true, force: true });
  }
});

test('serve --json: one JSON line on stdout once the service is ready, its logs on stderr; SIGTERM ends it with 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-serve-json-'));
  const env = {
    ...process.env,
    BOXHUB_DATA_DIR: dir,
    PORT: '0',
    BOXHUB_MQTT_PORT: '0',
    LOG_LEVEL: 'info',
    MQTT_URL: '',
    DATABASE_URL: '',
  };
  const serve = startBoxhub(['serve', '--json'], env);
  const { out } = serve;
  try {
    const ready = await serve.waitFor(/\n/, 'stdout').then(
      () => true,
      () => false,
    );
    assert.ok(ready, `serve --json did not start:\n${out.stderr}`);
    const doc = JSON.parse(out.stdout) as { url: string; mqtt_url: string; demo: unknown };
    assert.match(doc.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(doc.mqtt_url, /^mqtt:\/\//);
    assert.equal(doc.demo, null);
    const r = await new ApiClient(doc.url, 'bhk_nobody').get('/api/client/list', { page: 1 });
    assert.equal(r.code, 20001, 'the service answers');
    // Its logs (pino JSON lines) went to stderr.
    assert.match(out.stderr, /"level":30/);
  } finally {
    serve.child.kill('SIGTERM');
    assert.equal(await serve.exited, 0, out.stderr);
    assert.equal(out.stdout.split('\n').filter(Boolean).length, 1, 'stdout holds the one ready line only');
    rmSync(dir, { recursive: true, force: true });
  }
});
