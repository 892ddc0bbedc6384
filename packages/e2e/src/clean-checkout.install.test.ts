// The packages install and run like real software (scripts/test.mjs runs this file last, on its
// own: it keeps both cores busy). In a fresh copy of the repository (the files a clone would
// have: no node_modules, no dist):
//
//   npm ci && npm run build && npm ci --omit=dev && npx boxhub serve --demo
//
// must give a working service with plain node (no TypeScript loader is even installed), and
// `npm pack` of the SDK and of the CLI must give tarballs that install into an empty directory
// and run there.
//
// Offline and fast: npm takes every package from the cache that the checkout's own `npm ci`
// filled (--prefer-offline; the registry only for what is missing). better-sqlite3 has no
// prebuilt binary we may download (GitHub is out of reach), so each install would compile it
// (about a minute of CPU, three times). Instead its installer, prebuild-install, is pointed at
// a "local prebuild" (its documented npm_config_<package>_local_prebuilds directory) made from
// the binary this checkout's install already compiled for this very Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import { ConsoleClient, fieldOf } from '@boxhub/server/testing/console-client.ts';
import { Boxhub } from '@boxhub/sdk';

const repo = new URL('../../../', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'boxhub-install-'));
const checkout = join(work, 'checkout');
const prebuilds = join(work, 'prebuilds');
const npmBin = existsSync(join(dirname(process.execPath), 'npm')) ? join(dirname(process.execPath), 'npm') : 'npm';
const timings: Record<string, number> = {};

/**
 * The environment of everything this test starts: no source mode (NODE_OPTIONS) and none of
 * the npm_* settings an outer `npm test` exports (npm_config_local_prefix would point the
 * inner npm at this repository).
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_OPTIONS' || k === 'INIT_CWD' || k.toLowerCase().startsWith('npm_') || k.startsWith('BOXHUB_'))
      continue;
    env[k] = v;
  }
  return {
    ...env,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    npm_config_better_sqlite3_local_prebuilds: prebuilds,
    ...extra,
  };
}

async function run(label: string, file: string, args: string[], cwd: string, env = cleanEnv()): Promise<string> {
  const t0 = Date.now();
  try {
    const { stdout } = await promisify(execFile)(file, args, {
      cwd,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 10 * 60_000,
    });
    return stdout;
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${label} failed: ${x.message}\n--- stdout\n${x.stdout?.slice(-4000)}\n--- stderr\n${x.stderr?.slice(-4000)}`,
    );
  } finally {
    timings[label] = (timings[label] ?? 0) + Date.now() - t0;
  }
}
const npm = (label: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv) => run(label, npmBin, args, cwd, env);

/** The files a clone would have: tracked and new ones, without what .gitignore leaves out. */
async function copyCheckout(): Promise<void> {
  const list = await run('git ls-files', 'git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], repo);
  for (const f of list.split('\0').filter(Boolean)) {
    const from = join(repo, f);
    if (!existsSync(from)) continue; // deleted in the working tree
    mkdirSync(dirname(join(checkout, f)), { recursive: true });
    copyFileSync(from, join(checkout, f));
    chmodSync(join(checkout, f), statSync(from).mode);
  }
}

/** better-sqlite3's compiled binary as prebuild-install's local prebuild, named as it looks for it. */
async function seedSqlitePrebuild(): Promise<void> {
  mkdirSync(prebuilds, { recursive: true });
  const pkgDir = join(repo, 'node_modules/better-sqlite3');
  const name = (
    await run(
      'prebuild name',
      process.execPath,
      [
        '-e',
        "const u=require('prebuild-install/util');const p=require('./package.json');process.stdout.write(require('path').basename(u.getDownloadUrl({...require('prebuild-install/rc')(p),pkg:p})))",
      ],
      pkgDir,
      cleanEnv(),
    )
  ).trim();
  await run(
    'prebuild tar',
    'tar',
    ['-czf', join(prebuilds, name), '-C', pkgDir, 'build/Release/better_sqlite3.node'],
    pkgDir,
  );
}

const MINUTES = 60_000;

before(
  async () => {
    await copyCheckout();
    await seedSqlitePrebuild();
    await npm('npm ci', ['ci'], checkout);
    await npm('npm run build', ['run', 'build'], checkout);
  },
  { timeout: 15 * MINUTES },
);

after(() => {
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(`# install test timings (ms): ${JSON.stringify(timings)}\n`);
});

/** Starts a long-running command; resolves once its output (stdout or stderr) matches `ready`. */
function start(
  file: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  // In a process group of its own: npx runs the command through a shell, and stopping the
  // group reaches the node process at the end of that chain.
  const child = spawn(file, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop(child);
      reject(new Error(`${args.join(' ')}: not ready in 60 s\n${out}`));
    }, 60_000);
    const look = (chunk: Buffer) => {
      out += chunk.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m, output: () => out });
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready\n${out}`));
    });
  });
}

/** SIGTERM to the command's process group (as a service manager stops it); resolves once every process of the group has ended. */
async function stop(child: ChildProcess): Promise<void> {
  const group = -child.pid!;
  const alive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(group, 'SIGTERM');
  try {
    await eventually(() => !alive(), `process group ${child.pid} to end after SIGTERM`, 20_000);
  } catch (e) {
    if (alive()) process.kill(group, 'SIGKILL');
    throw e;
  }
}

test('npm ci --omit=dev && npx boxhub serve --demo: the service and a separate agent run with plain node', {
  timeout: 10 * MINUTES,
}, async () => {
  await npm('npm ci --omit=dev', ['ci', '--omit=dev'], checkout);
  for (const dev of ['tsx', 'typescript', 'openapi-typescript', 'esbuild']) {
    assert.equal(
      existsSync(join(checkout, 'node_modules', dev)),
      false,
      `${dev} is a dev dependency: --omit=dev must leave it out`,
    );
  }

  const data = mkdtempSync(join(work, 'data-'));
  const env = cleanEnv({
    BOXHUB_DATA_DIR: data,
    PORT: '0',
    HOST: '127.0.0.1',
    BOXHUB_MQTT_PORT: '0',
    LOG_LEVEL: 'warn',
  });
  const t0 = Date.now();
  const serve = await start('npx', ['boxhub', 'serve', '--demo'], checkout, env, /box link: +(mqtt:\/\/\S+)\n/);
  timings['serve --demo ready'] = Date.now() - t0;
  let agent: ChildProcess | undefined;
  try {
    const demo = JSON.parse(readFileSync(join(data, 'demo.json'), 'utf8')) as {
      base_url: string;
      api_key: string;
      device_code: string;
    };
    const boxhub = new Boxhub({ baseUrl: demo.base_url, apiKey: demo.api_key });
    const { uuid } = await boxhub.devices.getUuid({ code: demo.device_code });
    await boxhub.devices.bind({ uuid: uuid!, name: 'demo box' });
    const demoBox = await eventually(
      async () =>
        (await boxhub.devices.info({ uuid: uuid! })).client?.online
          ? (await boxhub.devices.info({ uuid: uuid! })).client
          : undefined,
      'the demo box online',
    );
    assert.equal(demoBox?.printer?.connected, true);
    await boxhub.control.buzz({ client_uuid: uuid!, buzz: [100] });

    // The quick start opens the console: its assets come from the installed packages (no
    // CDN), and signing in with the demo key shows the demo box.
    const ui = new ConsoleClient(demo.base_url);
    const login = await ui.get('/console/login');
    assert.equal(login.status, 200);
    assert.ok(fieldOf(login.body, '_csrf'), 'the sign-in form carries its token');
    for (const asset of ['/console/assets/htmx.min.js', '/console/assets/console.js', '/console/assets/console.css'])
      assert.equal((await ui.get(asset)).status, 200, asset);
    await ui.signIn(demo.api_key); // asserts the redirect to /console/devices and the session
    const devicesPage = (await ui.get('/console/devices')).body;
    assert.match(devicesPage, /demo box/);
    assert.match(devicesPage, new RegExp(demo.device_code));

    // A second box: provisioned with the command (same database, same environment), then its
    // agent as a process of its own.
    const reg = JSON.parse(
      await run(
        'boxhub device register',
        'npx',
        ['boxhub', 'device', 'register', '--code', 'BX0042', '--model', 'BX-1', '--json'],
        checkout,
        env,
      ),
    ) as { uuid: string; secret: string };
    writeFileSync(join(data, 'secret'), reg.secret, { mode: 0o600 });
    agent = (
      await start(
        'npx',
        [
          'boxhub',
          'agent',
          '--server',
          serve.match[1]!,
          '--device',
          reg.uuid,
          '--secret-file',
          join(data, 'secret'),
          '--printer',
          'sim:',
          '--scanner',
          'sim:',
        ],
        checkout,
        env,
        /connected/,
      )
    ).child;
    await boxhub.devices.bind({ uuid: reg.uuid, name: 'second box' });
    await eventually(
      async () => (await boxhub.devices.info({ uuid: reg.uuid })).client?.online === true,
      'the agent online',
    );
    await boxhub.control.buzz({ client_uuid: reg.uuid, buzz: [100] });
  } finally {
    if (agent) await stop(agent);
    await stop(serve.child);
  }
  // Stopped cleanly: no error and no stack trace on the way out.
  assert.doesNotMatch(serve.output(), /Error|\n\s+at /, serve.output());
});

test('npm pack: the SDK and the CLI install from their tarballs into empty directories and run', {
  timeout: 10 * MINUTES,
}, async () => {
  const tarballs = mkdtempSync(join(work, 'tarballs-'));
  // The CLI's own packages are not on the registry: they are packed and installed with it.
  const packed = JSON.parse(
    await npm(
      'npm pack',
      [
        'pack',
        '--json',
        '--pack-destination',
        tarballs,
        ...['sdk', 'cli', 'server', 'agent', 'protocol', 'pdf-tools', 'recognizer'].flatMap((p) => [
          '-w',
          `@boxhub/${p}`,
        ]),
      ],
      checkout,
    ),
  ) as Array<{ name: string; filename: string; files: Array<{ path: string }> }>;
  const tgz = Object.fromEntries(packed.map((p) => [p.name, join(tarballs, p.filename)]));
  const sdkFiles = packed.find((p) => p.name === '@boxhub/sdk')!.files.map((f) => f.path);
  for (const f of ['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/openapi.d.ts'])
    assert.ok(sdkFiles.includes(f), `the SDK tarball lacks ${f}`);
  assert.deepEqual(
    sdkFiles.filter((f) => /\.test\.|tsbuildinfo|^test\/|^scripts\//.test(f)),
    [],
    'tests and build state stay out of the tarball',
  );

  // The SDK: installed with the one package of ours it needs (the protocol, which holds the
  // encryption scheme), used from plain JavaScript against a real server, and from a
  // TypeScript program that must type-check against the installed declarations.
  const app = join(work, 'sdk-app');
  mkdirSync(app);
  await npm('npm install sdk', ['install', tgz['@boxhub/sdk']!, tgz['@boxhub/protocol']!], app);
  // The protocol holds shapes and the scheme only: no PDF library comes with the SDK.
  for (const heavy of ['@boxhub/pdf-tools', 'pdf-lib', 'pdfjs-dist']) {
    assert.equal(existsSync(join(app, 'node_modules', heavy)), false, `the SDK installs without ${heavy}`);
  }
  const server = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  try {
    const account = await server.createApp();
    const reg = await server.registerDevice('BX7777');
    writeFileSync(
      join(app, 'run.mjs'),
      `
import { createServer } from 'node:http';
import { Boxhub, BoxhubError, CallbackReceiver, ErrorCode } from '@boxhub/sdk';
const boxhub = new Boxhub({ baseUrl: process.env.URL, apiKey: process.env.KEY });
const { uuid } = await boxhub.devices.getUuid({ code: 'BX7777' });
await boxhub.devices.bind({ uuid, name: 'packed' });
const again = await boxhub.devices.bind({ uuid, name: 'packed' }).catch((e) => e);
console.log(uuid, again instanceof BoxhubError && again.code === ErrorCode.DEVICE_ALREADY_BOUND);
const receiver = new CallbackReceiver({ secrets: process.env.SECRET });
const http = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c)).on('end', () => {
    const event = receiver.receive({ method: req.method, headers: req.headers, body: Buffer.concat(chunks) });
    res.end();
    console.log(event.type, event.id);
    http.close();
  });
}).listen(0, '127.0.0.1', async () => {
  const { id } = await boxhub.callbacks.test({ callback_url: 'http://127.0.0.1:' + http.address().port + '/cb' });
  console.log('asked', id);
});
`,
    );
    const out = await run(
      'sdk run',
      process.execPath,
      ['run.mjs'],
      app,
      cleanEnv({ URL: server.url, KEY: account.api_key, SECRET: account.callback_secret }),
    );
    const asked = /^asked (\S+)$/m.exec(out)?.[1];
    assert.ok(asked, out);
    assert.match(out, new RegExp(`^${reg.uuid} true$`, 'm'));
    assert.match(out, new RegExp(`^callback\\.test ${asked}$`, 'm'));
  } finally {
    await server.close();
  }
  writeFileSync(
    join(app, 'typed.ts'),
    `
import { Boxhub, type CallbackEvent, type Device } from '@boxhub/sdk';
const boxhub = new Boxhub({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
export async function f(e: CallbackEvent): Promise<string | undefined> {
  const device: Device | undefined = (await boxhub.devices.info({ uuid: 'u' })).client;
  // @ts-expect-error bind needs a name
  await boxhub.devices.bind({ uuid: 'u' });
  if (e.type === 'recognition.result') return e.body.result?.student_id;
  return device?.name;
}
`,
  );
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        typeRoots: [join(repo, 'node_modules/@types')],
        types: ['node'],
      },
      files: ['typed.ts'],
    }),
  );
  await run(
    'tsc on the installed SDK',
    process.execPath,
    [join(repo, 'node_modules/typescript/bin/tsc'), '-p', app],
    app,
  );

  // The CLI with the packages it depends on, into another empty directory.
  const cli = join(work, 'cli-app');
  mkdirSync(cli);
  await npm(
    'npm install cli',
    [
      'install',
      ...['cli', 'sdk', 'server', 'agent', 'protocol', 'pdf-tools', 'recognizer'].map((p) => tgz[`@boxhub/${p}`]!),
    ],
    cli,
  );
  const help = await run('boxhub --help', 'npx', ['boxhub', '--help'], cli);
  for (const c of ['serve', 'app', 'device', 'agent', 'card']) assert.match(help, new RegExp(`^  ${c} `, 'm'));
  const env = cleanEnv({ BOXHUB_DATA_DIR: join(cli, 'data') });
  const created = JSON.parse(
    await run('boxhub app create', 'npx', ['boxhub', 'app', 'create', '--name', 'Packed School', '--json'], cli, env),
  ) as { api_key: string };
  assert.match(created.api_key, /^bhk_/);
  await run(
    'boxhub card template',
    'npx',
    ['boxhub', 'card', 'template', '--definition', join(repo, 'docs/examples/card.json'), '--out', join(cli, 'cards')],
    cli,
    env,
  );
  // Recognition runs on worker threads: this checks the built worker entry too. A blank card
  // has no student number: 1001, and the command exits 1 (a student could not be read).
  const recognized = await promisify(execFile)(
    'npx',
    ['boxhub', 'card', 'recognize', '--layouts', join(cli, 'cards'), '--duplex', '--json', join(cli, 'cards/card.pdf')],
    { cwd: cli, env, maxBuffer: 64 * 1024 * 1024 },
  ).then(
    () => assert.fail('boxhub card recognize of a blank card exited 0'),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  assert.equal(recognized.code, 1, recognized.stderr);
  const results = JSON.parse(recognized.stdout) as Array<{ error_code: number }>;
  assert.ok(results.length > 0);
  assert.deepEqual([...new Set(results.map((r) => r.error_code))], [1001]);
});
