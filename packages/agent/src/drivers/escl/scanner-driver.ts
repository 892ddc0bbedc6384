// ScannerDriver for eSCL (AirScan) scanners: URI `escl:http://host:port/eSCL` (or https).
// Status: GET {base}/ScannerCapabilities and GET {base}/ScannerStatus. Scanning (Mopria eSCL;
// flow in docs/printers-and-scanners.md, "eSCL scanning"): POST {base}/ScanJobs with ScanSettings → 201 + Location;
// GET {job}/NextDocument gives one page per call until 404; ScannerStatus AdfState then tells
// a finished stack (empty) from a fault (jam, open door); DELETE {job} cancels. Elements are
// read by name, so the pwg:/scan: prefixes a device picks do not matter.
//
// Quirks of real devices handled: a 503 on the first NextDocument (the scanner is still
// warming up or feeding; retried after its Retry-After), a relative Location,
// ScannerAdfProcessing for a loaded feeder (Kyocera), 409 Conflict on ScanJobs when the feeder
// is empty or another client scans, the end of the paper said with 409 instead of 404, and a
// job the device drops on its own (listed Aborted in ScannerStatus). Faults and their scan
// error codes: scan() below and docs/printers-and-scanners.md, "eSCL faults".
import { messageOf, ScanError, type ScannerStatus } from '@boxhub/protocol';
import { disconnectedScanner, ScanFault, type ScannedPage, type ScannerDriver, type ScanRequest } from '../types.ts';
import { connectionTypeFor } from '../ipp/printer-status.ts';
import { jpegInfo } from '../../media/jpeg-info.ts';
import { pause } from '../../timing/pause.ts';
import { esclRequest, type EsclResponse } from './http.ts';
import { adfFault, adfMeaning, elements, jobInfos, parseCapabilities, retryAfterMs, scanSettings } from './settings.ts';

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
  /** Longest wait a Retry-After may ask for, ms (default 30 s). */
  maxRetryAfterMs?: number;
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
    this.opts = {
      timeoutMs: 10_000,
      rejectUnauthorized: false,
      retryDelayMs: 1000,
      busyTries: 30,
      paperPollMs: 1000,
      maxRetryAfterMs: 30_000,
      ...options,
    };
  }

  private call(
    method: 'GET' | 'POST' | 'DELETE',
    url: URL,
    o: { body?: string; signal?: AbortSignal; timeoutMs?: number; maxBytes?: number } = {},
  ): Promise<EsclResponse> {
    return esclRequest({
      method,
      url,
      timeoutMs: o.timeoutMs ?? this.opts.timeoutMs,
      rejectUnauthorized: this.opts.rejectUnauthorized,
      maxBytes: o.maxBytes ?? 1 << 20,
      ...(o.body !== undefined ? { body: o.body } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
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
      const [caps, st] = await Promise.all([
        this.get('ScannerCapabilities', signal),
        this.get('ScannerStatus', signal),
      ]);
      const makeModel = elements(caps, 'MakeAndModel')[0] ?? '';
      const make = elements(caps, 'Manufacturer')[0] ?? makeModel.split(/\s+/)[0] ?? '';
      const model = makeModel.toLowerCase().startsWith(make.toLowerCase())
        ? makeModel.slice(make.length).trim()
        : makeModel;
      const resolutions = [
        ...new Set(
          elements(caps, 'XResolution')
            .map(Number)
            .filter((n) => Number.isInteger(n) && n >= 1 && n <= 4800),
        ),
      ]
        .sort((a, b) => a - b)
        .slice(0, 16);
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
      if (state === 'Idle' || state === 'Processing' || state === 'Stopped')
        s.state = state === 'Idle' ? 'idle' : state === 'Processing' ? 'processing' : 'stopped';
      if (adf) s.adf_loaded = adfMeaning(adf) === 'loaded';
      // The device's words, normalised by the server (docs/printers-and-scanners.md,
      // "Normalised state reasons"); a jam or an open door is the scanner's error_code too.
      const words = [state, adf].filter((w): w is string => !!w && /^[\w.-]{1,64}$/.test(w));
      if (words.length > 0) s.state_reasons = words;
      const fault = adfFault(adf, '');
      if (fault) {
        s.state = 'stopped';
        s.error_code =
          fault.kind === 'jammed'
            ? ScanError.jammed
            : fault.kind === 'misfeed'
              ? ScanError.misfeed
              : ScanError.cover_open;
      }
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
   * One job: the feeder until NextDocument answers 404 (or one platen page). How each answer
   * of a device maps to an outcome (docs/printers-and-scanners.md, "eSCL faults"):
   * - 503 (busy, warming up): asked again after its Retry-After (else retryDelayMs), up to
   *   busyTries; still busy when creating the job → `unavailable`, mid-job → `io`.
   * - 409 to ScanJobs: another client's job runs (State Processing, or a job listed Processing):
   *   asked again like a 503, then `unavailable`; an empty feeder: no job, no pages; a fault
   *   in AdfState: that fault.
   * - NextDocument 404: the end of the job, unless ScannerStatus then shows a fault in AdfState
   *   (jam, misfeed, open door) or lists this job Aborted/Canceled (dropped after a timeout, or
   *   cancelled at the device): `lost`.
   * - NextDocument answered otherwise (409, 500…): AdfState says a fault, or an empty feeder
   *   (the end, as some devices say it), else `io`.
   * - No answer at all once the job exists (refused, reset, timed out): `disconnected`.
   * Pages delivered before a fault stand. A fault, an abort, an error or the consumer stopping
   * early DELETEs the job on the scanner.
   */
  async *scan(req: ScanRequest, signal: AbortSignal): AsyncIterable<ScannedPage> {
    signal.throwIfAborted();
    const device = this.base.host;
    let capsXml: string;
    try {
      capsXml = await this.get('ScannerCapabilities', signal);
    } catch (e) {
      if (signal.aborted) throw e;
      throw new ScanFault('unavailable', `cannot reach the eSCL scanner at ${this.base.href}: ${messageOf(e)}`);
    }
    const plan = scanSettings(parseCapabilities(capsXml), req, device);
    if (plan.feeder) {
      const state = await this.adfState(signal).catch((e: unknown) => {
        if (signal.aborted) throw e;
        return undefined;
      });
      const fault = adfFault(state, device);
      if (fault) throw fault;
      if (adfMeaning(state) === 'empty') return;
    }
    const location = await this.createJob(plan, signal, device);
    if (location === undefined) return;
    // A relative Location (some devices send /eSCL/ScanJobs/1 or ScanJobs/1) is relative to
    // the ScanJobs URL it answered.
    const job = new URL(location, new URL('ScanJobs', this.base));
    let done = false;
    try {
      let n = 0;
      for (;;) {
        const next = new URL(`${job.pathname.replace(/\/?$/, '/')}NextDocument`, job);
        const r = await this.withBusyRetry(
          () =>
            this.call('GET', next, {
              signal,
              timeoutMs: Math.max(PAGE_TIMEOUT_MS, this.opts.timeoutMs),
              maxBytes: MAX_PAGE_BYTES,
            }),
          signal,
          'disconnected',
        );
        if (r.status === 404) break;
        if (r.status === 503)
          throw new ScanFault(
            'io',
            `GET ${next.pathname} → HTTP 503 ${this.opts.busyTries} times: the scanner stayed busy mid-job`,
          );
        if (r.status !== 200) {
          // Devices answer a jam or the end of the paper mid-stack in their own way (409,
          // 500…): the ADF state says which.
          const state = plan.feeder ? await this.adfState(signal).catch(() => undefined) : undefined;
          const fault = adfFault(state, device);
          if (fault) throw fault;
          if (plan.feeder && adfMeaning(state) === 'empty') break;
          throw new ScanFault('io', `GET ${next.pathname} → HTTP ${r.status}`);
        }
        const info = jpegInfo(r.body);
        if (!info)
          throw new ScanFault(
            'io',
            `page ${n + 1} from the scanner is not a JPEG (${r.headers['content-type'] ?? 'no content type'})`,
          );
        n++;
        const front = !plan.duplex || n % 2 === 1;
        const sheet = plan.duplex ? Math.ceil(n / 2) : n;
        signal.throwIfAborted();
        yield {
          sheet,
          front,
          dpi: req.resolution,
          width: info.width,
          height: info.height,
          image: { format: 'jpeg', data: r.body },
        };
        if (!plan.feeder) break;
      }
      await this.checkEnd(job, plan.feeder, device, signal);
      done = true;
    } finally {
      if (!done) {
        // Best effort, not bound to the (maybe aborted) signal: the scanner must let go.
        await this.call('DELETE', job, { timeoutMs: 5000 }).catch(() => undefined);
      }
    }
  }

  /** POST ScanJobs: the job's Location, or undefined when an empty feeder means no job. */
  private async createJob(
    plan: { xml: string; feeder: boolean },
    signal: AbortSignal,
    device: string,
  ): Promise<string | undefined> {
    for (let i = 1; ; i++) {
      const created = await this.withBusyRetry(
        () => this.call('POST', new URL('ScanJobs', this.base), { body: plan.xml, signal }),
        signal,
        'unavailable',
      );
      if (created.status === 503)
        throw new ScanFault('unavailable', `${device} stayed busy (503 to ScanJobs ${this.opts.busyTries} times)`);
      if (created.status === 409) {
        // Conflict: another client's job, an empty feeder, or a fault; the status says which.
        const st = await this.get('ScannerStatus', signal).catch((e: unknown) => {
          if (signal.aborted) throw e;
          return '';
        });
        const adf = elements(st, 'AdfState')[0];
        const fault = adfFault(adf, device);
        if (fault) throw fault;
        const busy = elements(st, 'State')[0] === 'Processing' || jobInfos(st).some((j) => j.state === 'Processing');
        if (!busy && plan.feeder && adfMeaning(adf) === 'empty') return undefined;
        if (i >= this.opts.busyTries)
          throw new ScanFault(
            'unavailable',
            busy
              ? `${device} is busy with another scan job (409 Conflict to ScanJobs)`
              : `${device} refused the scan job (409 Conflict)`,
          );
        if (!(await pause(this.opts.retryDelayMs, signal))) throw signal.reason;
        continue;
      }
      const location = created.headers.location;
      if (created.status !== 201 || !location)
        throw new ScanFault(
          'unavailable',
          `POST ScanJobs → HTTP ${created.status}${location ? '' : ' without a Location'}`,
        );
      return location;
    }
  }

  /**
   * After NextDocument's 404: a fault in AdfState (a jam also ends the job with 404), or the
   * device listing this job as aborted or cancelled (it dropped it), is not the end of the stack.
   */
  private async checkEnd(job: URL, feeder: boolean, device: string, signal: AbortSignal): Promise<void> {
    const st = await this.get('ScannerStatus', signal).catch((e: unknown) => {
      if (signal.aborted) throw e;
      return undefined;
    });
    if (st === undefined) return;
    if (feeder) {
      const fault = adfFault(elements(st, 'AdfState')[0], device);
      if (fault) throw fault;
    }
    const mine = jobInfos(st).find(
      (j) =>
        j.uri !== '' &&
        job.pathname.replace(/\/$/, '').endsWith(j.uri.replace(/^https?:\/\/[^/]+/, '').replace(/\/$/, '')),
    );
    if (mine && (mine.state === 'Aborted' || mine.state === 'Canceled')) {
      throw new ScanFault(
        'lost',
        `${device} ended the scan job itself (${mine.state}${mine.reasons.length ? `: ${mine.reasons.join(', ')}` : ''}) before the feeder was empty`,
      );
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

  /**
   * Repeats a request the scanner answers 503 (busy, warming up), after its Retry-After when
   * it gives one (capped at maxRetryAfterMs), up to busyTries. A request that gets no answer
   * is ScanFault(`failKind`): before the job exists the scanner is unavailable, after it the
   * scanner went away.
   */
  private async withBusyRetry(
    send: () => Promise<EsclResponse>,
    signal: AbortSignal,
    failKind: 'unavailable' | 'disconnected',
  ): Promise<EsclResponse> {
    for (let i = 1; ; i++) {
      let r: EsclResponse;
      try {
        r = await send();
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        throw new ScanFault(failKind, `the scanner did not answer: ${messageOf(e)}`);
      }
      if (r.status !== 503 || i >= this.opts.busyTries) return r;
      const after = retryAfterMs(r.headers['retry-after']);
      const wait =
        after !== undefined && after > 0 ? Math.min(after, this.opts.maxRetryAfterMs) : this.opts.retryDelayMs;
      if (!(await pause(wait, signal))) throw signal.reason;
    }
  }
}
