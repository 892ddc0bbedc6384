// Every app and device command of the administration CLI (docs/cli.md): --json parses, piped
// output is plain, failures exit 1 with the service's code, and no database exits 3. Apart from
// cli.test.ts: the two took more than the runner's two minutes per file on a busy machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertPlain, boxhub } from './testing/boxhub.ts';

// Each admin command loads the server's code (seconds under the TypeScript loader); on a busy
// machine this test alone can take minutes (scripts/test.mjs bounds a file at five).
test('every app and device command: --json parses, piped output is plain, failures exit 1 with the code, no database exit 3', {
  timeout: 5 * 60_000,
}, async () => {
  const top = mkdtempSync(join(tmpdir(), 'boxhub-cli-admin-'));
  // Three independent runs, side by side (each command loads the server's code: seconds), each on
  // a database of its own (two processes must not migrate a new database at once).
  const envIn = (name: string) => ({
    BOXHUB_DATA_DIR: join(top, name),
    DATABASE_URL: '',
    MQTT_URL: '',
    LOG_LEVEL: 'silent',
  });
  const json = async <T>(env: Record<string, string>, args: string[]): Promise<T> => {
    const r = await boxhub([...args, '--json'], env);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assertPlain(r, args.join(' '));
    // --json and piped stderr: nothing but the JSON, anywhere.
    assert.equal(r.stderr, '', `${args.join(' ')} --json: stderr`);
    return JSON.parse(r.stdout) as T;
  };
  const apps = async () => {
    const env = envIn('apps');
    const app = await json<{ id: string; key_id: string }>(env, ['app', 'create', '--name', 'Shelbyville']);
    const made = await json<{ id: string; app_id: string; name: string; api_key: string }>(env, [
      'app',
      'key',
      'create',
      '--app',
      app.id,
      '--name',
      'grading',
    ]);
    assert.deepEqual([made.app_id, made.name], [app.id, 'grading']);
    const rotated = await json<{ id: string; name: string; api_key: string }>(env, [
      'app',
      'key',
      'rotate',
      '--key',
      made.id,
    ]);
    assert.equal(rotated.name, 'grading');
    assert.notEqual(rotated.id, made.id);
    assert.deepEqual(await json(env, ['app', 'key', 'revoke', '--key', rotated.id]), { revoked: rotated.id });
    const listed = await json<{ keys: Array<{ id: string; name: string; revoked_at?: number }> }>(env, [
      'app',
      'key',
      'list',
      '--app',
      app.id,
    ]);
    assert.deepEqual(listed.keys.map((k) => [k.name, k.revoked_at !== undefined]).sort(), [
      ['default', false],
      ['grading', true],
      ['grading', true],
    ]);
    const all = await json<{
      total: number;
      applications: Array<{ id: string; name: string; active_keys: number; devices: number }>;
    }>(env, ['app', 'list']);
    assert.deepEqual(
      all.applications.map((a) => [a.id, a.name, a.active_keys, a.devices]),
      [[app.id, 'Shelbyville', 1, 0]],
    );
    assert.equal(all.total, 1);
    const plain = await boxhub(['app', 'list'], env);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stdout,
      new RegExp(
        `^${app.id}  Shelbyville  created \\S+  1 key\\(s\\)  0 box\\(es\\)\\npage 1 of 1, 1 application\\(s\\)\\n$`,
      ),
    );
    assert.equal((await boxhub(['app', 'list', '--page', '0'], env)).code, 2, '--page 0 is a usage error');
  };
  const devices = async () => {
    const env = envIn('devices');
    const dev = await json<{ uuid: string; code: string; secret: string }>(env, [
      'device',
      'register',
      '--code',
      'BX0077',
      '--model',
      'BX-1',
    ]);
    const byCode = await json<{ uuid: string; secret: string }>(env, ['device', 'rotate-secret', '--device', 'BX0077']);
    assert.equal(byCode.uuid, dev.uuid);
    assert.notEqual(byCode.secret, dev.secret);
    // The spellings of the docs before --device still work, with a warning.
    const old = await boxhub(['device', 'rotate-secret', '--code', 'BX0077', '--json'], env);
    assert.equal(old.code, 0, old.stderr);
    assert.equal(old.stderr, 'boxhub device rotate-secret: --code is deprecated; use --device\n');
    assert.equal((JSON.parse(old.stdout) as { uuid: string }).uuid, dev.uuid);
    const both = await boxhub(['device', 'revoke', '--uuid', dev.uuid, '--device', 'BX0077'], env);
    assert.equal(both.code, 2);
    assert.deepEqual(await json(env, ['device', 'revoke', '--device', dev.uuid]), { revoked: dev.uuid });
    const all = await json<{
      total: number;
      devices: Array<{
        client: { uuid: string; code: string; online: boolean };
        model: string;
        app_id: string | null;
        secret_revoked: boolean;
      }>;
    }>(env, ['device', 'list']);
    assert.deepEqual(
      all.devices.map((d) => [d.client.uuid, d.client.code, d.client.online, d.model, d.app_id, d.secret_revoked]),
      [[dev.uuid, 'BX0077', false, 'BX-1', null, true]],
    );
    const plain = await boxhub(['device', 'list'], env);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(
      plain.stdout,
      `BX0077  ${dev.uuid}  BX-1  offline  not bound  SECRET REVOKED\npage 1 of 1, 1 box(es)\n`,
    );
  };
  const failures = async () => {
    const env = envIn('failures');
    // What the service refuses: exit 1, its error code on stderr, and with --json on stdout.
    const none = await boxhub(['app', 'key', 'list', '--app', '00000000-0000-0000-0000-000000000000', '--json'], env);
    assert.equal(none.code, 1, none.stderr);
    assert.equal(
      none.stderr,
      "boxhub app key list: error 20404: no application '00000000-0000-0000-0000-000000000000'\n",
    );
    assert.deepEqual(JSON.parse(none.stdout), {
      error: { exit_code: 1, code: 20404, msg: "error 20404: no application '00000000-0000-0000-0000-000000000000'" },
    });
    const noDevice = await boxhub(['device', 'revoke', '--device', 'NOPE'], env);
    assert.equal(noDevice.code, 1);
    assert.match(noDevice.stderr, /^boxhub device revoke: error 30002: no device with code 'NOPE'$/m);
    // A database that cannot be reached: exit 3, saying which (never its password).
    const down = await boxhub(['app', 'create', '--name', 'x'], {
      ...env,
      DATABASE_URL: 'postgres://boxhub:hunter2@127.0.0.1:9/boxhub',
    });
    assert.equal(down.code, 3, down.stderr);
    assert.match(down.stderr, /^boxhub app create: cannot open the database \(PostgreSQL 127\.0\.0\.1:9\/boxhub\): /m);
    assert.doesNotMatch(down.stderr + down.stdout, /hunter2/);
    // A bad setting in the environment is a usage error like a bad flag.
    const config = await boxhub(['device', 'register', '--code', 'BX1', '--model', 'BX-1'], { ...env, PORT: 'eighty' });
    assert.equal(config.code, 2);
    assert.match(config.stderr, /^boxhub device register: PORT must be a whole number/);
  };
  try {
    await Promise.all([apps(), devices(), failures()]);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});
