// A virtual printer for the demo and the tests that really prints: it describes itself with
// IPP attributes like a real inkjet, so the box checks options and prepares documents exactly
// as for an IPP printer (ipp/job-plan.ts, media/document.ts), then "prints" the prepared PDF
// one side at a time, counting impressions, and can render what it printed to PNG files.
//
//   sim:?kind=inkjet&strict=1&make=Epson&model=ET-2850&maintenance=head_clean,nozzle_check
//       &side_ms=20          time per printed side (0: as fast as possible)
//       &fail_after=2&fail=media-jam   the next job stops after 2 sides with that fault
//       &fault=media-empty    a standing fault from the start (jobs wait until it is cleared)
//       &out=/path/dir        render each job: <task>.pdf (as sent), <task>-N.png (each printed side,
//                             copies included, in reading order), <task>.json
//       &log=/path/file      appends a JSON line per job start, printed side and job end
//                            ({event, task, job, sides, impressions, state, at}): what left the
//                            printer, for a checker (docs/chaos.md)
//       &duplex=0 &color=0 &copies=1   a printer without two-sided, colour, or copies
//       &connected=0
// At run time: setFault(), failAfter(), pauseAfter()/resume(), setConnected().
import { appendFileSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { onPath, renderEngine } from '@boxhub/pdf-tools/pdf-engines.ts';
import { runBuiltin } from '@boxhub/pdf-tools/builtin-pdf/run.ts';
import { dirname, join } from 'node:path';
import type { PrinterCapability, PrinterStatus, PrintJobOptions } from '@boxhub/protocol';
import { isSimPrinterFault, printerErrorFor, type SimPrinterFault } from './faults.ts';
import {
  NotSupportedError,
  type MaintenanceOp,
  type PrinterDriver,
  type PrintHooks,
  type PrintOutcome,
  type PrintRequest,
} from '../types.ts';
import {
  boolean,
  collection,
  enumAttr,
  integer,
  IppAttributes,
  keyword,
  mimeMediaType,
  rangeOfInteger,
} from '../ipp/attributes.ts';
import type { IppAttribute } from '../ipp/model.ts';
import { capabilityFrom } from '../ipp/capability.ts';
import { planIppJob } from '../ipp/job-plan.ts';
import { prepareDocument } from '../../media/document.ts';
import { sidesFor } from '../../media/document-plan.ts';
import { DEFAULT_TOOL_LIMITS, runLimited } from '../../media/document-tools.ts';

const OPS: MaintenanceOp[] = ['head_clean', 'power_ink_flush', 'nozzle_check'];

/** One job as the simulated printer saw it (tests read SimPrinter.jobs). */
export interface SimPrintJob {
  id: number;
  task: string;
  options: PrintJobOptions;
  format: 'pdf' | 'jpg';
  /** Pages of the document the box sent (after its own selection, reversal, copies). */
  pages: number;
  /** Copies the printer was asked to make itself. */
  copies: number;
  /** Sides the whole job takes. */
  sides: number;
  /** Sides printed so far. */
  impressions: number;
  state: 'processing' | 'completed' | 'canceled' | 'aborted';
  printerError?: number;
  /** The rendered copy of what was sent, when `out` is set. */
  rendered?: string;
}

interface Running {
  job: SimPrintJob;
  done: Promise<PrintOutcome>;
  cancel: () => void;
  listeners: Set<(n: number) => void>;
}

const size = (x: number, y: number): IppAttribute =>
  collection('media-size', [integer('x-dimension', x), integer('y-dimension', y)]);
const margins = (v: number): IppAttribute[] =>
  ['top', 'bottom', 'left', 'right'].map((s) => integer(`media-${s}-margin`, v));
const entry = (x: number, y: number, m: number, source?: string, type?: string): IppAttribute[] => [
  size(x, y),
  ...margins(m),
  ...(source ? [keyword('media-source', source)] : []),
  ...(type ? [keyword('media-type', type)] : []),
];

/** The attributes of the simulated printer: an inkjet with a main tray, a rear feed for
 *  envelopes and a photo tray for borderless photos. */
export function simPrinterAttributes(o: { duplex: boolean; color: boolean; copies: number }): IppAttributes {
  return new IppAttributes([
    keyword('ipp-features-supported', 'ipp-everywhere'),
    keyword('ipp-versions-supported', '1.1', '2.0'),
    mimeMediaType('document-format-supported', 'application/pdf'),
    collection(
      'media-col-database',
      entry(21000, 29700, 300),
      entry(14800, 21000, 300),
      entry(21590, 27940, 300),
      entry(21590, 35560, 300),
      entry(10160, 15240, 0, 'photo'),
      entry(12700, 17780, 0, 'photo'),
      entry(21000, 29700, 0, 'photo', 'photographic-glossy'),
      entry(11000, 22000, 500, 'rear', 'envelope'),
      entry(10478, 24130, 500, 'rear', 'envelope'),
    ),
    keyword(
      'media-col-supported',
      'media-size',
      'media-type',
      'media-source',
      'media-top-margin',
      'media-bottom-margin',
      'media-left-margin',
      'media-right-margin',
    ),
    keyword('media-type-supported', 'stationery', 'photographic-glossy', 'photographic-matte', 'labels'),
    keyword('media-source-supported', 'auto', 'main', 'rear', 'photo'),
    keyword(
      'sides-supported',
      ...(o.duplex ? ['one-sided', 'two-sided-long-edge', 'two-sided-short-edge'] : ['one-sided']),
    ),
    enumAttr('print-quality-supported', 3, 4, 5),
    keyword('print-color-mode-supported', ...(o.color ? ['monochrome', 'color'] : ['monochrome'])),
    boolean('color-supported', o.color),
    rangeOfInteger('copies-supported', { lower: 1, upper: Math.max(1, o.copies) }),
    keyword(
      'multiple-document-handling-supported',
      'separate-documents-collated-copies',
      'separate-documents-uncollated-copies',
    ),
  ]);
}

export class SimPrinter implements PrinterDriver {
  readonly uri: string;
  private readonly events = new EventEmitter();
  private fault: SimPrinterFault | null;
  private connected = true;
  readonly kind: 'inkjet' | 'laser';
  readonly strict: boolean;
  readonly make: string;
  readonly model: string;
  readonly ops: MaintenanceOp[];
  readonly attributes: IppAttributes;
  /** Time per side, ms. */
  sideMs: number;
  /** Where jobs are rendered; null: not rendered. */
  outDir: string | null;
  /** Where job starts, sides and ends are logged; null: not logged. */
  readonly logFile: string | null;
  /** Every maintenance operation run, in order (tests read it). */
  readonly history: MaintenanceOp[] = [];
  /** Every job, in order (tests read it). */
  readonly jobs: SimPrintJob[] = [];
  private failing: { after: number; fault: SimPrinterFault } | null = null;
  private pausing: number | null = null;
  private running: Running | null = null;
  private readonly byId = new Map<number, Running | SimPrintJob>();

  constructor(uri: string) {
    this.uri = uri;
    const q = new URLSearchParams(uri.replace(/^sim:\/*/, '').replace(/^[^?]*\?/, ''));
    this.kind = q.get('kind') === 'laser' ? 'laser' : 'inkjet';
    this.strict = q.get('strict') !== '0';
    this.make = q.get('make') ?? 'boxhub';
    this.model = q.get('model') ?? (this.kind === 'inkjet' ? 'Sim Inkjet' : 'Sim Laser');
    const m = q.get('maintenance');
    this.ops =
      m === null
        ? this.kind === 'inkjet'
          ? OPS
          : []
        : m.split(',').filter((x): x is MaintenanceOp => OPS.some((op) => op === x));
    this.fault = faultOf(q.get('fault'));
    if (q.get('connected') === '0') this.connected = false;
    this.sideMs = Math.max(0, Number(q.get('side_ms') ?? 20) || 0);
    this.outDir = q.get('out');
    this.logFile = q.get('log');
    const failAfter = q.get('fail_after');
    if (failAfter !== null)
      this.failing = { after: Math.max(0, Number(failAfter) || 0), fault: faultOf(q.get('fail')) ?? 'media-empty' };
    this.attributes = simPrinterAttributes({
      duplex: q.get('duplex') !== '0',
      color: q.get('color') !== '0',
      copies: Number(q.get('copies') ?? 99) || 1,
    });
  }

  setFault(fault: SimPrinterFault | null): void {
    this.fault = fault;
    this.events.emit('change');
  }
  setConnected(connected: boolean): void {
    this.connected = connected;
    this.events.emit('change');
  }
  /** The next job stops after `after` sides with `fault` (a jam, no paper, ...); null: never. */
  failAfter(after: number | null, fault: SimPrinterFault = 'media-empty'): void {
    this.failing = after === null ? null : { after, fault };
  }
  /** The next job holds after `after` sides until resume(): for tests that act on a job half
   *  printed (a cancel, a restart). null: no hold. */
  pauseAfter(after: number | null): void {
    this.pausing = after;
  }
  resume(): void {
    this.pausing = null;
    this.events.emit('resume');
  }

  async status(): Promise<PrinterStatus> {
    if (!this.connected) return { connected: false, supported: false, error_code: 0 };
    const err = this.fault ? printerErrorFor(this.fault) : 0;
    return {
      connected: true,
      supported: true,
      make: this.make,
      model: this.model,
      connection_type: 'virtual',
      error_code: err,
      state: this.fault ? 'stopped' : this.running ? 'processing' : 'idle',
      state_reasons: this.fault ? [`${this.fault}-error`] : ['none'],
      kind: this.kind,
      strict: this.strict,
      maintenance: this.ops,
    };
  }

  async maintenance(op: MaintenanceOp): Promise<void> {
    if (!this.connected) throw new Error('printer is not connected');
    if (!this.ops.includes(op)) throw new NotSupportedError(`${this.model} does not support ${op}`);
    if (this.fault) throw new Error(`printer reports ${this.fault}`);
    this.history.push(op);
  }

  watch(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  /** Called once a job has ended (completed, cancelled or aborted), with its final state. */
  onJobEnd(listener: (job: SimPrintJob) => void): () => void {
    this.events.on('end', listener);
    return () => this.events.off('end', listener);
  }

  /** Called after every side printed (tests wait on it instead of sleeping). */
  onSide(listener: (job: SimPrintJob) => void): () => void {
    this.events.on('side', listener);
    return () => this.events.off('side', listener);
  }

  async capability(): Promise<PrinterCapability | null> {
    if (!this.connected) return null;
    return capabilityFrom(this.attributes, { make: this.make, model: this.model }, this.strict);
  }

  async print(req: PrintRequest, hooks: PrintHooks): Promise<PrintOutcome> {
    if (!this.connected) throw new Error('printer is not connected');
    if (this.running)
      throw new Error(
        `the simulated printer is busy with job ${this.running.job.id}: the box's queue sends one job at a time`,
      );
    const plan = planIppJob(this.attributes, req.options);
    let doc;
    try {
      doc = await prepareDocument({
        file: req.file,
        format: req.format,
        options: req.options,
        printer: plan.features,
        page: plan.page,
        workDir: dirname(req.file),
        signal: hooks.signal,
      });
    } catch (e) {
      if (hooks.signal.aborted) return { state: 'canceled', message: 'cancelled before it was sent to the printer' };
      throw e;
    }
    hooks.prepared?.({ sourcePages: doc.sourcePages });
    try {
      const duplex = req.options.duplex !== undefined && req.options.duplex !== 'SVC_DP_NONE';
      const job: SimPrintJob = {
        id: this.jobs.length + 1,
        task: req.task,
        options: req.options,
        format: req.format,
        pages: doc.sentPages,
        copies: doc.printer.copies,
        sides: sidesFor(doc.sentPages, duplex) * doc.printer.copies,
        impressions: 0,
        state: 'processing',
      };
      if (this.outDir) job.rendered = await this.render(this.outDir, doc.path, req.task, job);
      this.jobs.push(job);
      const run = this.start(job, hooks.signal);
      await hooks.submitted(String(job.id));
      return await this.track(run, hooks);
    } finally {
      await doc.cleanup();
    }
  }

  async follow(ref: string, hooks: Omit<PrintHooks, 'submitted'>): Promise<PrintOutcome | undefined> {
    const r = this.byId.get(Number(ref));
    if (!r) return undefined;
    if ('done' in r) {
      hooks.signal.addEventListener('abort', r.cancel, { once: true });
      if (hooks.signal.aborted) r.cancel();
      return this.track(r, hooks);
    }
    return this.outcome(r);
  }

  async find(task: string): Promise<string | undefined> {
    const j = [...this.jobs].reverse().find((x) => x.task === task);
    return j ? String(j.id) : undefined;
  }

  async close(): Promise<void> {
    this.running?.cancel();
    this.events.emit('resume');
    this.events.removeAllListeners();
  }

  private async track(r: Running, hooks: Omit<PrintHooks, 'submitted'>): Promise<PrintOutcome> {
    const listener = (n: number) => hooks.progress?.({ impressionsCompleted: n });
    if (this.strict) {
      r.listeners.add(listener);
      // Followed late (the job ran while submitted() was being recorded): the count so far, as
      // a real printer's job-impressions-completed would say at the first look.
      if (r.job.impressions > 0) listener(r.job.impressions);
    }
    try {
      return await r.done;
    } finally {
      r.listeners.delete(listener);
    }
  }

  private outcome(j: SimPrintJob): PrintOutcome {
    const o: PrintOutcome = { state: j.state === 'processing' ? 'aborted' : j.state };
    if (this.strict) o.impressionsCompleted = j.impressions;
    if (j.printerError !== undefined) o.printerError = j.printerError;
    if (j.state === 'aborted') o.message = `the printer stopped: ${this.fault ?? 'error'}`;
    return o;
  }

  /** Prints the job side by side; one job at a time, like the printers it stands for. */
  private start(job: SimPrintJob, signal: AbortSignal): Running {
    let cancelled = false;
    const wake = new EventEmitter();
    const cancel = () => {
      cancelled = true;
      wake.emit('wake');
    };
    signal.addEventListener('abort', cancel, { once: true });
    if (signal.aborted) cancelled = true;
    const listeners = new Set<(n: number) => void>();
    const wait = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(done, ms);
        function done() {
          clearTimeout(t);
          wake.off('wake', done);
          resolve();
        }
        wake.once('wake', done);
      });
    const until = (ready: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (ready() || cancelled) {
            this.events.off('change', check);
            this.events.off('resume', check);
            wake.off('wake', check);
            resolve();
          }
        };
        this.events.on('change', check);
        this.events.on('resume', check);
        wake.on('wake', check);
        check();
      });
    const failing = this.failing;
    this.failing = null;
    const log = (event: 'start' | 'side' | 'end') => {
      if (this.logFile)
        appendFileSync(
          this.logFile,
          `${JSON.stringify({ event, task: job.task, job: job.id, sides: job.sides, impressions: job.impressions, state: job.state, at: Date.now() })}\n`,
        );
    };
    const done = (async (): Promise<PrintOutcome> => {
      log('start');
      this.events.emit('change');
      // A printer in error holds the job until the fault is cleared (ippeveprinter does the
      // same while media-empty).
      await until(() => this.fault === null);
      while (job.impressions < job.sides && !cancelled) {
        if (this.pausing !== null && job.impressions >= this.pausing)
          await until(() => this.pausing === null || job.impressions < this.pausing);
        if (cancelled) break;
        if (failing && job.impressions >= failing.after) {
          this.fault = failing.fault;
          job.state = 'aborted';
          job.printerError = printerErrorFor(failing.fault);
          break;
        }
        await (this.sideMs > 0 ? wait(this.sideMs) : new Promise<void>((r) => setImmediate(r)));
        if (cancelled) break;
        job.impressions++;
        log('side');
        for (const l of listeners) l(job.impressions);
        this.events.emit('side', job);
      }
      if (job.state === 'processing') job.state = cancelled ? 'canceled' : 'completed';
      log('end');
      signal.removeEventListener('abort', cancel);
      this.running = null;
      this.byId.set(job.id, job);
      this.events.emit('change');
      this.events.emit('end', job);
      return this.outcome(job);
    })();
    const r: Running = { job, done, cancel, listeners };
    this.running = r;
    this.byId.set(job.id, r);
    return r;
  }

  /**
   * Copies what was sent to the out directory and renders it to PNG at 50 dpi (the first 50
   * pages sent, under the same limits as the box's other document tools; pdftoppm, or the built-in
   * engine without it: docs/printing.md, "PDF engines"): one PNG per printed side that has a page
   * on it, every copy the printer makes included, numbered in reading order: the top of the
   * output stack first, so a job the box reversed for a face-up tray reads 1, 2, 3
   * (docs/printing.md, "The simulated printer"). <task>.json maps each PNG to the page sent.
   */
  private async render(dir: string, pdf: string, task: string, job: SimPrintJob): Promise<string> {
    await mkdir(dir, { recursive: true });
    const safe = task.replace(/[^A-Za-z0-9._-]/g, '_');
    const out = join(dir, `${safe}.pdf`);
    await copyFile(pdf, out);
    const work = await mkdtemp(join(dir, `.${safe}-`));
    const rendered = new Map<number, string>();
    try {
      // pdftoppm runs under prlimit here (the box's tool runner): both must be there.
      if (renderEngine() === 'system' && onPath('prlimit')) {
        await runLimited(
          'pdftoppm',
          ['-png', '-r', '50', '-l', String(RENDER_PAGES), out, join(work, 'p')],
          DEFAULT_TOOL_LIMITS,
        );
      } else {
        const r = await runBuiltin(
          {
            kind: 'render',
            path: out,
            dpi: 50,
            lastPage: RENDER_PAGES,
            maxPixels: 4_000_000,
            maxOutputBytes: DEFAULT_TOOL_LIMITS.maxOutputBytes,
            outPrefix: join(work, 'p'),
          },
          DEFAULT_TOOL_LIMITS,
        );
        if (!r.ok) throw new Error(`the simulated printer could not render the pages: ${r.message}`);
      }
      // pdftoppm pads the page number to the width of the last one (p-01.png); the engine does not.
      for (const f of await readdir(work)) {
        const m = /^p-0*(\d+)\.png$/.exec(f);
        if (m) rendered.set(Number(m[1]), join(work, f));
      }
      const duplex = job.options.duplex !== undefined && job.options.duplex !== 'SVC_DP_NONE';
      const files: Array<{ file: string; page: number; copy: number }> = [];
      let n = 0;
      for (const { page, copy } of readingOrder(job.pages, job.copies, duplex, job.options.reverse === true)) {
        const from = rendered.get(page);
        if (!from) continue;
        const file = `${safe}-${++n}.png`;
        await copyFile(from, join(dir, file));
        files.push({ file, page, copy });
      }
      await writeFile(
        join(dir, `${safe}.json`),
        JSON.stringify(
          {
            id: job.id,
            task,
            options: job.options,
            format: job.format,
            pages: job.pages,
            copies: job.copies,
            sides: job.sides,
            png: files,
          },
          null,
          2,
        ),
      );
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    return out;
  }
}

/** Pages rendered per job. */
const RENDER_PAGES = 50;

/**
 * The sides printed, as a person reads the output stack from the top: each copy's sheets in
 * order (two-sided: front and back, an odd count's last back blank, left out); when the box
 * reversed the pages for a face-up tray, the sheets printed last lie on top, so they come first.
 */
export function readingOrder(
  pages: number,
  copies: number,
  duplex: boolean,
  reversed: boolean,
): Array<{ page: number; copy: number }> {
  const sheets: Array<Array<{ page: number; copy: number }>> = [];
  for (let copy = 1; copy <= copies; copy++) {
    const per = duplex ? 2 : 1;
    for (let p = 1; p <= pages; p += per)
      sheets.push(Array.from({ length: Math.min(per, pages - p + 1) }, (_, k) => ({ page: p + k, copy })));
  }
  return (reversed ? sheets.reverse() : sheets).flat();
}

function faultOf(v: string | null): SimPrinterFault | null {
  return v !== null && isSimPrinterFault(v) ? v : null;
}
