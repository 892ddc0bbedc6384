// A virtual duplex ADF scanner for the simulator, the tests and the demo.
//
// URI `sim:?opt=value&…`:
//   make, model       identity (default boxhub / Sim Duplex ADF)
//   connected=0       reports connected:false and refuses to scan
//   paper=N           N sheets in the feeder at start (text front, `back` back); default 0
//   back=blank|text   the back of those sheets (default blank)
//   refill=S          S seconds after the feeder runs empty it holds `paper` sheets again (the demo)
//   ppm=N             pages per minute: each page takes 60/N s (default: as fast as possible)
//   fault=jammed|cover-open   starts in that fault
//   jam=N             jams after N more sheets (the next sheet stays in the feeder)
//   format=jpeg|raw|png   how pages are handed over (default jpeg, at the task's quality)
//   log=FILE          appends a JSON line per side handed over ({task, sheet, front, at}), written
//                     before the box sees the page: what the scanner produced, for a checker
//                     that compares it with the items the server recorded (docs/chaos.md)
//
// At run time: load(sheets) puts paper in the feeder (generated sides or given JPEG/PNG images,
// e.g. filled feedback cards), unload() takes it out, setFault()/jamAfter() cause faults.
import { EventEmitter } from 'node:events';
import { appendFileSync, existsSync } from 'node:fs';
import type { ScannerStatus } from '@boxhub/protocol';
import { NotSupportedError, ScanFault, type ScannedPage, type ScannerDriver, type ScanRequest } from '../types.ts';
import { isSimScannerFault, SCANNER_STATUS_ERRORS, simScannerFaults, type SimScannerFault } from './faults.ts';
import {
  generatedOf,
  imageBytes,
  imageKind,
  renderGenerated,
  renderGiven,
  type PageImage,
  type SimPageFormat,
  type SimSheet,
  type SimSide,
} from './pages.ts';
import { messageOf } from '@boxhub/protocol/caught.ts';

export type { SimLook, SimPageFormat, SimSheet, SimSide } from './pages.ts';

export const SIM_RESOLUTIONS = [100, 150, 200, 240, 300, 400, 600];

export interface SimScannerOptions {
  /** Waits `ms` (pacing); rejects when the signal aborts. Tests inject their own. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Rendered generated pages kept for reuse (the same look at the same settings draws the same
 *  page): a few MB at 200 dpi, bounded so a 600 dpi demo does not grow without end. */
const CACHE_BYTES = 32 * 1024 * 1024;

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function intParam(q: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new TypeError(`sim scanner URI: ${name} must be an integer ${min}-${max}, not '${v}'`);
  return n;
}

export class SimScanner implements ScannerDriver {
  readonly uri: string;
  readonly make: string;
  readonly model: string;
  readonly format: SimPageFormat;
  /** Pages per minute, or undefined for no pacing. */
  readonly ppm: number | undefined;
  /** Where each side handed over is logged, or undefined. */
  readonly log: string | undefined;
  private readonly events = new EventEmitter();
  private readonly sleep: NonNullable<SimScannerOptions['sleep']>;
  private readonly feeder: SimSheet[] = [];
  private readonly refillSheets: SimSheet[];
  private readonly refillMs: number | undefined;
  private refillTimer: NodeJS.Timeout | undefined;
  private fault: SimScannerFault | null = null;
  private armed: { sheets: number; fault: SimScannerFault } | undefined;
  private connected = true;
  private scanning = false;
  /** Sheets fed since the start: varies the generated text from sheet to sheet. */
  private fed = 0;
  private readonly cache = new Map<string, PageImage>();
  private cacheBytes = 0;

  constructor(uri: string, options: SimScannerOptions = {}) {
    this.uri = uri;
    const q = new URLSearchParams(uri.replace(/^sim:\/*/, '').replace(/^[^?]*\?/, ''));
    this.make = q.get('make') ?? 'boxhub';
    this.model = q.get('model') ?? 'Sim Duplex ADF';
    if (q.get('connected') === '0') this.connected = false;
    const back = q.get('back') ?? 'blank';
    if (back !== 'blank' && back !== 'text')
      throw new TypeError(`sim scanner URI: back must be blank or text, not '${back}'`);
    const paper = intParam(q, 'paper', 0, 10_000) ?? 0;
    this.refillSheets = Array.from({ length: paper }, () => ({ front: 'text', back }));
    this.load(this.refillSheets);
    const refill = q.get('refill');
    if (refill !== null) {
      const s = Number(refill);
      if (!(s > 0 && s <= 86_400))
        throw new TypeError(`sim scanner URI: refill must be seconds (0-86400], not '${refill}'`);
      if (paper === 0) throw new TypeError('sim scanner URI: refill needs paper=N (the sheets to refill with)');
      this.refillMs = s * 1000;
    }
    this.ppm = intParam(q, 'ppm', 1, 10_000);
    const fault = q.get('fault');
    if (fault !== null) {
      if (!isSimScannerFault(fault))
        throw new TypeError(`sim scanner URI: fault must be ${simScannerFaults.join(' or ')}, not '${fault}'`);
      this.fault = fault;
    }
    const jam = intParam(q, 'jam', 0, 10_000);
    if (jam !== undefined) this.armed = { sheets: jam, fault: 'jammed' };
    const format = q.get('format') ?? 'jpeg';
    if (format !== 'jpeg' && format !== 'raw' && format !== 'png')
      throw new TypeError(`sim scanner URI: format must be jpeg, raw or png, not '${format}'`);
    this.format = format;
    this.log = q.get('log') ?? undefined;
    this.sleep = options.sleep ?? abortableSleep;
  }

  /** Sheets in the feeder now. */
  get sheets(): number {
    return this.feeder.length;
  }

  /**
   * Puts sheets on top of what the feeder holds (scanned after it). A side is 'text', 'blank',
   * a look ({text}, {blank}) or a given image ({image: path or bytes, dpi?}); a sheet given as a
   * side alone has a blank back. Image paths must exist and bytes must be JPEG or PNG.
   */
  load(sheets: number | readonly (SimSheet | SimSide)[]): void {
    const list: SimSheet[] =
      typeof sheets === 'number'
        ? Array.from({ length: sheets }, () => ({ front: 'text' }))
        : sheets.map((s) => (typeof s === 'object' && 'front' in s ? s : { front: s }));
    for (const sh of list)
      for (const side of [sh.front, sh.back]) {
        if (side === undefined || typeof side === 'string') continue;
        if ('image' in side) {
          if (typeof side.image === 'string') {
            if (!existsSync(side.image)) throw new TypeError(`sheet image ${side.image} does not exist`);
          } else if (!imageKind(side.image)) throw new TypeError('a sheet image must be the bytes of a JPEG or a PNG');
          if (side.dpi !== undefined && !(side.dpi > 0))
            throw new TypeError(`sheet image dpi must be positive, not ${side.dpi}`);
        }
      }
    if (list.length === 0) return;
    const wasEmpty = this.feeder.length === 0;
    this.feeder.push(...list);
    if (this.refillTimer) {
      clearTimeout(this.refillTimer);
      this.refillTimer = undefined;
    }
    if (wasEmpty) this.changed();
    this.events.emit('paper');
  }

  /** Takes every sheet out of the feeder. */
  unload(): void {
    if (this.feeder.length === 0) return;
    this.feeder.length = 0;
    this.changed();
  }

  /** Switches a fault on now (a scan stops before its next sheet) or off (null). */
  setFault(fault: SimScannerFault | null): void {
    this.fault = fault;
    if (fault === null) this.armed = undefined;
    this.changed();
  }

  /** Arms a fault that strikes when `sheets` more sheets have been fed; that sheet stays in the
   *  feeder. */
  jamAfter(sheets: number, fault: SimScannerFault = 'jammed'): void {
    if (!Number.isInteger(sheets) || sheets < 0)
      throw new TypeError(`jamAfter needs a whole number of sheets, not ${sheets}`);
    this.armed = { sheets, fault };
  }

  setConnected(connected: boolean): void {
    this.connected = connected;
    this.changed();
  }

  async status(): Promise<ScannerStatus> {
    if (!this.connected) return { connected: false, supported: false };
    return {
      connected: true,
      supported: true,
      make: this.make,
      model: this.model,
      connection_type: 'virtual',
      state: this.fault ? 'stopped' : this.scanning ? 'processing' : 'idle',
      error_code: this.fault ? SCANNER_STATUS_ERRORS[this.fault] : 0,
      adf_loaded: this.feeder.length > 0,
      duplex: true,
      resolutions: [...SIM_RESOLUTIONS],
    };
  }

  watch(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async *scan(req: ScanRequest, signal: AbortSignal): AsyncIterable<ScannedPage> {
    signal.throwIfAborted();
    if (!this.connected) throw new ScanFault('unavailable', 'the scanner is not connected');
    if (!SIM_RESOLUTIONS.includes(req.resolution))
      throw new NotSupportedError(
        `${this.model} cannot scan at ${req.resolution} dpi (it has ${SIM_RESOLUTIONS.join(', ')})`,
      );
    if (this.scanning) throw new ScanFault('io', 'the scanner is busy with another scan');
    this.scanning = true;
    this.changed();
    try {
      let sheet = 0;
      while (this.feeder.length > 0) {
        signal.throwIfAborted();
        this.checkFault();
        if (this.armed && this.armed.sheets-- === 0) {
          // The armed fault strikes on this sheet, which stays in the feeder.
          this.fault = this.armed.fault;
          this.armed = undefined;
          this.changed();
          this.checkFault();
        }
        const s = this.feeder.shift();
        if (s === undefined) break;
        sheet++;
        this.fed++;
        if (this.feeder.length === 0) this.changed();
        const sides: [SimSide, boolean][] = req.duplex
          ? [
              [s.front, true],
              [s.back ?? 'blank', false],
            ]
          : [[s.front, true]];
        for (const [side, front] of sides) {
          if (this.ppm) await this.sleep(60_000 / this.ppm, signal);
          const img = await this.render(side, req);
          signal.throwIfAborted();
          if (this.log)
            appendFileSync(this.log, `${JSON.stringify({ task: req.task ?? null, sheet, front, at: Date.now() })}\n`);
          yield { sheet, front, dpi: req.resolution, ...img };
        }
      }
    } finally {
      this.scanning = false;
      this.changed();
      this.scheduleRefill();
    }
  }

  /**
   * Resolves true as soon as the feeder holds paper (at once when it does), false after
   * `timeoutMs` (0: no time limit) or when the signal aborts.
   */
  waitForPaper(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    if (this.feeder.length > 0) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        this.events.off('paper', onPaper);
        signal.removeEventListener('abort', onAbort);
        if (timer) clearTimeout(timer);
        resolve(v);
      };
      const onPaper = () => done(true);
      const onAbort = () => done(false);
      const timer = timeoutMs > 0 ? setTimeout(() => done(false), timeoutMs) : undefined;
      this.events.on('paper', onPaper);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    if (this.refillTimer) clearTimeout(this.refillTimer);
    this.events.removeAllListeners();
    this.cache.clear();
  }

  private checkFault(): void {
    if (this.fault === 'jammed') throw new ScanFault('jammed', 'paper jam in the feeder');
    if (this.fault === 'cover-open') throw new ScanFault('cover-open', 'the feeder cover is open');
  }

  private changed(): void {
    this.events.emit('change');
  }

  private scheduleRefill(): void {
    if (this.refillMs === undefined || this.feeder.length > 0 || this.refillTimer) return;
    // Not unref'd: someone waiting for paper (continuous mode) waits for this timer; close() ends it.
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.load(this.refillSheets);
    }, this.refillMs);
  }

  private async render(side: SimSide, req: ScanRequest): Promise<PageImage> {
    const o = { dpi: req.resolution, color: req.color, quality: req.jpegQuality, format: this.format };
    const g = generatedOf(side, this.fed);
    if (!g) {
      const given = side as { image: string | Uint8Array; dpi?: number };
      try {
        return await renderGiven(await imageBytes(given), given.dpi, o);
      } catch (e) {
        throw new ScanFault('io', `cannot scan the sheet image: ${messageOf(e)}`);
      }
    }
    const key = JSON.stringify([g, o]);
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const img = await renderGenerated(g, o);
    const size = img.image.data.length;
    if (size <= CACHE_BYTES / 4) {
      this.cache.set(key, img);
      this.cacheBytes += size;
      for (const [k, v] of this.cache) {
        if (this.cacheBytes <= CACHE_BYTES) break;
        this.cache.delete(k);
        this.cacheBytes -= v.image.data.length;
      }
    }
    return img;
  }
}
