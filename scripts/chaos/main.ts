// `npm run chaos -- --minutes N --seed S [--agents A] [--keep]` (docs/chaos.md): deploys boxhub
// on this machine, runs the workload and the seeded faults for N minutes, lets everything
// settle, checks the invariants and prints the table. Exits 1 on any violation.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { UNACKED_AFTER_MS } from '@boxhub/server/tasks/lifecycle.ts';
import { check } from './checker.ts';
import { deploy } from './deployment.ts';
import { runFaults } from './faults.ts';
import { sampleRss } from './processes.ts';
import { report } from './report.ts';
import { Rng } from './rng.ts';
import { runWorkload } from './workload.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    agents: { type: 'string', default: '20' },
    keep: { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
const seed = Number(values.seed);
const agents = Number(values.agents);
if (!(minutes > 0) || !Number.isInteger(seed) || !(agents >= 2)) {
  console.error('usage: npm run chaos -- [--minutes N] [--seed S] [--agents A (>= 2)] [--keep]');
  process.exit(2);
}
const KEEPALIVE_SEC = 5;
/** After the workload: how long every task has to end and every callback to be delivered; past
 *  the time a create that never finished takes to end (docs/tasks.md), with a minute to spare. */
const DRAIN_MS = UNACKED_AFTER_MS + 60_000;

const t0 = Date.now();
const log = (s: string) => console.log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}`);
const dir = mkdtempSync(join(tmpdir(), 'boxhub-chaos-'));
log(`seed ${seed}, ${minutes} min, ${agents} agents, in ${dir}`);
const dep = await deploy(dir, { agents, log });
// Interrupted (Ctrl-C): the deployment's processes go too (PostgreSQL and Mosquitto run detached).
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping the deployment`);
    void dep.close().finally(() => process.exit(130));
  });
}
const sampler = setInterval(() => sampleRss([...dep.nodes.map((n) => n.proc), ...dep.boxes.map((b) => b.proc)]), 2000);
let code = 1;
try {
  const rng = new Rng(seed);
  const faultRng = rng.fork();
  const workRng = rng.fork();
  const start = Date.now();
  const until = start + minutes * 60_000;
  log('workload and faults running');
  const [stats, faults] = await Promise.all([
    runWorkload(dep, workRng, until),
    runFaults(dep, faultRng, start, until, KEEPALIVE_SEC, log),
  ]);
  log(`workload done: ${stats.tasks.length} tasks; draining (every task ends, every callback is delivered)`);
  const db = new pg.Client({ connectionString: dep.pg.url });
  await db.connect();
  const drainUntil = Date.now() + DRAIN_MS;
  for (;;) {
    const open = Number(
      (
        await db.query<{ n: string }>(
          "select count(*) as n from tasks t where finished_at is null and not (kind = 'recognition' and not exists " +
            '(select 1 from recognitions r join tasks s on s.uuid = r.scan_uuid where r.task_uuid = t.uuid))',
        )
      ).rows[0]?.n ?? 0,
    );
    const pending = Number(
      (await db.query<{ n: string }>("select count(*) as n from callbacks where status = 'pending'")).rows[0]?.n ?? 0,
    );
    if ((open === 0 && pending === 0) || Date.now() > drainUntil) {
      log(`drained: ${open} tasks open, ${pending} callbacks pending`);
      break;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
  await db.end();
  const endedAt = Date.now();
  const violations = await check(dep, stats, faults, endedAt);
  log(
    `refusals and failed calls during faults (information): ${[...stats.refusals].map(([k, n]) => `${k}×${n}`).join(', ') || 'none'}`,
  );
  log(
    `node starts tried again (the node could not start yet): ${dep.nodes.map((n) => `${n.name} ${n.startRetries}`).join(', ')}`,
  );
  log(
    `binds ${stats.binds}, unbinds ${stats.unbinds.length}, stops ${stats.stops}, cancels ${stats.cancels}, control ${stats.controls}, recognitions ${stats.recognitions.length}, requests ${dep.lb.requests}`,
  );
  console.log(`\n${report(faults, violations, stats.tasks.length)}`);
  code = violations.length === 0 ? 0 : 1;
} finally {
  clearInterval(sampler);
  await dep.close();
  // A run with violations keeps its directory: the logs and disks explain them.
  if (!values.keep && code === 0) rmSync(dir, { recursive: true, force: true });
  else log(`kept ${dir}`);
}
process.exit(code);
