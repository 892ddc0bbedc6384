// Child processes of the deployment: each logs to a file of its own, is sampled for its RSS,
// and says whether it exited without being asked to (a crash, for the checker).
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';

export interface Proc {
  name: string;
  child: ChildProcess;
  log: string;
  /** Exits nobody asked for: { code, signal } each. */
  crashes: Array<{ code: number | null; signal: string | null; at: number }>;
  /** Highest RSS seen, bytes, per incarnation (a restart starts a new entry). */
  rss: number[];
  exited: Promise<void>;
  /** Sends `signal` and marks the exit as asked for. */
  kill(signal: NodeJS.Signals): void;
  alive(): boolean;
}

export function startProc(
  name: string,
  cmd: string,
  args: string[],
  o: SpawnOptions & { log: string },
  prev?: Proc,
): Proc {
  const out = createWriteStream(o.log, { flags: 'a' });
  const child = spawn(cmd, args, { ...o, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  let asked = false;
  let done = false;
  const p: Proc = {
    name,
    child,
    log: o.log,
    crashes: prev?.crashes ?? [],
    rss: [...(prev?.rss ?? []), 0],
    exited: new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        done = true;
        if (!asked) p.crashes.push({ code, signal, at: Date.now() });
        resolve();
      }),
    ),
    kill(signal) {
      asked = true;
      if (!done) child.kill(signal);
    },
    alive: () => !done,
  };
  return p;
}

/** Records each live process's RSS (from /proc) into its current incarnation's entry. */
export function sampleRss(procs: Iterable<Proc>): void {
  for (const p of procs) {
    if (!p.alive() || p.child.pid === undefined) continue;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.child.pid}/status`, 'utf8'));
      const i = p.rss.length - 1;
      if (m) p.rss[i] = Math.max(p.rss[i] ?? 0, Number(m[1]) * 1024);
    } catch {
      /* gone between the check and the read */
    }
  }
}
