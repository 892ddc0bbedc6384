// PrinterDriver for IPP Everywhere printers: ipp://host:port/ipp/print or ipps://….
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { PrinterStatus } from '@boxhub/protocol';
import { PrinterError } from '@boxhub/protocol/printer-errors.ts';
import {
  disconnectedPrinter,
  NotSupportedError,
  type MaintenanceOp,
  type PrintHooks,
  type PrintOutcome,
  type PrinterDriver,
  type PrintRequest,
} from '../types.ts';
import { DEFAULT_DOCUMENT_LIMITS, prepareDocument, type DocumentLimits } from '../../media/document.ts';
import { IppClient, type IppClientOptions } from './client.ts';
import { IppStatusError } from './errors.ts';
import { capabilityFrom, type PrinterCapability } from './capability.ts';
import { planIppJob } from './job-plan.ts';
import { BOX_USER, DEFAULT_JOB_TIMING, findJob, submitJob, trackJob, type JobTiming } from './print-job.ts';
import {
  cancelJob,
  getJobAttributes,
  getJobs,
  getPrinterAttributes,
  identifyPrinter,
  printJob,
  validateJob,
  waitForJob,
  type JobInfo,
  type JobRequest,
} from './operations.ts';
import { claimsJobCounters, connectionTypeFor, makeAndModel, STATUS_ATTRIBUTES, statusFrom } from './printer-status.ts';
import type { IppAttributes } from './attributes.ts';

const CANCELLED_BEFORE_SENDING: PrintOutcome = {
  state: 'canceled',
  message: 'cancelled before it was sent to the printer',
};

export interface IppPrinterDriverOptions extends IppClientOptions {
  /** Overrides the loopback-port rule of connectionTypeFor. */
  connectionType?: 'usb' | 'network';
  /** Polling, busy and cancel timing of print jobs (tests shorten the poll). */
  timing?: Partial<JobTiming>;
  /** Limits of the box's own document work (qpdf under prlimit). */
  documentLimits?: DocumentLimits;
  /** Where prepared documents go; default: beside the downloaded file. */
  workDir?: string;
}

export class IppPrinterDriver implements PrinterDriver {
  readonly uri: string;
  readonly client: IppClient;
  private readonly connectionType: 'usb' | 'network';
  private readonly timing: JobTiming;
  private readonly limits: DocumentLimits;
  private readonly workDir: string | undefined;
  /** Learnt from real jobs: does this printer report job-impressions-completed? */
  private strictSeen: boolean | undefined;

  constructor(uri: string, options: IppPrinterDriverOptions = {}) {
    this.uri = uri;
    this.client = new IppClient(uri, options);
    this.connectionType = options.connectionType ?? connectionTypeFor(uri);
    this.timing = { ...DEFAULT_JOB_TIMING, ...options.timing };
    this.limits = options.documentLimits ?? DEFAULT_DOCUMENT_LIMITS;
    this.workDir = options.workDir;
  }

  /** Never throws for an absent printer: connected=false, error_code unreachable. */
  async status(signal?: AbortSignal): Promise<PrinterStatus> {
    let a: IppAttributes;
    try {
      a = await getPrinterAttributes(this.client, { requested: STATUS_ATTRIBUTES, ...(signal ? { signal } : {}) });
    } catch (e) {
      if (signal?.aborted) throw e;
      // An IPP error answer still means something answered; anything else is "not there".
      return {
        ...disconnectedPrinter,
        connection_type: this.connectionType,
        error_code: e instanceof IppStatusError ? PrinterError.other : PrinterError.unreachable,
      };
    }
    return statusFrom(a, { connectionType: this.connectionType, strict: await this.strict(a, signal) });
  }

  /**
   * Strict mode needs the final job-impressions-completed of a job. Judged from the printer's
   * own most recent job when it has one (Get-Jobs), else from its IPP Everywhere / IPP 2.x claim.
   */
  private async strict(a: IppAttributes, signal?: AbortSignal): Promise<boolean> {
    if (this.strictSeen !== undefined) return this.strictSeen;
    try {
      const jobs = await getJobs(this.client, { whichJobs: 'completed', limit: 1, ...(signal ? { signal } : {}) });
      const job = jobs[0];
      if (job) {
        this.strictSeen = job.impressionsCompleted !== undefined;
        return this.strictSeen;
      }
    } catch {
      // Get-Jobs is REQUIRED (RFC 8011 §4.2.6) but some printers restrict it; fall back.
    }
    return claimsJobCounters(a);
  }

  /** The Printer capability (docs/api.md), from the printer's full attribute set; null when the box
   *  cannot drive the printer (it takes no PDF). */
  async capability(signal?: AbortSignal): Promise<PrinterCapability | null> {
    const a = await getPrinterAttributes(this.client, signal ? { signal } : {});
    return capabilityFrom(a, makeAndModel(a), await this.strict(a, signal));
  }

  /** Full Get-Printer-Attributes answer (`all` + media-col-database). */
  attributes(signal?: AbortSignal): Promise<IppAttributes> {
    return getPrinterAttributes(this.client, signal ? { signal } : {});
  }

  validate(job: JobRequest, signal?: AbortSignal): Promise<{ unsupported: IppAttributes }> {
    return validateJob(this.client, job, signal ? { signal } : {});
  }

  /** Print-Job as it is: the low-level operation under print(). */
  submit(job: JobRequest & { document: Uint8Array }, signal?: AbortSignal): Promise<JobInfo> {
    return printJob(this.client, job, signal ? { signal } : {});
  }

  /**
   * Prints one task: checks its options against the printer's own attributes (PrintRejectedError
   * names what it lacks), prepares the document (media/document.ts: PrintDocumentError when it
   * cannot), sends Print-Job with job-name = the task uuid, awaits hooks.submitted(job id),
   * then follows the job to its end. docs/printing.md, "Box-side printing".
   */
  async print(req: PrintRequest, hooks: PrintHooks): Promise<PrintOutcome> {
    const a = await getPrinterAttributes(this.client);
    const plan = planIppJob(a, req.options);
    let doc;
    try {
      doc = await prepareDocument({
        file: req.file,
        format: req.format,
        options: req.options,
        printer: plan.features,
        page: plan.page,
        workDir: this.workDir ?? dirname(req.file),
        limits: this.limits,
        signal: hooks.signal,
      });
    } catch (e) {
      // A cancel stops the box's own document work too: that is a cancel, not a bad document.
      if (hooks.signal.aborted) return CANCELLED_BEFORE_SENDING;
      throw e;
    }
    try {
      if (hooks.signal.aborted) return CANCELLED_BEFORE_SENDING;
      hooks.prepared?.({ sourcePages: doc.sourcePages });
      const p = doc.printer;
      const template = {
        ...plan.template,
        copies: p.copies,
        ...(p.pageRanges ? { pageRanges: p.pageRanges } : {}),
        ...(p.pageDelivery ? { pageDelivery: p.pageDelivery } : {}),
        ...(p.printScaling ? { printScaling: p.printScaling } : {}),
        ...(p.collate !== undefined
          ? {
              multipleDocumentHandling: p.collate
                ? ('separate-documents-collated-copies' as const)
                : ('separate-documents-uncollated-copies' as const),
            }
          : {}),
      };
      const document = await readFile(doc.path);
      const id = await submitJob(
        this.client,
        { documentFormat: doc.mimeType, jobName: req.task, userName: BOX_USER, template, document },
        hooks.signal,
        this.timing,
      );
      if (id === undefined)
        return { state: 'canceled', message: 'cancelled while the printer was busy with another job' };
      await hooks.submitted(String(id));
      const out = await trackJob(this.client, id, hooks, this.timing);
      const outcome = out ?? { state: 'aborted', message: `the printer lost job ${id} as soon as it took it` };
      this.learn(outcome);
      return outcome;
    } finally {
      await doc.cleanup();
    }
  }

  /** Follows a job submitted before a restart; undefined when the printer no longer knows it. */
  async follow(ref: string, hooks: Omit<PrintHooks, 'submitted'>): Promise<PrintOutcome | undefined> {
    const id = Number(ref);
    if (!Number.isInteger(id) || id <= 0) throw new TypeError(`not an IPP job reference: ${ref}`);
    const out = await trackJob(this.client, id, hooks, this.timing);
    if (out) this.learn(out);
    return out;
  }

  /** The job id of the newest job named after this task, if the printer holds one. */
  async find(task: string, signal?: AbortSignal): Promise<string | undefined> {
    const j = await findJob(this.client, task, signal);
    return j ? String(j.id) : undefined;
  }

  async job(jobId: number, signal?: AbortSignal): Promise<JobInfo> {
    const j = await getJobAttributes(this.client, jobId, signal ? { signal } : {});
    this.learn(j);
    const { attributes: _unused, ...info } = j;
    return info;
  }

  /** Polls the job to a terminal state (completed, canceled, aborted). */
  async waitForJob(
    jobId: number,
    o: { intervalMs?: number; signal?: AbortSignal; onUpdate?: (j: JobInfo) => void } = {},
  ): Promise<JobInfo> {
    const j = await waitForJob(this.client, jobId, o);
    this.learn(j);
    return j;
  }

  jobs(whichJobs: 'not-completed' | 'completed' | 'all' = 'not-completed', signal?: AbortSignal): Promise<JobInfo[]> {
    return getJobs(this.client, { whichJobs, ...(signal ? { signal } : {}) });
  }

  cancel(jobId: number, signal?: AbortSignal): Promise<void> {
    return cancelJob(this.client, jobId, signal ? { signal } : {});
  }

  /** Identify-Printer (PWG 5100.13 §4.1.2): the buzzer fallback when the box has none. */
  identify(actions: Array<'display' | 'flash' | 'sound' | 'speak'> = ['sound'], signal?: AbortSignal): Promise<void> {
    return identifyPrinter(this.client, { actions, ...(signal ? { signal } : {}) });
  }

  /** IPP has no head-cleaning or nozzle-check operation; those need a vendor (CUPS/ESC-P) path. */
  maintenance(op: MaintenanceOp): Promise<void> {
    return Promise.reject(
      new NotSupportedError(
        `${op} is not available on ${this.uri}: IPP has no maintenance operation; it needs a vendor driver (e.g. a CUPS Gutenprint queue for Epson inkjets)`,
      ),
    );
  }

  async close(): Promise<void> {
    this.client.close();
  }

  private learn(j: { state: string; impressionsCompleted?: number | undefined }): void {
    if (j.state === 'completed') this.strictSeen = j.impressionsCompleted !== undefined;
  }
}
