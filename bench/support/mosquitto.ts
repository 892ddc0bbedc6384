// A private Mosquitto for a bench (never the shared test broker of scripts/ci/start-mosquitto.sh,
// which other work uses): the same configuration (scripts/ci/mosquitto/mosquitto.conf.in, the
// dynamic security plugin, the server role of setup_dynsec) but with persistence on, as a
// production broker has it, so a restart keeps the retained presence and state.
//
// The fleet's logins are written into the dynsec file before the broker starts, in the format
// `mosquitto_ctrl dynsec` writes (PBKDF2-SHA512, 101 iterations, a 12-byte salt), with the
// role ExternalBroker.provisionDevice gives each box (deviceAcls). Provisioning 10,000 boxes one
// control message at a time makes Mosquitto rewrite its whole dynsec file for each.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { deviceAcls, deviceRole } from '../../packages/server/src/broker/external-broker.ts';
import { sleep } from './child.ts';

const PLUGINS = [
  '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/mosquitto_dynamic_security.so',
];
const TEMPLATE = new URL('../../scripts/ci/mosquitto/mosquitto.conf.in', import.meta.url);

export interface PrivateMosquitto {
  port: number;
  /** mqtt://boxhub-server:…@127.0.0.1:port */
  serverUrl: string;
  boxUrl: string;
  /** Stops the broker (SIGTERM, then SIGKILL after 5 s) and starts it again on the same port. */
  restart(): Promise<{ downMs: number }>;
  stop(): Promise<void>;
}

function login(username: string, password: string, roles: string[]) {
  const salt = randomBytes(12);
  const hash = pbkdf2Sync(password, salt, 101, 64, 'sha512');
  return {
    username,
    clientid: username === 'boxhub-server' ? undefined : username,
    password: hash.toString('base64'),
    salt: salt.toString('base64'),
    iterations: 101,
    roles: roles.map((rolename) => ({ rolename })),
  };
}

const serverAcls = [
  { acltype: 'publishClientSend', topic: 'box/#', allow: true },
  { acltype: 'subscribePattern', topic: 'box/#', allow: true },
  { acltype: 'subscribePattern', topic: '$share/+/box/#', allow: true },
  { acltype: 'publishClientSend', topic: '$CONTROL/dynamic-security/#', allow: true },
  { acltype: 'publishClientReceive', topic: '$CONTROL/dynamic-security/#', allow: true },
  { acltype: 'subscribePattern', topic: '$CONTROL/dynamic-security/#', allow: true },
];

async function listening(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`Mosquitto did not listen on ${port} within ${timeoutMs} ms`);
    await sleep(50);
  }
}

export async function startPrivateMosquitto(
  dir: string,
  boxes: { uuid: string; secret: string }[],
): Promise<PrivateMosquitto> {
  const plugin = PLUGINS.find((p) => existsSync(p));
  if (!plugin) throw new Error('mosquitto_dynamic_security.so not found (Debian: package mosquitto)');
  const serverPassword = randomBytes(18).toString('base64url');
  writeFileSync(
    join(dir, 'dynamic-security.json'),
    JSON.stringify({
      clients: [
        login('boxhub-server', serverPassword, ['boxhub-server']),
        ...boxes.map((b) => login(b.uuid, b.secret, [deviceRole(b.uuid)])),
      ],
      roles: [
        { rolename: 'boxhub-server', acls: serverAcls },
        ...boxes.map((b) => ({ rolename: deviceRole(b.uuid), acls: deviceAcls(b.uuid) })),
      ],
      groups: [],
      defaultACLAccess: { publishClientSend: false, publishClientReceive: true, subscribe: false, unsubscribe: true },
    }),
    { mode: 0o600 },
  );
  // Run as root, Mosquitto drops to the `mosquitto` user, which must read and save these files
  // (as start-mosquitto.sh arranges).
  chmodSync(dir, 0o755);
  if (process.getuid?.() === 0 && spawnSync('id', ['mosquitto'], { stdio: 'ignore' }).status === 0) {
    writeFileSync(join(dir, 'mosquitto.log'), '');
    execFileSync('chown', ['-R', 'mosquitto:', dir]);
  }
  let proc: ChildProcess | undefined;
  let port = 0;
  const conf = join(dir, 'mosquitto.conf');
  const log = join(dir, 'mosquitto.log');
  const launch = async (): Promise<void> => {
    const p = spawn('mosquitto', ['-c', conf], {
      stdio: 'ignore',
      env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` },
    });
    proc = p;
    const exited = new Promise<never>((_, reject) =>
      p.once('exit', (c) =>
        reject(new Error(`mosquitto exited (${c}): ${readFileSync(log, 'utf8').split('\n').slice(-5).join(' | ')}`)),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([listening(port, 20_000), exited]);
  };
  // A port Mosquitto binds itself, below the ephemeral range, as start-mosquitto.sh picks one.
  for (let i = 0; ; i++) {
    port = 20000 + Math.floor(Math.random() * 12000);
    const text = readFileSync(TEMPLATE, 'utf8')
      .replaceAll('@PORT@', String(port))
      .replaceAll('@HOST@', '127.0.0.1')
      .replaceAll('@DIR@', dir)
      .replaceAll('@PLUGIN@', plugin)
      .replace('persistence false', `persistence true\npersistence_location ${dir}/\nautosave_interval 5`);
    writeFileSync(conf, text);
    writeFileSync(log, ''); // truncates; the file (and its owner) stays
    try {
      await launch();
      break;
    } catch (e) {
      if (i < 9 && /Address already in use/.test(String(e))) continue;
      throw e;
    }
  }
  const stopNow = async (): Promise<void> => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(t);
  };
  process.on('exit', () => {
    if (proc && proc.exitCode === null) proc.kill('SIGKILL');
  });
  return {
    port,
    serverUrl: `mqtt://boxhub-server:${serverPassword}@127.0.0.1:${port}`,
    boxUrl: `mqtt://127.0.0.1:${port}`,
    async restart() {
      const t0 = Date.now();
      await stopNow();
      await launch();
      return { downMs: Date.now() - t0 };
    },
    stop: stopNow,
  };
}
