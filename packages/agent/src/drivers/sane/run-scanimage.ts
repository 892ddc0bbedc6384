// Runs scanimage (sane-utils) with a timeout and an abort signal. A hung backend (a USB device
// that stopped answering) must not hang the agent: the child is killed on either.
import { spawn } from 'node:child_process';

export interface ScanimageResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Path of the scanimage binary. */
  bin?: string;
}

/** Output beyond this is cut: `-A` of a real scanner is a few KB. */
const MAX_OUTPUT = 1 << 20;

export class ScanimageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ScanimageError';
  }
}

export function runScanimage(args: string[], o: RunOptions = {}): Promise<ScanimageResult> {
  const timeoutMs = o.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const child = spawn(o.bin ?? 'scanimage', args, {
      env: o.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(o.signal ? { signal: o.signal } : {}),
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += d.toString('utf8');
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(
        o.signal?.aborted ? o.signal.reason : new ScanimageError(`cannot run scanimage: ${e.message}`, { cause: e }),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (o.signal?.aborted) {
        reject(o.signal.reason);
        return;
      }
      if (timedOut) {
        reject(new ScanimageError(`scanimage ${args.join(' ')} gave no answer within ${timeoutMs} ms`));
        return;
      }
      resolve({ code, stdout, stderr });
    });
  });
}
