#!/usr/bin/env node
// `npm run chaos -- --minutes N --seed S`: the chaos soak (docs/chaos.md), run on the sources
// (scripts/source-mode.mjs) in a process of its own, like the benchmarks.
import { spawnSync } from 'node:child_process';
import { sourceEnv } from './source-mode.mjs';

const root = new URL('..', import.meta.url).pathname;
const r = spawnSync(process.execPath, ['scripts/chaos/main.ts', ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: root,
  env: sourceEnv(),
});
process.exit(r.status ?? 1);
