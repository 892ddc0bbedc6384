// Test fixture: a real IPP Everywhere printer (CUPS' ippeveprinter) on a free loopback port.
// Every fixture stops what it started: close() kills the printer's whole process group (the
// -c job scripts run as its children) and waits for it to exit.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { freePort } from './free-port.ts';
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
  /** What the print command received, one entry per job it ran, oldest first. */
  received(): ReceivedJob[];
  close(): Promise<void>;
}

/** One job as the -c print command saw it. */
export interface ReceivedJob {
  id: number;
  /** CONTENT_TYPE and every IPP_* variable ippeveprinter set (job attributes, IPP_X_DEFAULT). */
  env: Record<string, string>;
  /** A copy of the document the printer got. */
  document: string;
  /** Sides the command counted (what it reports as job-impressions). */
  sides: number;
}

export interface IppEvePrinterOptions {
  name?: string;
  /** -2: advertise two-sided printing. */
  duplex?: boolean;
  formats?: string[];
  /** Deterministic job progress (see jobScript); without it jobs take a random 5–15 s. */
  script?: JobScriptOptions;
  /**
   * An ippserver attributes file (`-a`, ipptool syntax: `ATTR keyword sides-supported one-sided`)
   * instead of ippeveprinter's built-in printer: for printers that lack an attribute (no
   * media-col-database, no page-ranges) or list one it does not (print-scaling, page-delivery).
   * ippeveprinter refuses -a together with -2/-s, so `duplex` is ignored: say it in the file.
   */
  attributes?: string;
  /** Announce the printer over DNS-SD (_ipp._tcp, as ipp-usb announces a USB printer) instead
   *  of `-r off`. */
  announce?: boolean;
}

export interface JobScriptOptions {
  /** Seconds per printed side. */
  secondsPerSide?: number;
  /** Fail with media-empty-error after this many sides (paper out). */
  paperOutAfter?: number;
  /** Fail with media-jam-error after this many sides. */
  jamAfter?: number;
  /** Before each side, ask the printer (ipptool Get-Job-Attributes) whether the job is being
   *  cancelled, and stop there like a printer finishing its sheet. ippeveprinter itself only
   *  marks the job and waits for the command to end. */
  cancellable?: boolean;
}

const root = new URL('../../../', import.meta.url).pathname;

/**
 * ippeveprinter refuses to start without D-Bus and avahi ("Unable to initialize DNS-SD").
 * Nothing to do when both run. Otherwise the script is idempotent and flock keeps parallel
 * test files from starting two daemons; `-o` closes the lock before the script runs, or the
 * forked dbus-daemon inherits it and holds it for ever (every later flock then waits), and
 * `-w` bounds the wait.
 */
export function ensureDbusAvahi(): void {
  if (spawnSync('pgrep', ['-x', 'dbus-daemon']).status === 0 && spawnSync('pgrep', ['-x', 'avahi-daemon']).status === 0)
    return;
  const r = spawnSync(
    'flock',
    ['-o', '-w', '30', '/tmp/boxhub-dbus-avahi.lock', 'bash', join(root, 'scripts/ci/start-dbus-avahi.sh')],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`start-dbus-avahi.sh failed: ${r.stderr || r.error?.message}`);
}

/**
 * The -c print command. It records what arrived (the IPP_* environment and CONTENT_TYPE in
 * job-N.env, the document as job-N.doc, both in $BOXHUB_RECORD_DIR), counts sides the way a
 * printer does (pages by pdfinfo, 1 for a JPEG; IPP_PAGE_RANGES applied; a two-sided copy
 * rounded up to even; × IPP_COPIES; a PWG raster counts its page headers: a CUPS queue with
 * a raster PPD sends the copies and both sides as pages), reports `ATTR: job-impressions[-completed]=N` per side the
 * way ippeveprinter reads it, and can run out of paper or jam after N sides (`STATE:`,
 * `ERROR:`, exit 1 aborts the job).
 */
export function jobScript(o: JobScriptOptions): string {
  const fault = (after: number | undefined, reason: string, words: string) =>
    after === undefined
      ? ''
      : `  if [ $i -ge ${after} ]; then echo "STATE: +${reason}" >&2; echo "ERROR: ${words}" >&2; exit 1; fi\n`;
  return `#!/bin/sh
rec="$BOXHUB_RECORD_DIR/job-$IPP_JOB_ID"
{ echo "CONTENT_TYPE=$CONTENT_TYPE"; env | grep '^IPP_' | sort; } > "$rec.env"
cp "$1" "$rec.doc"
case "$CONTENT_TYPE" in
  application/pdf) pages=$(pdfinfo "$1" 2>/dev/null | awk '/^Pages:/{print $2}') ;;
  image/pwg-raster) pages=$( { gzip -dc "$1" 2>/dev/null || cat "$1"; } | grep -ao PwgRaster | wc -l) ;;
  *) pages=1 ;;
esac
[ -n "$pages" ] || pages=1
if [ -n "$IPP_PAGE_RANGES" ]; then
  n=0
  for r in $(echo "$IPP_PAGE_RANGES" | tr ',' ' '); do
    lo=\${r%-*}; hi=\${r#*-}
    [ "$hi" -gt "$pages" ] && hi=$pages
    [ "$hi" -ge "$lo" ] && n=$((n + hi - lo + 1))
  done
  pages=$n
fi
case "$IPP_SIDES" in two-sided*) pages=$(( (pages + 1) / 2 * 2 ));; esac
total=$((pages * \${IPP_COPIES:-1}))
echo $total > "$rec.sides"
echo "ATTR: job-impressions=$total" >&2
i=0
while [ $i -lt $total ]; do
${fault(o.paperOutAfter, 'media-empty-error', 'Out of paper')}${fault(o.jamAfter, 'media-jam-error', 'Paper jam')}${o.cancellable ? '  if ipptool -q -d job_id=$IPP_JOB_ID "$(cat "$BOXHUB_PRINTER_URI_FILE")" "$BOXHUB_CANCEL_TEST"; then echo "INFO: cancelled after $i sides" >&2; exit 0; fi\n' : ''}  sleep ${o.secondsPerSide ?? 0.05}
  i=$((i + 1))
  echo "ATTR: job-impressions-completed=$i" >&2
done
exit 0
`;
}

/** ipptool test: succeeds only while the job is being cancelled (RFC 8011 §5.3.8
 *  processing-to-stop-point, which ippeveprinter sets on Cancel-Job of a processing job). */
const CANCEL_TEST = `{
  NAME "is the job being cancelled"
  OPERATION Get-Job-Attributes
  GROUP operation-attributes-tag
  ATTR charset attributes-charset utf-8
  ATTR naturalLanguage attributes-natural-language en
  ATTR uri printer-uri $uri
  ATTR integer job-id $job_id
  ATTR name requesting-user-name boxhub
  STATUS successful-ok
  EXPECT job-state-reasons WITH-VALUE "processing-to-stop-point"
}
`;

function readReceived(dir: string): ReceivedJob[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^job-\d+\.env$/.test(f))
    .map((f) => {
      const id = Number(/\d+/.exec(f)![0]);
      const env: Record<string, string> = {};
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        const i = line.indexOf('=');
        if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
      }
      const sidesFile = join(dir, `job-${id}.sides`);
      return {
        id,
        env,
        document: join(dir, `job-${id}.doc`),
        sides: existsSync(sidesFile) ? Number(readFileSync(sidesFile, 'utf8').trim()) : 0,
      };
    })
    .sort((a, b) => a.id - b.id);
}

async function waitReady(uri: string, child: ChildProcess, log: () => string, deadlineMs: number): Promise<void> {
  const client = new IppClient(uri, { timeoutMs: 1000 });
  const until = Date.now() + deadlineMs;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`ippeveprinter exited (${child.exitCode ?? child.signalCode}): ${log()}`);
      try {
        await getPrinterAttributes(client, { requested: ['printer-state'] });
        return;
      } catch (e) {
        if (Date.now() > until)
          throw new Error(`ippeveprinter did not answer within ${deadlineMs} ms: ${String(e)}\n${log()}`);
      }
      await new Promise((r) => setTimeout(r, 50)); // poll interval while it binds its port
    }
  } finally {
    client.close();
  }
}

/**
 * Ends the printer as a pulled cable or a power switch does: ippeveprinter itself is killed at
 * once, so it never answers again, then its job scripts. A SIGTERM to the whole group killed the
 * running job's script first, and for a moment ippeveprinter still answered, with that job
 * aborted: a box following it read "the printer aborted the job" (4104), not a printer gone.
 */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = (pid: number, sig: NodeJS.Signals) => {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    };
    child.once('exit', () => {
      kill(-child.pid!, 'SIGKILL');
      resolve();
    });
    kill(child.pid!, 'SIGKILL');
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
  const recordDir = join(dir, 'received');
  mkdirSync(recordDir);
  const cancelTest = join(dir, 'cancel.test');
  writeFileSync(cancelTest, CANCEL_TEST);
  // The printer's URI is known once it listens; the print command reads it from this file.
  const uriFile = join(dir, 'printer-uri');
  // The port is asked of the kernel (a random free one), not left to ippeveprinter: with -p 0
  // it takes the first free port from 8000 up, so a printer started by another test right after
  // this one closed took its port, and a box following a job on the pulled printer found the
  // other one answering there (a job "aborted" instead of a printer gone). A port another
  // process takes between the look and ippeveprinter's bind makes it exit; it is tried again.
  const args = [...(o.announce ? [] : ['-r', 'off']), '-n', 'localhost', '-k', '-d', spoolDir, '-K', keyDir];
  const formats = (o.formats ?? ['application/pdf', 'image/jpeg']).join(',');
  if (o.attributes) {
    // -a excludes -f (and -2, -s): the formats go in the file. ippeveprinter then adds its
    // own document-format-supported after them; the first counts (CUPS ippFindAttribute).
    const file = join(dir, 'printer.conf');
    writeFileSync(file, `${o.attributes}\nATTR mimeMediaType document-format-supported ${formats}\n`);
    args.push('-a', file);
  } else {
    args.push('-f', formats, '-s', '20,15');
    if (o.duplex ?? true) args.push('-2');
  }
  if (o.script) {
    const script = join(dir, 'job.sh');
    writeFileSync(script, jobScript(o.script));
    chmodSync(script, 0o755);
    args.push('-c', script);
  }
  args.push(o.name ?? 'Boxhub Test');
  // The print command inherits this environment: where to record, whom to ask about cancels.
  const env = {
    ...process.env,
    BOXHUB_RECORD_DIR: recordDir,
    BOXHUB_PRINTER_URI_FILE: uriFile,
    BOXHUB_CANCEL_TEST: cancelTest,
  };
  // detached: own process group, so close() also ends running job scripts.
  // stdbuf -oL: ippeveprinter reports some events (Identify-Printer) with printf on stdout,
  // which a pipe would hold in libc's buffer until it exits.
  let child: ChildProcess | undefined;
  let out = '';
  try {
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      // With a port given, ippeveprinter says nothing when it listens: it is ready once it
      // answers Get-Printer-Attributes. One that lost the port exits saying "Unable to create".
      const started = spawn(
        'stdbuf',
        ['-oL', 'ippeveprinter', ...args.slice(0, -1), '-p', String(port), ...args.slice(-1)],
        { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env },
      );
      child = started;
      out = '';
      const seen = (d: Buffer) => {
        out += d.toString();
      };
      started.stdout!.on('data', seen);
      started.stderr!.on('data', seen);
      try {
        await waitReady(`ipp://localhost:${port}/ipp/print`, started, () => out, 10_000);
        break;
      } catch (e) {
        await stop(started);
        if (attempt >= 5 || !/Unable to create/.test(out)) throw e;
      }
    }
    const uri = `ipp://localhost:${port}/ipp/print`;
    writeFileSync(uriFile, uri);
    const running = child!;
    return {
      uri,
      ippsUri: uri.replace(/^ipp:/, 'ipps:'),
      port,
      spoolDir,
      log: () => out,
      received: () => readReceived(recordDir),
      async close() {
        await stop(running);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    if (child) await stop(child);
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
