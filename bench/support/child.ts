// Helpers shared by the benches: forked helper processes with a small request/answer protocol
// over IPC, CPU pinning, statistics and the machine header. Everything stays on 127.0.0.1.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, setPriority, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const supportDir = fileURLToPath(new URL('.', import.meta.url));

export interface Child {
  proc: ChildProcess;
  pid: number;
  /** What the child sent first: { ready: true, url, mqttUrl? }. */
  ready: { url: string; mqttUrl?: string; [k: string]: unknown };
  call<T = unknown>(op: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  /** Asks the child to close and exit; kills it (by pid) if it does not within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Last lines the child wrote (stdout and stderr), for error messages. */
  tail(): string;
  /** Lines the child wrote to stdout (the server's log). */
  stdoutLines: number;
}

const live = new Set<ChildProcess>();
const dirs = new Set<string>();
function killAll(): void {
  for (const p of live) if (p.exitCode === null) p.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/** A temp directory removed when this process exits, however it exits (Ctrl-C, watchdog). */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'boxhub-bench-'));
  dirs.add(d);
  return d;
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });

/**
 * Forks `script` (a .ts file under bench/support) through tsx with an IPC channel and waits for
 * its ready message. The child's stdout (the server log) is read and discarded, as a log
 * shipper would, so writing it costs what it costs in production.
 */
export async function forkChild(
  script: string,
  args: string[],
  o: { env?: Record<string, string>; execArgv?: string[]; readyTimeoutMs?: number; built?: boolean } = {},
): Promise<Child> {
  const proc = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    // built: a .mjs child on the packages' dist/ (npm run build), as production runs, without
    // tsx or source mode (which cost memory of their own).
    execArgv: o.built ? (o.execArgv ?? []) : ['--import', 'tsx', ...(o.execArgv ?? [])],
    env: { ...process.env, ...(o.built ? { NODE_OPTIONS: '' } : {}), ...o.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  live.add(proc);
  proc.on('exit', () => live.delete(proc));
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(l);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  let stdoutLines = 0;
  // BENCH_CHILD_LOG=<file>: the children's output is also appended there, for diagnosis.
  const copy = process.env.BENCH_CHILD_LOG;
  proc.stdout!.on('data', (c: Buffer) => {
    stdoutLines += c.toString('utf8').split('\n').length - 1;
    keep(c);
    if (copy) appendFileSync(copy, c);
  });
  proc.stderr!.on('data', keep);
  const tail = () => lines.join('\n');

  let next = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let readyResolve!: (v: Child['ready']) => void;
  let readyReject!: (e: Error) => void;
  const readyP = new Promise<Child['ready']>((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  proc.on('message', (m: { ready?: boolean; id?: number; result?: unknown; error?: string }) => {
    if (m.ready) {
      readyResolve(m as Child['ready']);
      return;
    }
    const w = m.id !== undefined ? waiting.get(m.id) : undefined;
    if (!w) return;
    waiting.delete(m.id!);
    if (m.error) w.reject(new Error(m.error));
    else w.resolve(m.result);
  });
  proc.on('exit', (code, sig) => {
    const e = new Error(`${script} exited (${code ?? sig})\n${tail()}`);
    readyReject(e);
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  });
  const timer = setTimeout(
    () => readyReject(new Error(`${script} not ready within ${o.readyTimeoutMs ?? 30_000} ms\n${tail()}`)),
    o.readyTimeoutMs ?? 30_000,
  );
  const ready = await readyP
    .finally(() => clearTimeout(timer))
    .catch((e: unknown) => {
      proc.kill('SIGKILL');
      throw e;
    });

  const child: Child = {
    proc,
    pid: proc.pid!,
    ready,
    tail,
    get stdoutLines() {
      return stdoutLines;
    },
    call<T>(op: string, args: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<T> {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        const t = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`${script}: '${op}' timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(id, {
          resolve: (v) => {
            clearTimeout(t);
            resolve(v as T);
          },
          reject: (e) => {
            clearTimeout(t);
            reject(e);
          },
        });
        proc.send({ id, op, ...args });
      });
    },
    async stop(graceMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      child.call('close', {}, graceMs).catch(() => undefined);
      const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
    },
  };
  return child;
}

/**
 * Lowers every thread of `pid` to niceness `nice` (the threads it starts later inherit it from
 * the thread that starts them); false when that is not possible. For processes that stand in for
 * machines of their own (simulated boxes): on a machine shared with the system under test they
 * should take the CPU it leaves, not a share of what it needs (bench/README.md, "reconnect-storm").
 */
export function lowerPriority(pid: number, nice: number): boolean {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) setPriority(Number(tid), nice);
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of `pid` to `cpu` with taskset; false when that is not possible. */
export function pin(pid: number, cpu: number): boolean {
  const r = spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
  return r.status === 0;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function header(title: string, lines: string[]): void {
  const c = cpus();
  console.log(`# ${title}`);
  for (const l of lines) console.log(`#   ${l}`);
  console.log(
    `#   machine: ${c.length} × ${c[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, ${process.platform}/${process.arch}`,
  );
  const load = loadavg();
  if (load.some((x) => x > 0))
    console.log(
      `#   load average at start: ${load.map((x) => x.toFixed(2)).join(' ')} (other work on this machine skews absolute figures; compare the ratios)`,
    );
}

export const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

/**
 * Server environment for benches that drive more load from one address and one application
 * than the default limits allow: every limit stays on (its per-request cost is part of what is
 * measured) but out of reach.
 */
export const LIMITS_OUT_OF_REACH: Record<string, string> = {
  BOXHUB_RATE_LIMIT_ADDRESS: '999999999/1m',
  BOXHUB_RATE_LIMIT_APP: '999999999/1m',
  BOXHUB_MQTT_CONNECT_LIMIT: '999999999/10s',
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
