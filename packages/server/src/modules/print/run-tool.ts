// Runs qpdf as a child process under memory and time limits: `prlimit --as --cpu` (util-linux;
// the kernel stops it past them), a wall-clock SIGKILL, an output cap. A hostile file then
// costs at most the limits: design/wave2.md §5.3 measured `qpdf --check` at 10.9 s and 3.1 GB
// on a 1 MB flate bomb without them. (The box has the same runner, agent print/document-tools.ts;
// the server does not depend on the agent package.)
import { spawn } from 'node:child_process';

export interface ToolLimits {
  /** Address space, bytes (prlimit --as). */
  memoryBytes: number;
  /** CPU seconds (prlimit --cpu). */
  cpuSeconds: number;
  /** Wall clock, ms. */
  timeoutMs: number;
  /** stdout kept, bytes. */
  maxOutputBytes: number;
}

export interface ToolResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  killed?: 'timeout' | 'output' | 'aborted';
  ms: number;
}

/** Why a run was stopped by a limit, or undefined when it ended on its own. */
export function limitHit(r: ToolResult, l: ToolLimits): string | undefined {
  if (r.killed === 'timeout') return `reading it took longer than ${l.timeoutMs / 1000} s`;
  if (r.killed === 'output') return `its structure is larger than ${l.maxOutputBytes >> 20} MiB`;
  if (r.killed === 'aborted') return 'the check was stopped';
  if (r.signal === 'SIGXCPU') return `reading it took more than ${l.cpuSeconds} s of CPU`;
  // Under --as a failed allocation ends in std::bad_alloc: reported as a warning when qpdf
  // survives it (one stream skipped), or it dies of a signal.
  if (r.signal || /std::bad_alloc/.test(r.stderr)) return `it needs more than ${l.memoryBytes >> 20} MiB of memory to read (a compression bomb?)`;
  return undefined;
}

export function runTool(cmd: string, args: readonly string[], limits: ToolLimits, signal?: AbortSignal): Promise<ToolResult> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('prlimit', [`--as=${limits.memoryBytes}`, `--cpu=${limits.cpuSeconds}`, '--', cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let killed: ToolResult['killed'];
    const kill = (why: NonNullable<ToolResult['killed']>) => { if (!killed) { killed = why; child.kill('SIGKILL'); } };
    const timer = setTimeout(() => kill('timeout'), limits.timeoutMs);
    const onAbort = () => kill('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes > limits.maxOutputBytes) kill('output');
      else out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => { if (err.length < 65536) err += d.toString('utf8'); });
    child.on('error', (e) => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); reject(e); });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const r: ToolResult = { code, signal: sig, stdout: Buffer.concat(out), stderr: err, ms: performance.now() - t0 };
      if (killed) r.killed = killed;
      resolve(r);
    });
  });
}
