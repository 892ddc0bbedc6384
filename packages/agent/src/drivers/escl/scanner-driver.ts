// ScannerDriver for eSCL (AirScan) scanners: URI `escl:http://host:port/eSCL` (or https).
// Status: GET {base}/ScannerCapabilities and GET {base}/ScannerStatus. Scanning (Mopria eSCL;
// flow in design/device-notes.md): POST {base}/ScanJobs with ScanSettings → 201 + Location;
// GET {job}/NextDocument gives one page per call until 404; ScannerStatus AdfState then tells
// a finished stack (empty) from a fault (jam, open door); DELETE {job} cancels. Elements are
// read by name, so the pwg:/scan: prefixes a device picks do not matter.
//
// Quirks of real devices handled: a 503 on the first NextDocument (the scanner is still
// warming up or feeding; retried), a relative Location, ScannerAdfProcessing for a loaded
// feeder (Kyocera), 409 Conflict on ScanJobs when the feeder is empty.
import { ScanError, type ScannerStatus } from '@boxhub/protocol';
import { disconnectedScanner, ScanFault, type ScannedPage, type ScannerDriver, type ScanRequest } from '../types.ts';
import { connectionTypeFor } from '../ipp/printer-status.ts';
import { jpegInfo } from '../../scan/jpeg-info.ts';
import { pause } from '../../link/pause.ts';
import { esclRequest, type EsclResponse } from './http.ts';
import { adfFault, adfMeaning, elements, parseCapabilities, scanSettings } from './settings.ts';

export { elements } from './settings.ts';

export interface EsclScannerDriverOptions {
  /** Per request, ms (default 10 s; a NextDocument waits for a page to be scanned: 60 s). */
  timeoutMs?: number;
  rejectUnauthorized?: boolean;
  /** Wait between tries when the scanner answers 503 Service Unavailable, ms (default 1000). */
  retryDelayMs?: number;
  /** Tries of a request answered 503 before the scan fails (default 30). */
  busyTries?: number;
  /** Continuous mode: ScannerStatus poll interval while waiting for paper, ms (default 1000). */
  paperPollMs?: number;
}

const PAGE_TIMEOUT_MS = 60_000;
const MAX_PAGE_BYTES = 256 * 1024 * 1024;

export class EsclScannerDriver implements ScannerDriver {
  readonly uri: string;
  private readonly base: URL;
  private readonly opts: Required<EsclScannerDriverOptions>;

  constructor(uri: string, options: EsclScannerDriverOptions = {}) {
    if (!/^escl:https?:\/\//.test(uri)) throw new TypeError(`not an escl:http(s)://… URI: ${uri}`);
    this.uri = uri;
    this.base = new URL(uri.slice('escl:'.length).replace(/\/?$/, '/'));
    this.opts = { timeoutMs: 10_000, rejectUnauthorized: false, retryDelayMs: 1000, busyTries: 30, paperPollMs: 1000, ...options };
  }

  private call(method: 'GET' | 'POST' | 'DELETE', url: URL, o: { body?: string; signal?: AbortSignal; timeoutMs?: number; maxBytes?: number } = {}): Promise<EsclResponse> {
    return esclRequest({
      method, url, timeoutMs: o.timeoutMs ?? this.opts.timeoutMs, rejectUnauthorized: this.opts.rejectUnauthorized, maxBytes: o.maxBytes ?? 1 << 20,
      ...(o.body !== undefined ? { body: o.body } : {}), ...(o.signal ? { signal: o.signal } : {}),
    });
  }

  private async get(path: string, signal?: AbortSignal): Promise<string> {
    const url = new URL(path, this.base);
    const r = await this.call('GET', url, signal ? { signal } : {});
    if (r.status !== 200) throw new Error(`GET ${url} → HTTP ${r.status}`);
    return r.body.toString('utf8');
  }

  private async adfState(signal?: AbortSignal): Promise<string | undefined> {
    return elements(await this.get('ScannerStatus', signal), 'AdfState')[0];
  }

  async status(signal?: AbortSignal): Promise<ScannerStatus> {
    const ipp = `ipp://${this.base.host}/`;
    try {
      const [caps, st] = await Promise.all([this.get('ScannerCapabilities', signal), this.get('ScannerStatus', signal)]);
      const makeModel = elements(caps, 'MakeAndModel')[0] ?? '';
      const make = elements(caps, 'Manufacturer')[0] ?? makeModel.split(/\s+/)[0] ?? '';
      const model = makeModel.toLowerCase().startsWith(make.toLowerCase()) ? makeModel.slice(make.length).trim() : makeModel;
      const resolutions = [...new Set(elements(caps, 'XResolution').map(Number).filter((n) => Number.isInteger(n) && n >= 1 && n <= 4800))].sort((a, b) => a - b).slice(0, 16);
      const state = elements(st, 'State')[0];
      const adf = elements(st, 'AdfState')[0];
      const s: ScannerStatus = {
        connected: true,
        supported: resolutions.length > 0 && /<(?:[\w.-]+:)?(?:Platen|Adf)[\s>]/.test(caps),
        connection_type: connectionTypeFor(ipp),
        duplex: /<(?:[\w.-]+:)?AdfDuplexInputCaps[\s>]/.test(caps),
        resolutions,
      };
      if (make) s.make = make.slice(0, 128);
      if (model) s.model = model.slice(0, 128);
      if (state === 'Idle' || state === 'Processing' || state === 'Stopped') s.state = state === 'Idle' ? 'idle' : state === 'Processing' ? 'processing' : 'stopped';
      if (adf) s.adf_loaded = adfMeaning(adf) === 'loaded';
      // The device's words, normalised by the server (docs/printers-and-scanners.md,
      // "Normalised state reasons"); a jam or an open door is the scanner's error_code too.
      const words = [state, adf].filter((w): w is string => !!w && /^[\w.-]{1,64}$/.test(w));
      if (words.length > 0) s.state_reasons = words;
      const fault = adfFault(adf, '');
      if (fault) { s.state = 'stopped'; s.error_code = fault.kind === 'jammed' ? ScanError.jammed : ScanError.cover_open; }
      return s;
    } catch (e) {
      if (signal?.aborted) throw e;
      return { ...disconnectedScanner, connection_type: connectionTypeFor(ipp) };
    }
  }

  async close(): Promise<void> {
    // agent: false: no pooled sockets to free.
  }

  /**
   * One job: the feeder until NextDocument answers 404 (or one platen page). After the last
   * page ScannerStatus tells an empty feeder (done) from a jam or an open door (ScanFault,
   * after the pages before it). A fault, an abort, an error or the consumer stopping early
   * DELETEs the job on the scanner.
   */
  async *scan(req: ScanRequest, signal: AbortSignal): AsyncIterable<ScannedPage> {
    signal.throwIfAborted();
    const device = this.base.host;
    let capsXml: string;
    try {
      capsXml = await this.get('ScannerCapabilities', signal);
    } catch (e) {
      if (signal.aborted) throw e;
      throw new ScanFault('unavailable', `cannot reach the eSCL scanner at ${this.base.href}: ${(e as Error).message}`);
    }
    const plan = scanSettings(parseCapabilities(capsXml), req, device);
    if (plan.feeder) {
      const state = await this.adfState(signal).catch((e: unknown) => { if (signal.aborted) throw e; return undefined; });
      const fault = adfFault(state, device);
      if (fault) throw fault;
      if (adfMeaning(state) === 'empty') return;
    }
    const created = await this.withBusyRetry(() => this.call('POST', new URL('ScanJobs', this.base), { body: plan.xml, signal }), signal);
    if (created.status === 409 && plan.feeder) {
      // Conflict: most devices answer so for an empty feeder; a fault shows in the status.
      const fault = adfFault(await this.adfState(signal).catch(() => undefined), device);
      if (fault) throw fault;
      return;
    }
    const location = created.headers.location;
    if (created.status !== 201 || !location) throw new ScanFault('io', `POST ScanJobs → HTTP ${created.status}${location ? '' : ' without a Location'}`);
    // A relative Location (some devices send /eSCL/ScanJobs/1 or ScanJobs/1) is relative to
    // the ScanJobs URL it answered.
    const job = new URL(location, new URL('ScanJobs', this.base));
    let done = false;
    try {
      let n = 0;
      for (;;) {
        const next = new URL(`${job.pathname.replace(/\/?$/, '/')}NextDocument`, job);
        const r = await this.withBusyRetry(() => this.call('GET', next, { signal, timeoutMs: Math.max(PAGE_TIMEOUT_MS, this.opts.timeoutMs), maxBytes: MAX_PAGE_BYTES }), signal);
        if (r.status === 404) break;
        if (r.status !== 200) {
          // Devices answer a jam mid-stack in their own way (409, 500…): the ADF state says which.
          const fault = plan.feeder ? adfFault(await this.adfState(signal).catch(() => undefined), device) : undefined;
          throw fault ?? new ScanFault('io', `GET ${next.pathname} → HTTP ${r.status}`);
        }
        const info = jpegInfo(r.body);
        if (!info) throw new ScanFault('io', `page ${n + 1} from the scanner is not a JPEG (${r.headers['content-type'] ?? 'no content type'})`);
        n++;
        const front = !plan.duplex || n % 2 === 1;
        const sheet = plan.duplex ? Math.ceil(n / 2) : n;
        signal.throwIfAborted();
        yield { sheet, front, dpi: req.resolution, width: info.width, height: info.height, image: { format: 'jpeg', data: r.body } };
        if (!plan.feeder) break;
      }
      if (plan.feeder) {
        // A jam ends the job like an empty feeder does (404): the ADF state tells them apart.
        const fault = adfFault(await this.adfState(signal).catch((e: unknown) => { if (signal.aborted) throw e; return undefined; }), device);
        if (fault) throw fault;
      }
      done = true;
    } finally {
      if (!done) {
        // Best effort, not bound to the (maybe aborted) signal: the scanner must let go.
        await this.call('DELETE', job, { timeoutMs: 5000 }).catch(() => undefined);
      }
    }
  }

  /**
   * Continuous mode: polls ScannerStatus every paperPollMs until AdfState says the feeder is
   * loaded (ScannerAdfLoaded or ScannerAdfProcessing). Resolves false at `timeoutMs` (0: none)
   * or when the signal aborts. An unreachable scanner is polled on.
   */
  async waitForPaper(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
    for (;;) {
      if (signal.aborted) return false;
      const state = await this.adfState(signal).catch(() => undefined);
      if (adfMeaning(state) === 'loaded') return true;
      const wait = Math.min(this.opts.paperPollMs, deadline - Date.now());
      if (wait <= 0) return false;
      if (!(await pause(wait, signal))) return false;
    }
  }

  /** Repeats a request the scanner answers 503 (busy, warming up) a few times. */
  private async withBusyRetry(send: () => Promise<EsclResponse>, signal: AbortSignal): Promise<EsclResponse> {
    for (let i = 1; ; i++) {
      let r: EsclResponse;
      try {
        r = await send();
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        throw new ScanFault('io', (e as Error).message);
      }
      if (r.status !== 503 || i >= this.opts.busyTries) return r;
      if (!(await pause(this.opts.retryDelayMs, signal))) throw signal.reason;
    }
  }
}
