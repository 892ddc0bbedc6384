#!/usr/bin/env node
// `npm run bench [filter]`: runs every bench/**/*.bench.ts one after another (never in
// parallel: they measure), each in its own process. Each prints its own figures as ratios.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { sourceEnv } from './source-mode.mjs';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.bench.ts')) out.push(relative(root, path));
  }
  return out;
}
const files = walk(join(root, 'bench'), [])
  .sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f}`);
  // On the sources (scripts/source-mode.mjs), like the tests: no build needed.
  const r = spawnSync(process.execPath, [f], { stdio: 'inherit', cwd: root, env: sourceEnv() });
  if (r.status !== 0) {
    failed = 1;
    console.log(`!!! ${f} exited with ${r.status}`);
  }
}
process.exit(failed);
