// The administration CLI works on the same database as the server given the same environment
// (every app and device command in admin-commands.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiClient } from '@boxhub/server/testing/harness.ts';
import { loadConfig, startServer } from '@boxhub/server';
import { pino } from 'pino';
import { BOXHUB_BIN } from './testing/boxhub.ts';

const bin = BOXHUB_BIN;
const run = (args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, [bin, ...args], { env: { ...process.env, ...env } });

test('app create and device register print JSON the server then accepts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-cli-'));
  // Embedded engines only: the CLI test is about sharing the server's configuration; the
  // external engines are covered by the server suite.
  const env = { BOXHUB_DATA_DIR: dir, DATABASE_URL: '', MQTT_URL: '', LOG_LEVEL: 'silent' };
  try {
    const app = JSON.parse(
      (await run(['app', 'create', '--name', 'Springfield', '--ess', '--json'], env)).stdout,
    ) as Record<string, string>;
    assert.deepEqual(Object.keys(app).sort(), ['api_key', 'callback_secret', 'id', 'key_id']);
    assert.match(app.api_key!, /^bhk_[A-Za-z0-9_-]{43}$/);
    assert.match(app.callback_secret!, /^whsec_/);
    const dev = JSON.parse(
      (await run(['device', 'register', '--code', 'BX0042', '--model', 'BX-1', '--json'], env)).stdout,
    ) as Record<string, string>;
    assert.deepEqual(Object.keys(dev).sort(), ['code', 'secret', 'uuid']);
    assert.equal(dev.code, 'BX0042');

    const server = await startServer(loadConfig({ ...env, PORT: '0', BOXHUB_MQTT_PORT: '0' }), {
      logger: pino({ level: 'silent' }),
    });
    try {
      const api = new ApiClient(server.url, app.api_key);
      assert.deepEqual((await api.get('/api/client/get_uuid', { code: 'BX0042' })).data, { uuid: dev.uuid });
      assert.ok(await server.repos.devices.findByUuid(dev.uuid!));
    } finally {
      await server.close();
    }

    // The service's refusal: exit 1 with its error code, no stack. A wrong command line: exit 2.
    const bad = await run(['device', 'register', '--code', 'BX0042', '--model', 'BX-1'], env).catch(
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal((bad as { code: number }).code, 1);
    assert.match((bad as { stderr: string }).stderr, /^boxhub device register: error 10001: .*already registered/m);
    assert.doesNotMatch((bad as { stderr: string }).stderr, /\n\s+at /);
    const unknown = await run(['app', 'create', '--nmae', 'x'], env).catch((e: { code: number; stderr: string }) => e);
    assert.equal((unknown as { code: number }).code, 2);
    assert.equal(
      (unknown as { stderr: string }).stderr,
      "boxhub app create: unknown option '--nmae' (did you mean --name?); see 'boxhub app create --help'\n",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
