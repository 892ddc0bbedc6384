// Where cpu-quota.ts puts a bench child's own cgroup, and its removal once the child has exited:
// a cgroup cannot be removed while a process is in it, so the child cannot remove its own, and
// one left behind per run would pile up under /sys/fs/cgroup.
import { existsSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

export const CGROUP_V1_CPU = '/sys/fs/cgroup/cpu';
export const CGROUP_V2 = '/sys/fs/cgroup';

/** The name of the cgroup cpu-quota.ts makes for the process `pid`. */
export function cpuGroupName(pid: number): string {
  return `boxhub-bench-${pid}`;
}

/** Removes the cgroup of the exited process `pid`, under either hierarchy, where there is one. */
export function removeCpuGroup(pid: number): void {
  for (const root of [CGROUP_V1_CPU, CGROUP_V2]) {
    const dir = join(root, cpuGroupName(pid));
    if (!existsSync(dir)) continue;
    try {
      rmdirSync(dir);
    } catch (err) {
      process.stderr.write(`cpu-quota: could not remove ${dir} (${(err as Error).message})\n`);
    }
  }
}
