// The real `boxhub` command as a child process, as a person or a script runs it: stdout and
// stderr are pipes (so the command must print plain lines), and a failing exit is returned,
// not thrown.
import { execFile, spawn } from 'node:child_process';
import assert from 'node:assert/strict';

export const BOXHUB_BIN = new URL('../../bin/boxhub.mjs', import.meta.url).pathname;

export interface Ran { code: number; stdout: string; stderr: string }

export function boxhub(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BOXHUB_BIN, ...args], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Piped output is plain lines: no cursor movement, no line erasing, no colour. */
export function assertPlain(r: Ran, what: string): void {
  assert.doesNotMatch(r.stdout, /[\x1b\r]/, `${what}: terminal control in stdout`);
  assert.doesNotMatch(r.stderr, /[\x1b\r]/, `${what}: terminal control in stderr`);
}

/** Runs `boxhub` on a pseudo-terminal (util-linux `script`), as a person at a terminal sees it. */
export function boxhubOnTerminal(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const quote = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
  const cmd = [process.execPath, BOXHUB_BIN, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-q', '-e', '-c', cmd, '/dev/null'], { env: { ...process.env, TERM: 'xterm', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** Runs `work` over `items`, `n` at a time (each starts a process; the machine has few cores). */
export async function pool<T, R>(items: T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) { const i = next++; out[i] = await work(items[i]!); }
  }));
  return out;
}
