#!/usr/bin/env node
// Runs the whole suite with Node's own test runner, on the TypeScript sources (source mode,
// scripts/source-mode.mjs: no build needed). Node 20's --test takes no globs, so the files are
// collected here.
//
// Pass 1: every test on the embedded defaults (SQLite, in-process aedes broker).
// Pass 2: the tests that touch a database or a broker again on the "scale-out" engines:
//         PostgreSQL (BOXHUB_TEST_DATABASE_URL) and Mosquitto (BOXHUB_TEST_MQTT_URL).
//         They are set by .ci/run; a developer without them gets pass 1 only and a notice.
// Pass 3: the install tests (*.install.test.ts): build, pack and install the packages in a
//         fresh copy of the repository and run them with plain node. They run alone, after
//         the others: they keep both cores busy for a minute or two.
//
// Usage: node scripts/test.mjs [path-fragment ...]   (only files whose path contains one)
//        BOXHUB_TEST_PASSES=external,install node scripts/test.mjs   (only those passes)
// Every selected pass runs even when one before it failed, so one run shows every failure.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { sourceEnv } from './source-mode.mjs';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

const selected = walk(join(root, 'packages'), [])
  .sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
const isInstallTest = (f) => f.endsWith('.install.test.ts');
const all = selected.filter((f) => !isInstallTest(f));
const installTests = selected.filter(isInstallTest);
// Tests whose behaviour depends on the database or broker engine opt in to pass 2 by living
// in these packages; pure libraries (protocol, pdf-tools, recognizer, agent drivers) run once.
// The CLI's command-line contract and pure helpers touch neither (they spawn ~100 commands
// for nothing on the second pass).
const engineFree = new Set([
  'packages/cli/src/usage.test.ts',
  'packages/cli/src/demo-classroom.test.ts',
  'packages/e2e/src/architecture-map.test.ts',
  'packages/e2e/src/citations.test.ts',
]);
const engineBound = all.filter((f) => /^packages\/(server|e2e|cli)\//.test(f) && !engineFree.has(f));

// --test-timeout bounds each test and, in Node 20, each file as a whole too: a file's tests
// together must fit, whatever longer timeouts they declare. Five minutes: CI's machines have run
// the suite at half this one's speed (a file of 18 s here took over 120 s there), and a hang
// still ends the file.
//
// The tests run with TMPDIR set to a directory of this run's own, emptied after each pass and
// removed at the end: what a test or a process it started leaves behind (a fixture's directory,
// a simulated box's state killed with SIGKILL, a browser's profile) goes with it instead of
// piling up in /tmp run after run. What was left is printed, so that a test that stops cleaning
// up is still seen. tsx's compile cache (`tsx-<uid>`, tsx's own name for it) is the loader's, not
// a test's: the run's directory holds a link to the one in the system temp dir, so that the tests
// share it with every other run and command, as they did (a cold cache costs a second or so
// for each process that loads the server's sources).
const suiteTmp = mkdtempSync(join(tmpdir(), 'boxhub-suite-'));
// Open as /tmp is: a fixture's daemon that drops to another user (cupsd's filters run as lp)
// reaches its own directory in it.
chmodSync(suiteTmp, 0o1777);
const tsxCache = `tsx-${process.geteuid?.() ?? userInfo().username}`;
mkdirSync(join(tmpdir(), tsxCache), { recursive: true, mode: 0o700 });
symlinkSync(join(tmpdir(), tsxCache), join(suiteTmp, tsxCache));
process.on('exit', () => rmSync(suiteTmp, { recursive: true, force: true }));

function run(label, files, env, { concurrency = 3, timeoutMs = 5 * 60_000 } = {}) {
  if (files.length === 0) return 0;
  console.log(`\n# ${label}: ${files.length} file(s)`);
  try {
    const r = spawnSync(
      process.execPath,
      ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, ...files],
      { stdio: 'inherit', cwd: root, env: sourceEnv({ ...process.env, ...env, TMPDIR: suiteTmp }) },
    );
    return r.status ?? 1;
  } finally {
    const left = readdirSync(suiteTmp).filter((n) => n !== tsxCache);
    for (const n of left) rmSync(join(suiteTmp, n), { recursive: true, force: true });
    console.log(
      `# ${label}: ${left.length} temporary entr${left.length === 1 ? 'y' : 'ies'} left by the tests, removed${left.length > 0 ? ` (${summarise(left)})` : ''}`,
    );
  }
}

/** Names of leftover entries grouped by their prefix (`boxhub-test-abc123` → `boxhub-test-* ×3`). */
function summarise(names) {
  const counts = new Map();
  for (const n of names) {
    const prefix = n.replace(/[-_.][A-Za-z0-9]{6,}$/, '-*');
    counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
  }
  return [...counts].map(([p, c]) => (c > 1 ? `${p} ×${c}` : p)).join(', ');
}

const passes = new Set((process.env.BOXHUB_TEST_PASSES ?? 'embedded,external,install').split(',').map((x) => x.trim()));
let failed = 0;
if (passes.has('embedded')) {
  failed = run('embedded engines (SQLite, in-process broker)', all, { BOXHUB_TEST_ENGINE: 'embedded' }) || failed;
}
const pg = process.env.BOXHUB_TEST_DATABASE_URL;
const mqttUrl = process.env.BOXHUB_TEST_MQTT_URL;
if (!passes.has('external')) {
  // not asked for
} else if (pg && mqttUrl) {
  await dropTestSchemas(pg);
  failed = run('scale-out engines (PostgreSQL, Mosquitto)', engineBound, { BOXHUB_TEST_ENGINE: 'external' }) || failed;
} else {
  console.log('\n# scale-out pass skipped: set BOXHUB_TEST_DATABASE_URL and BOXHUB_TEST_MQTT_URL (see .ci/run)');
  if (process.env.CI) {
    console.log('# CI must run the scale-out pass');
    failed = 1;
  }
}
if (passes.has('install')) {
  failed =
    run(
      'install (build, pack and install in a fresh copy; plain node)',
      installTests,
      {},
      { concurrency: 1, timeoutMs: 30 * 60_000 },
    ) || failed;
}
process.exit(failed);

/** Test servers each work in a PostgreSQL schema t_<time base 36>_<random> (harness.ts
 *  testSchemaName); those of earlier runs, older than three hours, are dropped here. Younger ones
 *  may belong to a run going on beside this one (another checkout), and are left alone. */
async function dropTestSchemas(url) {
  const { default: pgLib } = await import('pg');
  const c = new pgLib.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(String.raw`SELECT nspname FROM pg_namespace WHERE nspname LIKE 't\_%'`);
    const cutoff = Date.now() - 3 * 3600_000;
    for (const r of rows) {
      const made = /^t_([0-9a-z]+)_[0-9a-f]+$/.exec(r.nspname);
      if (made && parseInt(made[1], 36) > cutoff) continue;
      await c.query(`DROP SCHEMA IF EXISTS "${r.nspname}" CASCADE`);
    }
  } finally {
    await c.end();
  }
}
