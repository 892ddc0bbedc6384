// Private MQTT brokers of other kinds for the broker check's tests (broker/capabilities.ts,
// docs/box-protocol-broker.md "Brokers"): each a child process on loopback with its own files
// under a temporary directory, started the way CI's machine has them installed (.ci/run:
// mosquitto, rabbitmq-server, nats-server), never touching the system's running instances.
//
// NATS takes port -1 and logs the port it chose. RabbitMQ's MQTT listener and Erlang
// distribution, and Mosquitto, need a number: a port the OS hands out is taken and given back
// just before the broker starts.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ForeignBroker {
  /** mqtt://user:password@127.0.0.1:port (provision=none: no dynsec on these brokers). */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Brokers still running: killed if the test process exits without closing them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/**
 * Starts `cmd` in `dir` and resolves once its output matches `ready`. On exit or timeout it
 * rejects, with the process killed and `dir` removed: nothing is left behind.
 */
function startUntil(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  dir: string,
  ready: RegExp,
  timeoutMs: number,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    child.once('exit', () => running.delete(child));
    let out = '';
    const fail = (e: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      reject(e);
    };
    const timer = setTimeout(
      () => fail(new Error(`${cmd} did not get ready within ${timeoutMs} ms:\n${out.slice(-3000)}`)),
      timeoutMs,
    );
    const onData = (b: Buffer): void => {
      out += b.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => fail(new Error(`${cmd} exited (${code}) before it was ready:\n${out.slice(-3000)}`)));
    child.once('error', (e) => fail(e));
  });
}

function stopper(child: ChildProcess, dir: string): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Mosquitto with anonymous logins; `extra` lines go into its configuration (e.g. `retain_available false`). */
export async function startMosquitto(extra: string[] = []): Promise<ForeignBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-mosquitto-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'log_dest stderr',
      'log_type information',
      ...extra,
      '',
    ].join('\n'),
  );
  const { child } = await startUntil('mosquitto', ['-c', conf], process.env, dir, /running/, 15_000);
  return { url: `mqtt://127.0.0.1:${port}/?provision=none`, host: '127.0.0.1', port, close: stopper(child, dir) };
}

/** NATS 2.9 with JetStream and its MQTT listener (MQTT 3.1.1 only), one user. */
export async function startNats(): Promise<ForeignBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-nats-'));
  const conf = join(dir, 'nats.conf');
  writeFileSync(
    conf,
    [
      'listen: "127.0.0.1:-1"',
      'server_name: "boxhub-test"',
      `jetstream { store_dir: "${join(dir, 'js')}" }`,
      'mqtt { host: "127.0.0.1", port: -1 }',
      'authorization { users: [ { user: "boxhub", password: "boxhub" } ] }',
      '',
    ].join('\n'),
  );
  const { child, match } = await startUntil(
    'nats-server',
    ['-c', conf],
    process.env,
    dir,
    /Listening for MQTT clients on mqtt:\/\/127\.0\.0\.1:(\d+)[\s\S]*Server is ready/,
    20_000,
  );
  const port = Number(match[1]);
  return {
    url: `mqtt://boxhub:boxhub@127.0.0.1:${port}/?provision=none`,
    host: '127.0.0.1',
    port,
    close: stopper(child, dir),
  };
}

/**
 * A RabbitMQ 3.10 node of its own with the rabbitmq_mqtt plugin (MQTT 3.1.1): own node name,
 * Erlang cookie (HOME), database, logs, plugin list and ports; no AMQP listener. Run as the
 * node's own script (not the /usr/sbin wrapper, which switches to the rabbitmq user who cannot
 * write the temporary directory). Takes some 10 s to start.
 */
export async function startRabbitMq(): Promise<ForeignBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-rabbitmq-'));
  mkdirSync(join(dir, 'home'));
  const [port, dist] = [await freePort(), await freePort()];
  writeFileSync(
    join(dir, 'rabbitmq.conf'),
    [
      'listeners.tcp = none',
      `mqtt.listeners.tcp.default = 127.0.0.1:${port}`,
      'mqtt.allow_anonymous = false',
      'loopback_users = none',
      'default_user = boxhub',
      'default_pass = boxhub',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'enabled_plugins'), '[rabbitmq_mqtt].\n');
  const env = {
    ...process.env,
    HOME: join(dir, 'home'),
    RABBITMQ_NODENAME: `boxhub${process.pid}x${port}@localhost`,
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_PID_FILE: join(dir, 'pid'),
    RABBITMQ_DIST_PORT: String(dist),
    RABBITMQ_LOGS: '-',
  };
  const { child } = await startUntil(
    '/usr/lib/rabbitmq/bin/rabbitmq-server',
    [],
    env,
    dir,
    /Server startup complete/,
    90_000,
  );
  return {
    url: `mqtt://boxhub:boxhub@127.0.0.1:${port}/?provision=none`,
    host: '127.0.0.1',
    port,
    close: stopper(child, dir),
  };
}
