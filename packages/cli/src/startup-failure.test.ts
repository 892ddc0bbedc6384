// `boxhub serve` and `boxhub agent` that cannot start: each says why in one line naming the
// setting that fixes it, exits 1 and does not hang (docs/configuration.md, "When the service
// cannot start"). Real child processes, real taken ports, a data directory under a file (which
// even root cannot create), a PostgreSQL address where nothing listens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBoxhub } from './testing/boxhub.ts';
import { startNats } from '@boxhub/server/testing/foreign-brokers.ts';

/** Runs the command to its end; a command still running after `ms` is killed and fails the test. */
async function runToEnd(args: string[], env: NodeJS.ProcessEnv, ms = 90_000) {
  const p = startBoxhub(args, env);
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    p.child.kill('SIGKILL');
  }, ms);
  const code = await p.exited;
  clearTimeout(timer);
  assert.equal(hung, false, `boxhub ${args.join(' ')} did not exit:\n${p.out.all}`);
  return { code, ...p.out };
}

async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server };
}

/** A loopback port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const { port, server } = await takenPort();
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function dirs() {
  const root = mkdtempSync(join(tmpdir(), 'boxhub-startup-'));
  const file = join(root, 'a-file');
  writeFileSync(file, '');
  return {
    root,
    data: join(root, 'data'),
    underFile: join(file, 'data'),
    done: () => rmSync(root, { recursive: true, force: true }),
  };
}

const base = (data: string): NodeJS.ProcessEnv => ({
  ...process.env,
  BOXHUB_DATA_DIR: data,
  PORT: '0',
  BOXHUB_MQTT_PORT: '0',
  MQTT_URL: '',
  DATABASE_URL: '',
  LOG_LEVEL: 'silent',
});

/** One line on stderr, no stack trace, naming the setting. */
function assertSays(r: { code: number | null; stderr: string; all: string }, re: RegExp, setting: string) {
  assert.equal(r.code, 1, r.all);
  assert.match(r.stderr, re);
  assert.ok(r.stderr.includes(setting), `names ${setting}`);
  assert.doesNotMatch(r.all, /\n\s+at |unexpected error|"level":50/, 'no stack trace, no error log');
}

test('serve: the HTTP port is taken → names PORT, exits 1', async () => {
  const d = dirs();
  const { port, server } = await takenPort();
  try {
    const r = await runToEnd(['serve', '--demo'], { ...base(d.data), PORT: String(port) });
    assertSays(
      r,
      new RegExp(
        `^boxhub serve: cannot start: the HTTP API cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*set PORT to a free port\\n$`,
      ),
      'PORT',
    );
  } finally {
    server.close();
    d.done();
  }
});

test('serve: the broker port is taken → names BOXHUB_MQTT_PORT (not PORT), exits 1', async () => {
  const d = dirs();
  const { port, server } = await takenPort();
  try {
    const r = await runToEnd(['serve', '--demo'], { ...base(d.data), BOXHUB_MQTT_PORT: String(port) });
    assertSays(
      r,
      new RegExp(
        `^boxhub serve: cannot start: the box link \\(the embedded MQTT broker\\) cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*set BOXHUB_MQTT_PORT to a free port\\n$`,
      ),
      'BOXHUB_MQTT_PORT',
    );
  } finally {
    server.close();
    d.done();
  }
});

test('serve: the data directory cannot be created → names BOXHUB_DATA_DIR, exits 1', async () => {
  const d = dirs();
  try {
    const r = await runToEnd(['serve'], base(d.underFile));
    assertSays(
      r,
      /^boxhub serve: cannot start: the data directory .*a-file\/data cannot be created or written \(ENOTDIR\): set BOXHUB_DATA_DIR to a directory this user can write\n$/,
      'BOXHUB_DATA_DIR',
    );
  } finally {
    d.done();
  }
});

test('serve: the database of DATABASE_URL cannot be reached → names DATABASE_URL and its host, not its password, exits 1', async () => {
  const d = dirs();
  const port = await closedPort();
  const key = join(d.root, 'key');
  writeFileSync(key, randomBytes(32).toString('base64'), { mode: 0o600 });
  try {
    const r = await runToEnd(['serve'], {
      ...base(d.data),
      DATABASE_URL: `postgres://boxhub:hunter2@127.0.0.1:${port}/boxhub`,
      BOXHUB_SECRET_KEY_FILE: key,
    });
    assertSays(
      r,
      new RegExp(
        `^boxhub serve: cannot start: cannot reach the database at 127\\.0\\.0\\.1:${port}/boxhub \\(ECONNREFUSED: is PostgreSQL running there\\?\\): check DATABASE_URL`,
        'm',
      ),
      'DATABASE_URL',
    );
    assert.doesNotMatch(r.all, /hunter2/);
  } finally {
    d.done();
  }
});

test('serve: MQTT_URL names a broker without MQTT 5 and shared subscriptions (NATS 2.9) → names MQTT_URL and each missing feature, exits 1', async () => {
  const d = dirs();
  const nats = await startNats();
  try {
    const r = await runToEnd(['serve'], { ...base(d.data), MQTT_URL: nats.url });
    assertSays(
      r,
      /^boxhub serve: cannot start: the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+ lacks what boxhub needs \(MQTT 5, shared subscriptions \(\$share\/…\), MQTT 5 sessions \(clean start off, session expiry\)\), so messages would be lost: .*or unset MQTT_URL for the embedded broker\n$/,
      'MQTT_URL',
    );
    assert.doesNotMatch(r.all, /boxhub:boxhub@/, 'no broker password');
  } finally {
    await nats.close();
    d.done();
  }
});

test('serve: BOXHUB_SECRET_KEY_FILE names a file that does not exist → says how to make one, exits 1', async () => {
  const d = dirs();
  try {
    const r = await runToEnd(['serve'], { ...base(d.data), BOXHUB_SECRET_KEY_FILE: join(d.root, 'missing.key') });
    assertSays(
      r,
      /^boxhub serve: cannot start: BOXHUB_SECRET_KEY_FILE .*missing\.key does not exist \(make one: /,
      'BOXHUB_SECRET_KEY_FILE',
    );
  } finally {
    d.done();
  }
});

test('agent: the state directory cannot be created → names --state-dir, exits 1', async () => {
  const d = dirs();
  try {
    const r = await runToEnd(
      ['agent', '--server', 'mqtt://127.0.0.1:1', '--device', 'd0', '--state-dir', d.underFile],
      { ...process.env, BOXHUB_AGENT_SECRET: 's' },
    );
    assertSays(
      r,
      /^boxhub agent: cannot start: the state directory .*a-file\/data cannot be created or written \(ENOTDIR\): set --state-dir \(or STATE_DIRECTORY\) to a directory this user can write\n$/,
      '--state-dir',
    );
  } finally {
    d.done();
  }
});
