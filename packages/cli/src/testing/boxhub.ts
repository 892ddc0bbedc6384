// The real `boxhub` command as a child process, as a person or a script runs it: stdout and
// stderr are pipes (so the command must print plain lines), and a failing exit is returned,
// not thrown.
import { execFile, spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { testSchemaName } from '@boxhub/server/testing/harness.ts';

export const BOXHUB_BIN = new URL('../../bin/boxhub.mjs', import.meta.url).pathname;

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export function boxhub(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BOXHUB_BIN, ...args],
      { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Piped output is plain lines: no cursor movement, no line erasing, no colour. */
export function assertPlain(r: Ran, what: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal control is what must not be in a pipe's output
  assert.doesNotMatch(r.stdout, /[\x1b\r]/, `${what}: terminal control in stdout`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal control is what must not be in a pipe's output
  assert.doesNotMatch(r.stderr, /[\x1b\r]/, `${what}: terminal control in stderr`);
}

/** Runs `boxhub` on a pseudo-terminal (util-linux `script`), as a person at a terminal sees it. */
export function boxhubOnTerminal(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const quote = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
  const cmd = [process.execPath, BOXHUB_BIN, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-q', '-e', '-c', cmd, '/dev/null'], {
      env: { ...process.env, TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** Runs `work` over `items`, `n` at a time (each starts a process; the machine has few cores). */
export async function pool<T, R>(items: T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!);
      }
    }),
  );
  return out;
}

/**
 * The environment of `boxhub serve --demo` as `npm start` runs it: free ports, the embedded
 * broker, the data in `dataDir`. On the test suite's external pass the database is PostgreSQL,
 * in a schema of its own (scripts/test.mjs drops the t_* schemas).
 */
export function demoServeEnv(dataDir: string): NodeJS.ProcessEnv {
  const pg = process.env.BOXHUB_TEST_ENGINE === 'external' && process.env.BOXHUB_TEST_DATABASE_URL;
  return {
    ...process.env,
    BOXHUB_DATA_DIR: dataDir,
    PORT: '0',
    BOXHUB_MQTT_PORT: '0',
    LOG_LEVEL: 'silent',
    MQTT_URL: '',
    DATABASE_URL: pg || '',
    BOXHUB_DATABASE_SCHEMA: pg ? testSchemaName() : '',
  };
}

/**
 * A long-running `boxhub` command (`serve`) as a child process: its output as it comes,
 * `waitFor` a pattern in it (rejected, with the output, if the command ends first), and its exit
 * code once it has ended.
 */
export function startBoxhub(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BOXHUB_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '', all: '' };
  const waiters = new Set<() => void>();
  let ended = false;
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const take = (stream: 'stdout' | 'stderr') => (d: Buffer) => {
    out[stream] += d.toString();
    out.all += d.toString();
    wake();
  };
  child.stdout.on('data', take('stdout'));
  child.stderr.on('data', take('stderr'));
  const exited = new Promise<number | null>((r) =>
    child.once('close', (code) => {
      ended = true;
      wake();
      r(code);
    }),
  );
  const waitFor = (re: RegExp, stream: keyof typeof out = 'all') =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out[stream]);
        if (m) {
          waiters.delete(check);
          resolve(m);
        } else if (ended) {
          waiters.delete(check);
          reject(new Error(`boxhub ${args.join(' ')} ended before ${re}:\n${out.all}`));
        }
      };
      waiters.add(check);
      check();
    });
  return { child, out, waitFor, exited };
}
