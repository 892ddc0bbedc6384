// Runs a document tool (qpdf, pdftoppm) as a child process under memory and time limits, so a
// hostile file costs at most the limits: `prlimit --as --cpu` caps its address space and CPU time
// (util-linux; the kernel kills it past them), a wall-clock timer kills it with SIGKILL, and its
// output is capped. Unbounded, `qpdf --check` on a 1 MB flate bomb took 10.9 s and 3.1 GB
// (docs/printing.md, "Document checks and limits"). The server's print check
// (modules/print/document-check.ts) and the box's page work (agent media/document-tools.ts) both
// run their tools through this one runner; each words a stopped run for its own audience.
import { spawn } from 'node:child_process';

export interface ToolLimits {
  /** Address space, bytes (prlimit --as). */
  memoryBytes: number;
  /** CPU seconds (prlimit --cpu). */
  cpuSeconds: number;
  /** Wall clock, ms: killed past it. */
  timeoutMs: number;
  /** stdout kept, bytes: killed past it. */
  maxOutputBytes: number;
}

export interface ToolResult {
  /** Exit code; null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  /** Why the runner killed it, when it did. */
  killed?: 'timeout' | 'output' | 'aborted';
  ms: number;
}

export function runLimited(
  cmd: string,
  args: readonly string[],
  limits: ToolLimits,
  signal?: AbortSignal,
): Promise<ToolResult> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('prlimit', [`--as=${limits.memoryBytes}`, `--cpu=${limits.cpuSeconds}`, '--', cmd, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let killed: ToolResult['killed'];
    const kill = (why: NonNullable<ToolResult['killed']>) => {
      if (!killed) {
        killed = why;
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => kill('timeout'), limits.timeoutMs);
    const onAbort = () => kill('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes > limits.maxOutputBytes) kill('output');
      else out.push(d);
    });
    // stderr is for messages: keep the first 64 KiB.
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 65536) err += d.toString('utf8');
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(e);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const r: ToolResult = { code, signal: sig, stdout: Buffer.concat(out), stderr: err, ms: performance.now() - t0 };
      if (killed) r.killed = killed;
      resolve(r);
    });
  });
}
