// ScannerDriver for SANE devices through scanimage: URI `sane:<device-name>`, e.g. `sane:test`,
// `sane:epson2:libusb:001:004`, `sane:airscan:e0:Kyocera`.
//
// Scanning runs one `scanimage --batch` per scan() call and streams its pages as they are
// written (batch.ts); options come from the device's own option list (plan.ts). Pages are
// encoded to JPEG here, at the task's quality, straight from scanimage's TIFF file by libvips:
// the raw page never enters the JavaScript heap, and the pipeline passes the JPEG through.
import { messageOf, ScanError, type ScannerStatus } from '@boxhub/protocol';
import { disconnectedScanner, ScanFault, type ScannedPage, type ScannerDriver, type ScanRequest } from '../types.ts';
import { jpegOptions, loadSharp } from '../../media/page-image.ts';
import { pause } from '../../timing/pause.ts';
import { scanimageBatch } from './batch.ts';
import { listValues, parseOptions, resolutionsOf, type SaneOption } from './options.ts';
import { paperSensor, planScan } from './plan.ts';
import { runScanimage, type RunOptions } from './run-scanimage.ts';

export interface SaneScannerDriverOptions {
  /** Environment for scanimage, e.g. SANE_CONFIG_DIR. */
  env?: NodeJS.ProcessEnv;
  /** Per-command timeout; `scanimage -L` probes every backend, seconds on a real box. */
  timeoutMs?: number;
  bin?: string;
  /** Parent directory of each scan's temp directory (page files); default the OS temp dir. */
  tmpDir?: string;
  /** scanimage options added to every scan, after the driver's own (e.g. `--page-height 297`). */
  extraArgs?: string[];
  /** Continuous mode: how often waitForPaper looks (reads the paper sensor, or, without one,
   *  lets the job try a scan), ms. Default 2000. */
  paperPollMs?: number;
  /** A scan's longest wait for scanimage's next page or its end, ms (batch.ts, PAGE_TIMEOUT_MS). */
  pageTimeoutMs?: number;
  /** From SIGTERM to SIGKILL when a scan is stopped, ms (default 2000). */
  killGraceMs?: number;
  /** Longest wait for scanimage to exit after "Batch terminated", ms (batch.ts, END_GRACE_MS). */
  endGraceMs?: number;
}

export interface SaneDevice {
  name: string;
  vendor: string;
  model: string;
  type: string;
}

/** `scanimage -L` in a tab-separated format (the -f/--formatted-device-list directives). */
export async function listSaneDevices(o: RunOptions = {}): Promise<SaneDevice[]> {
  const r = await runScanimage(['--formatted-device-list=%d\t%v\t%m\t%t%n'], o);
  if (r.code !== 0) return [];
  return r.stdout
    .split('\n')
    .filter((l) => l.includes('\t'))
    .map((l) => {
      const [name = '', vendor = '', model = '', type = ''] = l.split('\t');
      return { name, vendor, model, type };
    });
}

/**
 * The SANE backend names the link: `test` is virtual; network backends (net, airscan, escl)
 * or a device name holding `net:`, `/net/`, or an IP address are network; the rest
 * (libusb:, usb, pixma serials, fujitsu…) are USB.
 */
export function saneConnectionType(device: string): 'usb' | 'network' | 'virtual' {
  const backend = device.split(':')[0] ?? '';
  if (backend === 'test') return 'virtual';
  if (['net', 'airscan', 'escl'].includes(backend) || /(^|[:/])net[:/]|\b\d{1,3}(\.\d{1,3}){3}\b|https?:/.test(device))
    return 'network';
  return 'usb';
}

export class SaneScannerDriver implements ScannerDriver {
  readonly uri: string;
  readonly device: string;
  private readonly run: RunOptions;
  private identity: SaneDevice | undefined;
  private readonly o: SaneScannerDriverOptions;
  /** The last status read while idle: reported (as processing) while a scan holds the device. */
  private last: ScannerStatus | undefined;
  private scanning = false;
  /** SANE reports a jam or an open cover only to the scan it ends (there is no status call
   *  for it): the fault stands in status() until the next scan starts
   *  (docs/printers-and-scanners.md, "Normalised state reasons"). */
  private fault: { code: number; status: string } | undefined;

  constructor(uri: string, options: SaneScannerDriverOptions = {}) {
    if (!uri.startsWith('sane:') || uri.length <= 5) throw new TypeError(`not a sane:<device> URI: ${uri}`);
    this.uri = uri;
    this.device = uri.slice('sane:'.length);
    this.o = options;
    this.run = { timeoutMs: options.timeoutMs ?? 20_000 };
    if (options.env) this.run.env = options.env;
    if (options.bin) this.run.bin = options.bin;
  }

  private statusFrom(opts: Map<string, SaneOption>): ScannerStatus {
    const sources = listValues(opts.get('source'));
    const resolutions = resolutionsOf(opts.get('resolution'));
    const s: ScannerStatus = {
      connected: true,
      // Driveable = scanimage can set a resolution and a colour mode on it.
      supported: resolutions.length > 0 && opts.has('mode'),
      connection_type: saneConnectionType(this.device),
      state: 'idle',
      error_code: 0,
      // Duplex shows as a source ("ADF Duplex") or an option (--duplex, --adf-mode Duplex).
      duplex:
        sources.some((v) => /duplex/i.test(v)) ||
        opts.has('duplex') ||
        listValues(opts.get('adf-mode')).some((v) => /duplex/i.test(v)),
      resolutions,
    };
    // adf_loaded only from a paper sensor: most SANE backends cannot tell (plan.ts).
    const sensor = paperSensor(opts);
    if (sensor) s.adf_loaded = sensor.loaded;
    if (this.identity) {
      s.make = this.identity.vendor.slice(0, 128);
      s.model = this.identity.model.slice(0, 128);
    }
    this.last = s;
    if (this.fault) return { ...s, state: 'stopped', error_code: this.fault.code, state_reasons: [this.fault.status] };
    return s;
  }

  /** The device's options (`scanimage -d DEV -A`); undefined when it cannot be opened. */
  private async options(signal?: AbortSignal): Promise<Map<string, SaneOption> | undefined> {
    const r = await runScanimage(['-d', this.device, '-A'], signal ? { ...this.run, signal } : this.run);
    return r.code === 0 ? parseOptions(r.stdout) : undefined;
  }

  /**
   * -L for make/model (cached once found), -A to prove the device opens and read its options.
   * While a scan runs the device is held by its scanimage (a USB scanner cannot be opened
   * twice): the last status is reported with state processing instead.
   */
  async status(signal?: AbortSignal): Promise<ScannerStatus> {
    if (this.scanning && this.last) return { ...this.last, state: 'processing' };
    const ro: RunOptions = signal ? { ...this.run, signal } : this.run;
    try {
      if (!this.identity) {
        const list = await listSaneDevices(ro);
        // `sane:test` names the backend; -L lists its devices as test:0, test:1.
        this.identity =
          list.find((d) => d.name === this.device) ?? list.find((d) => d.name.startsWith(`${this.device}:`));
      }
      const r = await runScanimage(['-d', this.device, '-A'], ro);
      if (r.code !== 0) return { ...disconnectedScanner, connection_type: saneConnectionType(this.device) };
      return this.statusFrom(parseOptions(r.stdout));
    } catch (e) {
      if (signal?.aborted) throw e;
      return { ...disconnectedScanner, connection_type: saneConnectionType(this.device) };
    }
  }

  async close(): Promise<void> {
    // Nothing held between calls: each status() runs its own short-lived scanimage.
  }

  /**
   * One scanimage batch: the feeder until it is empty (NO_DOCS ends it, no fault), or one
   * flatbed page. JAMMED and COVER_OPEN end it with a ScanFault after the pages before them.
   * Duplex devices deliver front, back, front, back…; a duplex request on a simplex device
   * scans the fronts.
   */
  async *scan(req: ScanRequest, signal: AbortSignal): AsyncIterable<ScannedPage> {
    signal.throwIfAborted();
    if (this.scanning) throw new ScanFault('io', `${this.device} is busy with another scan`);
    this.scanning = true;
    this.fault = undefined;
    try {
      let opts: Map<string, SaneOption> | undefined;
      try {
        opts = await this.options(signal);
      } catch (e) {
        if (signal.aborted) throw e;
        throw new ScanFault('unavailable', `cannot reach ${this.device}: ${messageOf(e)}`);
      }
      if (!opts) throw new ScanFault('unavailable', `cannot open ${this.device}`);
      this.statusFrom(opts);
      const plan = planScan(opts, req, this.device);
      const batch = scanimageBatch({
        device: this.device,
        plan,
        signal,
        ...(this.run.env ? { env: this.run.env } : {}),
        ...(this.run.bin ? { bin: this.run.bin } : {}),
        ...(this.o.tmpDir ? { tmpDir: this.o.tmpDir } : {}),
        ...(this.o.extraArgs ? { extraArgs: this.o.extraArgs } : {}),
        ...(this.o.pageTimeoutMs ? { pageTimeoutMs: this.o.pageTimeoutMs } : {}),
        ...(this.o.killGraceMs ? { killGraceMs: this.o.killGraceMs } : {}),
        ...(this.o.endGraceMs ? { endGraceMs: this.o.endGraceMs } : {}),
      });
      for await (const p of batch) {
        const front = !plan.duplex || p.n % 2 === 1;
        if (!front && !req.duplex) continue;
        const sheet = plan.duplex ? Math.ceil(p.n / 2) : p.n;
        let page: ScannedPage;
        try {
          const s = (await loadSharp())(p.file, { sequentialRead: true }).toColourspace(
            req.color === 'grayscale' ? 'b-w' : 'srgb',
          );
          const { data, info } = await s.jpeg(jpegOptions(req.jpegQuality)).toBuffer({ resolveWithObject: true });
          page = {
            sheet,
            front,
            dpi: req.resolution,
            width: info.width,
            height: info.height,
            image: { format: 'jpeg', data, quality: req.jpegQuality },
          };
        } catch (e) {
          throw new ScanFault('io', `page ${p.n} from scanimage is unreadable: ${messageOf(e)}`);
        }
        signal.throwIfAborted();
        yield page;
      }
    } catch (e) {
      if (e instanceof ScanFault && (e.kind === 'jammed' || e.kind === 'cover-open')) {
        this.fault =
          e.kind === 'jammed'
            ? { code: ScanError.jammed, status: 'SANE_STATUS_JAMMED' }
            : { code: ScanError.cover_open, status: 'SANE_STATUS_COVER_OPEN' };
      }
      throw e;
    } finally {
      this.scanning = false;
    }
  }

  /**
   * Continuous mode. A device with a paper sensor (plan.ts PAPER_SENSORS) is read every
   * paperPollMs until it reports paper. Without one (most backends, and the test backend) the
   * driver cannot tell: it resolves true every paperPollMs so the job tries a scan, which
   * delivers no page while the feeder is empty (scanimage ends the batch with NO_DOCS); the
   * job keeps its own continuous_wait deadline across these tries. Resolves false at
   * `timeoutMs` (0: none) or when the signal aborts.
   */
  async waitForPaper(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const poll = this.o.paperPollMs ?? 2000;
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
    for (;;) {
      if (signal.aborted) return false;
      let opts: Map<string, SaneOption> | undefined;
      try {
        opts = await this.options(signal);
      } catch {
        if (signal.aborted) return false;
      }
      const sensor = opts ? paperSensor(opts) : undefined;
      if (sensor?.loaded) return true;
      const wait = Math.min(poll, deadline - Date.now());
      if (wait <= 0) return false;
      if (!(await pause(wait, signal))) return false;
      if (opts && !sensor) return Date.now() < deadline;
    }
  }
}
