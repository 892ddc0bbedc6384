// Runs one scanimage batch and hands over each page file as soon as scanimage has written it
// (`--batch-print` names a page on stdout once it is complete; a page that failed is never
// named and scanimage removes it). Pages are uncompressed TIFF: raw samples, no JPEG at
// scanimage's fixed quality 75, and libvips reads TIFF strips from the file as it encodes,
// so a page (104 MB at 600 dpi colour) never has to be in memory.
//
// The page files live in a private temp directory that is removed when the batch ends, however
// it ends (done, fault, abort, or the consumer stopping early). An abort or early stop ends
// scanimage with SIGTERM (it cancels the scan with sane_cancel, which lets a real device eject
// the sheet) and SIGKILL after a grace period. So does a batch that delivers no page and does
// not end within `pageTimeoutMs`: a hung backend (a USB device gone quiet) ends the scan with a
// fault rather than holding the box's scanner for ever, as every other scanimage run is bounded
// (run-scanimage.ts). And a scanimage that has said its batch is over ("Batch terminated") but
// does not exit within `endGraceMs` is stuck in the backend's clean-up, not in the scan: it is
// stopped and the batch ends as scanimage said (statusOfBatchEnd). SANE's own `test` backend
// does that now and then under load: sane_cancel joins a reader thread it cancelled inside
// malloc, which waits for ever on the allocator's lock (seen with gdb on a scanimage a run of the suite left).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { faultOfExit, statusOfBatchEnd, type SanePlan } from './plan.ts';
import { ScanFault } from '../types.ts';

export interface BatchOptions {
  device: string;
  plan: SanePlan;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
  bin?: string;
  /** Parent of the batch's temp directory (default the OS temp dir). */
  tmpDir?: string;
  /** Extra scanimage options appended after the plan's (device-specific tuning). */
  extraArgs?: string[];
  /** From SIGTERM to SIGKILL, ms. */
  killGraceMs?: number;
  /** Longest wait for scanimage's next page or its end, ms (default PAGE_TIMEOUT_MS). */
  pageTimeoutMs?: number;
  /** Longest wait for scanimage to exit once it said "Batch terminated", ms (END_GRACE_MS). */
  endGraceMs?: number;
}

/** scanimage exits at once after its batch; 5 s is a backend stuck in its clean-up. */
export const END_GRACE_MS = 5000;

/**
 * A page's longest wait by default: a slow flatbed's A4 at 600 dpi in colour takes a minute or
 * two; nothing in three minutes is a backend that hangs.
 */
export const PAGE_TIMEOUT_MS = 180_000;

export interface BatchPage {
  /** 1-based number of the page in the batch. */
  n: number;
  /** The page file; removed after the consumer's next step. */
  file: string;
}

const MAX_STDERR = 64 * 1024;

export async function* scanimageBatch(o: BatchOptions): AsyncGenerator<BatchPage> {
  o.signal.throwIfAborted();
  const dir = await mkdtemp(join(o.tmpDir ?? tmpdir(), 'boxhub-scan-'));
  const args = [
    '-d',
    o.device,
    ...o.plan.args,
    ...(o.extraArgs ?? []),
    '--format=tiff',
    `--batch=${join(dir, 'p%05d.tif')}`,
    '--batch-print',
    ...(o.plan.batchCount ? [`--batch-count=${o.plan.batchCount}`] : []),
  ];
  const child = spawn(o.bin ?? 'scanimage', args, { env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  // The last lines, whatever the length of the whole (a long batch's page lines fill MAX_STDERR).
  let tail = '';
  // Why the batch stopped scanimage itself, if it did: no page in time, or stuck after its end.
  let stoppedFor: 'hung' | 'stuck' | undefined;
  let endTimer: NodeJS.Timeout | undefined;
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    if (stderr.length < MAX_STDERR) stderr += d;
    tail = (tail + d).slice(-4096);
    if (!endTimer && /^Batch terminated/m.test(tail)) {
      endTimer = setTimeout(() => {
        stoppedFor = 'stuck';
        stop();
      }, o.endGraceMs ?? END_GRACE_MS);
    }
  });
  const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, error }));
    child.once('close', (code) => resolve({ code }));
  });
  let running = true;
  void exited.then(() => {
    running = false;
  });
  const stop = () => {
    if (!running) return;
    child.kill('SIGTERM');
    const t = setTimeout(() => {
      if (running) child.kill('SIGKILL');
    }, o.killGraceMs ?? 2000);
    void exited.then(() => clearTimeout(t));
  };
  o.signal.addEventListener('abort', stop, { once: true });
  // Armed while waiting for scanimage (its next page or its end), not while the consumer works.
  const pageTimeoutMs = o.pageTimeoutMs ?? PAGE_TIMEOUT_MS;
  let watchdog: NodeJS.Timeout | undefined;
  const waitForScanimage = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      stoppedFor ??= 'hung';
      stop();
    }, pageTimeoutMs);
  };
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
  try {
    let n = 0;
    waitForScanimage();
    for await (const line of lines) {
      clearTimeout(watchdog);
      o.signal.throwIfAborted();
      const file = line.trim();
      if (file) {
        yield { n: ++n, file };
        await rm(file, { force: true });
      }
      waitForScanimage();
    }
    const end = await exited;
    clearTimeout(watchdog);
    clearTimeout(endTimer);
    o.signal.throwIfAborted();
    if (stoppedFor === 'stuck') {
      const fault = faultOfExit(statusOfBatchEnd(tail), tail, o.device);
      if (fault) throw fault;
      return;
    }
    if (stoppedFor === 'hung')
      throw new ScanFault('io', `${o.device}: scanimage gave no page and did not end within ${pageTimeoutMs / 1000} s`);
    if (end.error)
      throw Object.assign(faultOfExit(1, `open of device failed: ${end.error.message}`, o.device)!, {
        cause: end.error,
      });
    const fault = faultOfExit(end.code, stderr, o.device);
    if (fault) throw fault;
  } finally {
    clearTimeout(watchdog);
    clearTimeout(endTimer);
    o.signal.removeEventListener('abort', stop);
    lines.close();
    stop();
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}
