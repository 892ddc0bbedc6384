// PrinterDriver for IPP Everywhere printers: ipp://host:port/ipp/print or ipps://….
import type { PrinterStatus } from '@boxhub/protocol';
import { PrinterError } from '@boxhub/protocol/printer-errors.ts';
import { disconnectedPrinter, NotSupportedError, type MaintenanceOp, type PrinterDriver } from '../types.ts';
import { IppClient, type IppClientOptions } from './client.ts';
import { IppStatusError } from './errors.ts';
import { capabilityFrom, type PrinterCapability } from './capability.ts';
import {
  cancelJob, getJobAttributes, getJobs, getPrinterAttributes, identifyPrinter, printJob, validateJob, waitForJob,
  type JobInfo, type JobRequest,
} from './operations.ts';
import { claimsJobCounters, connectionTypeFor, makeAndModel, STATUS_ATTRIBUTES, statusFrom } from './printer-status.ts';
import type { IppAttributes } from './attributes.ts';

export interface IppPrinterDriverOptions extends IppClientOptions {
  /** Overrides the loopback-port rule of connectionTypeFor. */
  connectionType?: 'usb' | 'network';
}

export class IppPrinterDriver implements PrinterDriver {
  readonly uri: string;
  readonly client: IppClient;
  private readonly connectionType: 'usb' | 'network';
  /** Learnt from real jobs: does this printer report job-impressions-completed? */
  private strictSeen: boolean | undefined;

  constructor(uri: string, options: IppPrinterDriverOptions = {}) {
    this.uri = uri;
    this.client = new IppClient(uri, options);
    this.connectionType = options.connectionType ?? connectionTypeFor(uri);
  }

  /** Never throws for an absent printer: connected=false, error_code unreachable. */
  async status(signal?: AbortSignal): Promise<PrinterStatus> {
    let a: IppAttributes;
    try {
      a = await getPrinterAttributes(this.client, { requested: STATUS_ATTRIBUTES, ...(signal ? { signal } : {}) });
    } catch (e) {
      if (signal?.aborted) throw e;
      // An IPP error answer still means something answered; anything else is "not there".
      return { ...disconnectedPrinter, connection_type: this.connectionType, error_code: e instanceof IppStatusError ? PrinterError.other : PrinterError.unreachable };
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

  /** The spec's Printer capability, from the printer's full attribute set. */
  async capability(signal?: AbortSignal): Promise<PrinterCapability> {
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

  print(job: JobRequest & { document: Uint8Array }, signal?: AbortSignal): Promise<JobInfo> {
    return printJob(this.client, job, signal ? { signal } : {});
  }

  async job(jobId: number, signal?: AbortSignal): Promise<JobInfo> {
    const j = await getJobAttributes(this.client, jobId, signal ? { signal } : {});
    this.learn(j);
    const { attributes: _unused, ...info } = j;
    return info;
  }

  /** Polls the job to a terminal state (completed, canceled, aborted). */
  async waitForJob(jobId: number, o: { intervalMs?: number; signal?: AbortSignal; onUpdate?: (j: JobInfo) => void } = {}): Promise<JobInfo> {
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
    return Promise.reject(new NotSupportedError(
      `${op} is not available on ${this.uri}: IPP has no maintenance operation; it needs a vendor driver (e.g. a CUPS Gutenprint queue for Epson inkjets)`,
    ));
  }

  async close(): Promise<void> {
    this.client.close();
  }

  private learn(j: JobInfo): void {
    if (j.state === 'completed') this.strictSeen = j.impressionsCompleted !== undefined;
  }
}
