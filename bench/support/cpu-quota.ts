// Preloaded into a bench's child (`--import`) to give it a smaller CPU: BENCH_CPU_QUOTA (0.5 is
// half a core) becomes a CFS bandwidth limit on a cgroup of its own, 5 ms of every 10 ms at 0.5,
// so that a bench can tell how much room a target has on a slower machine of the same kind
// (bench/README.md, "reconnect-storm"). Preloaded rather than applied after the fork: the
// child's start (loading and transpiling its modules) is part of what a slower machine slows.
// Needs root and a cgroup v1 `cpu` hierarchy or a cgroup v2 one with the cpu controller; when
// neither can be written, the child says so on stderr and runs unlimited. The bench removes the
// cgroup once the child has exited (cpu-group.ts).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CGROUP_V1_CPU, CGROUP_V2, cpuGroupName } from './cpu-group.ts';

const PERIOD_US = 10_000;

function limit(quota: number): string {
  const us = Math.max(1000, Math.round(quota * PERIOD_US));
  const name = cpuGroupName(process.pid);
  const v1 = CGROUP_V1_CPU;
  if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
    const dir = join(v1, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(us));
    writeFileSync(join(dir, 'cgroup.procs'), String(process.pid));
    return dir;
  }
  const v2 = CGROUP_V2;
  if (existsSync(join(v2, 'cgroup.controllers'))) {
    const dir = join(v2, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cpu.max'), `${us} ${PERIOD_US}`);
    writeFileSync(join(dir, 'cgroup.procs'), String(process.pid));
    return dir;
  }
  throw new Error('no writable cgroup cpu controller');
}

const quota = Number(process.env.BENCH_CPU_QUOTA);
if (quota > 0) {
  try {
    const dir = limit(quota);
    process.stderr.write(`cpu-quota: ${quota} of a core (${dir})\n`);
  } catch (err) {
    process.stderr.write(`cpu-quota: not applied (${(err as Error).message}); running unlimited\n`);
  }
}
