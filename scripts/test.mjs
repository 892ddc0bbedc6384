#!/usr/bin/env node
// Runs the whole suite with Node's own test runner (TypeScript through tsx).
// Node 20's --test takes no globs, so the files are collected here.
//
// Pass 1: every test on the embedded defaults (SQLite, in-process aedes broker).
// Pass 2: the tests that touch a database or a broker again on the "scale-out" engines:
//         PostgreSQL (BOXHUB_TEST_DATABASE_URL) and Mosquitto (BOXHUB_TEST_MQTT_URL).
//         They are set by .ci/run; a developer without them gets pass 1 only and a notice.
//
// Usage: node scripts/test.mjs [path-fragment ...]   (only files whose path contains one)
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

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

const all = walk(join(root, 'packages'), []).sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
// Tests whose behaviour depends on the database or broker engine opt in to pass 2 by living
// in these packages; pure libraries (protocol, recognizer, agent drivers) run once.
const engineBound = all.filter((f) => /^packages\/(server|e2e|cli)\//.test(f));

function run(label, files, env) {
  if (files.length === 0) return 0;
  console.log(`\n# ${label}: ${files.length} file(s)`);
  const r = spawnSync(process.execPath, [
    '--import', 'tsx', '--test', '--test-concurrency=3', '--test-timeout=120000', ...files,
  ], { stdio: 'inherit', cwd: root, env: { ...process.env, ...env } });
  return r.status ?? 1;
}

let failed = run('embedded engines (SQLite, in-process broker)', all, {
  BOXHUB_TEST_ENGINE: 'embedded',
});
const pg = process.env.BOXHUB_TEST_DATABASE_URL;
const mqttUrl = process.env.BOXHUB_TEST_MQTT_URL;
if (pg && mqttUrl) {
  await dropTestSchemas(pg);
  failed ||= run('scale-out engines (PostgreSQL, Mosquitto)', engineBound, {
    BOXHUB_TEST_ENGINE: 'external',
  });
} else {
  console.log('\n# scale-out pass skipped: set BOXHUB_TEST_DATABASE_URL and BOXHUB_TEST_MQTT_URL (see .ci/run)');
  if (process.env.CI) { console.log('# CI must run the scale-out pass'); failed = 1; }
}
process.exit(failed);

/** Test servers each work in a PostgreSQL schema named t_*; the previous run's are dropped here. */
async function dropTestSchemas(url) {
  const { default: pgLib } = await import('pg');
  const c = new pgLib.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(String.raw`SELECT nspname FROM pg_namespace WHERE nspname LIKE 't\_%'`);
    for (const r of rows) await c.query(`DROP SCHEMA IF EXISTS "${r.nspname}" CASCADE`);
  } finally {
    await c.end();
  }
}
