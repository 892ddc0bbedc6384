// Test fixture: a private CUPS scheduler (Debian `cups`) the test starts and stops. It has its
// own ServerRoot, spool, cache, state and log directories, listens on loopback only, and has
// no authentication (the policy lets anyone on loopback add queues and cancel jobs), so it
// never touches the machine's /etc/cups or a system cupsd. cupsd runs as root with User lp /
// Group lp (it refuses User root) and needs D-Bus and avahi, like ippeveprinter
// (design: "Real print and scan stacks on a box").
//
// cupsd cannot be told to pick a port itself (Listen needs a number), so the fixture asks the
// kernel for a free one and starts cupsd on it, trying again if another process took it first.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from './free-port.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IppClient } from '../src/drivers/ipp/client.ts';
import { getPrinterAttributes } from '../src/drivers/ipp/operations.ts';
import { ensureDbusAvahi } from './ippeveprinter.ts';

const run = promisify(execFile);

export interface Cupsd {
  readonly port: number;
  /** host:port, as CUPS_SERVER takes it. */
  readonly server: string;
  /** ipp://127.0.0.1:PORT/printers/NAME */
  queueUri(name: string): string;
  /** lpadmin -p NAME -E -v DEVICE -m MODEL (`everywhere` for a driverless queue, or a PPD name
   *  `lpinfo -m` lists). */
  addQueue(name: string, device: string, model: string): Promise<void>;
  /** lpadmin -d NAME */
  setDefault(name: string): Promise<void>;
  /** The scheduler's error_log (for failure messages). */
  log(lines?: number): string;
  /** Stops cupsd (its queues and jobs stay on disk); start() brings it back on the same port,
   *  with other access rules when given (debianPolicy()); the default lets anyone on loopback
   *  add queues. */
  stop(): Promise<void>;
  start(policy?: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The access rules of Debian's own /etc/cups/cupsd.conf (its <Location> and <Policy> sections,
 * with their authentication for administration), for a test of what a box may do on a CUPS
 * configured as installed: print, follow and cancel its own jobs without a password.
 */
export function debianPolicy(): string {
  const conf = readFileSync('/etc/cups/cupsd.conf', 'utf8');
  const blocks = conf.match(/^<(Location|Policy)[\s\S]*?^<\/\1>/gm) ?? [];
  return ['DefaultAuthType Basic', ...blocks].join('\n');
}

// The private-access directives belong to a policy (cupsd.conf(5)); since Debian's CUPS
// 2.4.2-3+deb12u10 cupsd refuses them at the top level ("Unknown directive") and exits.
const OPEN_POLICY = `DefaultAuthType None
<Location />
  Order allow,deny
  Allow all
</Location>
<Policy default>
  JobPrivateAccess all
  JobPrivateValues none
  SubscriptionPrivateAccess all
  SubscriptionPrivateValues none
  <Limit All>
    Order deny,allow
  </Limit>
</Policy>`;

function configs(dir: string, port: number, policy = OPEN_POLICY): { conf: string; files: string } {
  const conf = `Listen 127.0.0.1:${port}
LogLevel debug
Browsing No
WebInterface No
# Jobs and their attributes stay for Get-Jobs after they end (what a box reads back).
PreserveJobHistory Yes
PreserveJobFiles No
${policy}
`;
  const files = `ServerRoot ${dir}
StateDir ${dir}/state
CacheDir ${dir}/cache
RequestRoot ${dir}/spool
TempDir ${dir}/tmp
AccessLog ${dir}/log/access_log
ErrorLog ${dir}/log/error_log
PageLog ${dir}/log/page_log
User lp
Group lp
SystemGroup root
`;
  return { conf, files };
}

async function waitReady(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const client = new IppClient(`ipp://127.0.0.1:${port}/`, { timeoutMs: 1000 });
  const until = Date.now() + 15_000;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`cupsd exited (${child.exitCode ?? child.signalCode}): ${log()}`);
      try {
        await getPrinterAttributes(client, { requested: ['printer-state'] }).catch((e: unknown) => {
          // No printers yet: CUPS answers client-error-not-found, which still means it is up.
          if (!(e instanceof Error && /not-found|0x0406/i.test(e.message))) throw e;
        });
        return;
      } catch (e) {
        if (Date.now() > until)
          throw new Error(`cupsd did not answer on port ${port} within 15 s: ${String(e)}\n${log()}`);
      }
      await new Promise((r) => setTimeout(r, 100)); // poll interval while it starts
    }
  } finally {
    client.close();
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        /* already gone */
      }
    };
    const hard = setTimeout(() => kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    kill('SIGTERM');
  });
}

export async function startCupsd(): Promise<Cupsd> {
  ensureDbusAvahi();
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-cupsd-'));
  chmodSync(dir, 0o755); // cupsd (as lp) reads its ServerRoot
  for (const d of ['state', 'cache', 'spool', 'tmp', 'log', 'ppd']) mkdirSync(join(dir, d));
  // Filters run as lp and write their temporary files here (gstoraster fails without).
  chmodSync(join(dir, 'tmp'), 0o1777);
  const errorLog = join(dir, 'log', 'error_log');
  const log = (lines = 60) => {
    try {
      return readFileSync(errorLog, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };
  let port = 0;
  let child: ChildProcess | undefined;

  async function launch(fixedPort?: number, policy?: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      port = fixedPort ?? (await freePort());
      const { conf, files } = configs(dir, port, policy);
      writeFileSync(join(dir, 'cupsd.conf'), conf);
      writeFileSync(join(dir, 'cups-files.conf'), files);
      // -f: foreground, so the fixture owns the process; detached: its own process group
      // (backends and filters it runs end with it).
      const c = spawn('cupsd', ['-f', '-c', join(dir, 'cupsd.conf'), '-s', join(dir, 'cups-files.conf')], {
        detached: true,
        stdio: 'ignore',
      });
      try {
        await waitReady(port, c, log);
        child = c;
        return;
      } catch (e) {
        await stopChild(c);
        if (fixedPort !== undefined || attempt >= 2) throw e;
      }
    }
  }
  await launch();

  const lpadmin = async (args: string[]) => {
    try {
      await run('lpadmin', ['-h', `127.0.0.1:${port}`, ...args], { timeout: 60_000 });
    } catch (e) {
      throw new Error(`lpadmin ${args.join(' ')}: ${(e as { stderr?: string }).stderr ?? String(e)}\n${log()}`);
    }
  };
  return {
    get port() {
      return port;
    },
    get server() {
      return `127.0.0.1:${port}`;
    },
    queueUri: (name) => `ipp://127.0.0.1:${port}/printers/${name}`,
    async addQueue(name, device, model) {
      await lpadmin(['-p', name, '-E', '-v', device, '-m', model]);
      // A queue just made sometimes answers for a moment without its media (measured: a first
      // Get-Printer-Attributes with no media-supported): wait until it lists them.
      const client = new IppClient(`ipp://127.0.0.1:${port}/printers/${name}`, { timeoutMs: 2000 });
      try {
        for (const until = Date.now() + 15_000; ; ) {
          const a = await getPrinterAttributes(client, { requested: ['media-supported'] }).catch(() => undefined);
          if (a && a.strings('media-supported').length > 0) return;
          if (Date.now() > until) throw new Error(`queue ${name} lists no media-supported after 15 s\n${log()}`);
          await new Promise((r) => setTimeout(r, 100)); // poll interval while CUPS loads the queue
        }
      } finally {
        client.close();
      }
    },
    setDefault: (name) => lpadmin(['-d', name]),
    log,
    async stop() {
      if (child) await stopChild(child);
      child = undefined;
    },
    async start(policy) {
      if (!child) await launch(port, policy);
    },
    async close() {
      if (child) await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
