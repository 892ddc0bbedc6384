// Test fixture: a real IPP Everywhere printer (CUPS' ippeveprinter) on a free loopback port.
// Every fixture stops what it started: close() kills the printer's whole process group (the
// -c job scripts run as its children) and waits for it to exit.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IppClient } from '../src/drivers/ipp/client.ts';
import { getPrinterAttributes } from '../src/drivers/ipp/operations.ts';

export interface IppEvePrinter {
  readonly uri: string;
  /** The same printer over TLS (self-signed certificate). */
  readonly ippsUri: string;
  readonly port: number;
  readonly spoolDir: string;
  /** Output of ippeveprinter so far (for failure messages). */
  log(): string;
  close(): Promise<void>;
}

export interface IppEvePrinterOptions {
  name?: string;
  /** -2: advertise two-sided printing. */
  duplex?: boolean;
  formats?: string[];
  /** Deterministic job progress (see jobScript); without it jobs take a random 5–15 s. */
  script?: JobScriptOptions;
}

export interface JobScriptOptions {
  /** Seconds per printed side. */
  secondsPerSide?: number;
  /** Fail with media-empty-error after this many sides (paper out). */
  paperOutAfter?: number;
}

const root = new URL('../../../', import.meta.url).pathname;

/** Free loopback port: bind port 0, read it, release it. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * ippeveprinter refuses to start without D-Bus and avahi ("Unable to initialize DNS-SD").
 * The script is idempotent; flock keeps parallel test files from starting two daemons.
 */
export function ensureDbusAvahi(): void {
  const r = spawnSync('flock', ['/tmp/boxhub-dbus-avahi.lock', 'bash', join(root, 'scripts/ci/start-dbus-avahi.sh')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`start-dbus-avahi.sh failed: ${r.stderr || r.error?.message}`);
}

/**
 * The -c job script: reports job-impressions and each completed side on stderr the way
 * ippeveprinter reads it (`ATTR:`, `STATE:`, `ERROR:`), and can run out of paper.
 * Sides = pages (pdfinfo) × copies, rounded up to even for two-sided (a blank back counts).
 */
export function jobScript(o: JobScriptOptions): string {
  return `#!/bin/sh
pages=$(pdfinfo "$1" 2>/dev/null | awk '/^Pages:/{print $2}')
[ -n "$pages" ] || pages=1
copies=\${IPP_COPIES:-1}
case "$IPP_SIDES" in two-sided*) pages=$(( (pages + 1) / 2 * 2 ));; esac
total=$((pages * copies))
echo "ATTR: job-impressions=$total" >&2
i=0
while [ $i -lt $total ]; do
  ${o.paperOutAfter !== undefined ? `if [ $i -ge ${o.paperOutAfter} ]; then echo "STATE: +media-empty-error" >&2; echo "ERROR: Out of paper" >&2; exit 1; fi` : ':'}
  sleep ${o.secondsPerSide ?? 0.05}
  i=$((i + 1))
  echo "ATTR: job-impressions-completed=$i" >&2
done
exit 0
`;
}

async function waitReady(uri: string, child: ChildProcess, log: () => string, deadlineMs: number): Promise<void> {
  const client = new IppClient(uri, { timeoutMs: 1000 });
  const until = Date.now() + deadlineMs;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`ippeveprinter exited (${child.exitCode ?? child.signalCode}): ${log()}`);
      try {
        await getPrinterAttributes(client, { requested: ['printer-state'] });
        return;
      } catch (e) {
        if (Date.now() > until) throw new Error(`ippeveprinter did not answer within ${deadlineMs} ms: ${String(e)}\n${log()}`);
      }
      await new Promise((r) => setTimeout(r, 50)); // poll interval while it binds its port
    }
  } finally {
    client.close();
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = (sig: NodeJS.Signals) => { try { process.kill(-child.pid!, sig); } catch { /* already gone */ } };
    const hard = setTimeout(() => kill('SIGKILL'), 3000);
    child.once('exit', () => { clearTimeout(hard); kill('SIGKILL'); resolve(); });
    kill('SIGTERM');
  });
}

export async function startIppEvePrinter(o: IppEvePrinterOptions = {}): Promise<IppEvePrinter> {
  ensureDbusAvahi();
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-ippeve-'));
  const spoolDir = join(dir, 'spool');
  mkdirSync(spoolDir);
  // -K: a writable key dir lets ippeveprinter create its self-signed certificate for ipps.
  const keyDir = join(dir, 'ssl');
  mkdirSync(keyDir);
  let lastError: unknown;
  // A freed port can be taken by someone else before ippeveprinter binds it: retry a few times.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = ['-r', 'off', '-n', 'localhost', '-p', String(port), '-s', '20,15', '-f', (o.formats ?? ['application/pdf', 'image/jpeg']).join(','), '-k', '-d', spoolDir, '-K', keyDir];
    if (o.duplex ?? true) args.push('-2');
    if (o.script) {
      const script = join(dir, 'job.sh');
      writeFileSync(script, jobScript(o.script));
      chmodSync(script, 0o755);
      args.push('-c', script);
    }
    args.push(o.name ?? 'Boxhub Test');
    // detached: own process group, so close() also ends running job scripts.
    const child = spawn('ippeveprinter', args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
    const uri = `ipp://localhost:${port}/ipp/print`;
    try {
      await waitReady(uri, child, () => out, 10_000);
      return {
        uri, ippsUri: uri.replace(/^ipp:/, 'ipps:'), port, spoolDir,
        log: () => out,
        async close() { await stop(child); rmSync(dir, { recursive: true, force: true }); },
      };
    } catch (e) {
      lastError = e;
      await stop(child);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}
