// PrinterDriver for a queue of the box's CUPS: `cups:NAME` or ipp://localhost:631/printers/NAME
// (docs/printers-and-scanners.md, "CUPS queues"). Jobs, options, cancels and the capability
// tree go through CUPS (the queue is what the box prints to: a driverless queue or one with a
// PPD). What CUPS cannot tell truthfully is asked of the printer behind the queue, when the
// queue's device-uri is an IPP printer the box can reach:
// - CUPS counts a job's sides as it hands them to its backend, and may report "completed" or
//   "canceled" for a job the printer aborted (measured: a printer out of paper after 1 of 3
//   sides, CUPS said 3 sides and "canceled"). So strict mode's count comes from the printer's
//   own job (found by its job-name, the task uuid, which CUPS's ipp backend passes on), and
//   without such a printer `support_strict` is false.
// - CUPS's printer-state-reasons for an idle queue say nothing about the printer (it learns
//   them only while a job runs); the printer's own reasons are added.
// - The make and model are the printer's, not the PPD's nickname ("… - IPP Everywhere").
import type { PrinterCapability, PrinterStatus } from '@boxhub/protocol';
import { PrinterError, printerErrorCode } from '@boxhub/protocol/printer-errors.ts';
import {
  disconnectedPrinter,
  type MaintenanceOp,
  type PrintHooks,
  type PrintOutcome,
  type PrinterDriver,
  type PrintRequest,
} from '../types.ts';
import type { IppAttributes } from '../ipp/attributes.ts';
import { capabilityFrom } from '../ipp/capability.ts';
import { IppStatusError, IppTransportError } from '../ipp/errors.ts';
import { getJobAttributes, getPrinterAttributes } from '../ipp/operations.ts';
import { DEFAULT_JOB_TIMING } from '../ipp/print-job.ts';
import { IppPrinterDriver, type IppPrinterDriverOptions } from '../ipp/printer-driver.ts';
import { connectionTypeFor, kindOf, parseDeviceId, STATUS_ATTRIBUTES } from '../ipp/printer-status.ts';
import { PrinterState } from '../ipp/tags.ts';
import { pause } from '../../timing/pause.ts';
import { cleanMakeAndModel, cupsQueueUri, isCupsQueueUri } from './queue-uri.ts';

/**
 * CUPS's own reasons that describe what the scheduler is doing, not a fault of the printer
 * (CUPS Implementation of IPP, printer-state-reasons): they stay in state_reasons but do not
 * make an error code.
 */
const INFORMATIONAL =
  /^cups-(?:waiting-for-job-completed|remote-|insecure-filter|missing-filter|ipp-conformance|ipp-wrong)/;

const clip = (s: string, n = 128) => (s.length > n ? s.slice(0, n) : s);

export interface CupsQueueDriverOptions extends IppPrinterDriverOptions {
  /** Options of the driver for the printer behind the queue (tests shorten its polling). */
  behind?: IppPrinterDriverOptions;
}

export class CupsQueueDriver implements PrinterDriver {
  readonly uri: string;
  /** The queue, driven as the IPP printer CUPS presents. */
  readonly queue: IppPrinterDriver;
  private readonly o: CupsQueueDriverOptions;
  private behindDriver: IppPrinterDriver | undefined;

  constructor(uri: string, options: CupsQueueDriverOptions = {}) {
    const ipp = uri.startsWith('cups:') ? cupsQueueUri(uri) : uri;
    if (!isCupsQueueUri(ipp))
      throw new TypeError(`not a CUPS queue: ${uri} (use cups:NAME or ipp://localhost:631/printers/NAME)`);
    this.uri = uri;
    this.o = options;
    this.queue = new IppPrinterDriver(ipp, options);
  }

  /** The printer behind the queue, when its device-uri is IPP (driverless or a PPD with the ipp
   *  backend); dnssd://, usb://, socket:// and the rest are not reachable as IPP printers. */
  private behind(deviceUri: string | undefined): IppPrinterDriver | undefined {
    if (!deviceUri || !/^ipps?:\/\//.test(deviceUri)) {
      this.behindDriver = undefined;
      return undefined;
    }
    // CUPS gives the device-uri with its options (?waitjob=false…): the printer is the rest.
    const uri = deviceUri.replace(/\?.*$/, '');
    if (this.behindDriver?.uri !== uri) {
      void this.behindDriver?.close();
      this.behindDriver = new IppPrinterDriver(uri, { ...this.o.behind, timeoutMs: this.o.behind?.timeoutMs ?? 5000 });
    }
    return this.behindDriver;
  }

  private async queueAttributes(requested?: string[], signal?: AbortSignal): Promise<IppAttributes> {
    return getPrinterAttributes(this.queue.client, {
      ...(requested ? { requested } : {}),
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * connected: CUPS answers and, when the queue leads to an IPP printer, that printer answers
   * too (a printer switched off behind a queue is not connected, whatever CUPS says). State and
   * reasons: the queue's (paused, stopped by a backend error) and the printer's own.
   */
  async status(signal?: AbortSignal): Promise<PrinterStatus> {
    let q: IppAttributes;
    try {
      q = await this.queueAttributes([...STATUS_ATTRIBUTES, 'device-uri', 'printer-type'], signal);
    } catch (e) {
      if (signal?.aborted) throw e;
      return {
        ...disconnectedPrinter,
        connection_type: connectionTypeFor(this.queue.uri),
        error_code: e instanceof IppStatusError ? PrinterError.other : PrinterError.unreachable,
      };
    }
    const deviceUri = q.string('device-uri') ?? '';
    const behind = this.behind(deviceUri);
    const printer = behind ? await behind.status(signal) : undefined;
    const connectionType = behind ? connectionTypeFor(behind.uri) : deviceUri.startsWith('usb:') ? 'usb' : 'network';
    if (printer && !printer.connected) return { ...printer, connection_type: connectionType };
    const stateNum = q.integer('printer-state');
    const queueState = stateNum !== undefined ? PrinterState[stateNum as keyof typeof PrinterState] : undefined;
    const queueReasons = q.strings('printer-state-reasons').filter((r) => r !== 'none');
    const printerReasons = (printer?.state_reasons ?? []).filter((r) => r !== 'none');
    const reasons = [...new Set([...queueReasons, ...printerReasons])].slice(0, 32).map((r) => clip(r));
    // The queue stopped (cupsdisable, or a backend gave up) wins over an idle printer.
    const state = queueState === 'stopped' ? 'stopped' : (printer?.state ?? queueState);
    const counted = reasons.filter((r) => !INFORMATIONAL.test(r));
    const s: PrinterStatus = {
      connected: true,
      supported: printer
        ? printer.supported && q.strings('document-format-supported').includes('application/pdf')
        : q.strings('document-format-supported').includes('application/pdf'),
      connection_type: connectionType,
      error_code: printerErrorCode(state, counted.length ? counted : ['none']),
      state_reasons: reasons.length ? reasons : ['none'],
      kind: printer?.kind && printer.kind !== 'other' ? printer.kind : kindOf(q),
      strict: printer?.strict ?? false,
      maintenance: [],
    };
    const mm =
      printer?.make || printer?.model
        ? { make: printer.make ?? '', model: printer.model ?? '' }
        : this.queueMakeAndModel(q);
    if (mm.make) s.make = mm.make;
    if (mm.model) s.model = mm.model;
    if (state) s.state = state;
    return s;
  }

  /** Make and model from what CUPS reports, without the tail naming how CUPS drives it. */
  private queueMakeAndModel(q: IppAttributes): { make: string; model: string } {
    const id = parseDeviceId(q.string('printer-device-id') ?? '');
    const mm = cleanMakeAndModel(q.string('printer-make-and-model') ?? '');
    const make = id.get('MFG') ?? id.get('MANUFACTURER') ?? mm.split(/\s+/)[0] ?? '';
    let model =
      id.get('MDL') ??
      id.get('MODEL') ??
      (make && mm.toLowerCase().startsWith(make.toLowerCase()) ? mm.slice(make.length).trim() : mm);
    if (!model) model = q.string('printer-info')?.trim() ?? '';
    return { make: clip(make), model: clip(model) };
  }

  /** The capability tree from what CUPS reports for the queue (the options go through CUPS);
   *  support_strict only when the printer behind it counts the sides it prints. */
  async capability(signal?: AbortSignal): Promise<PrinterCapability | null> {
    const q = await this.queueAttributes(undefined, signal);
    const st = await this.status(signal);
    return capabilityFrom(q, { make: st.make ?? '', model: st.model ?? '' }, st.connected && st.strict === true);
  }

  /**
   * Prints through CUPS. CUPS's own side counts are dropped (hand-off counts); when the queue
   * leads to an IPP printer, the job it made there (same job-name) is followed to its end, and
   * its state and sides are the outcome.
   */
  async print(req: PrintRequest, hooks: PrintHooks): Promise<PrintOutcome> {
    let job: string | undefined;
    const watching = new AbortController();
    const watch = this.watchPrinter(req.task, hooks, watching.signal, () => job);
    try {
      const viaCups = await this.queue.print(req, {
        ...hooks,
        progress: () => undefined,
        submitted: (ref) => {
          job = ref;
          return hooks.submitted(ref);
        },
      });
      watching.abort();
      const gaveUp = await watch;
      if (gaveUp) throw new IppTransportError(gaveUp);
      return await this.settle(req.task, await this.withCupsWords(viaCups, job), hooks);
    } finally {
      watching.abort();
      await watch;
    }
  }

  /**
   * While CUPS holds the job, the sides printed so far come from the printer's own job (by its
   * job-name), so progress and a cancel on the first sides see what the printer did. A printer
   * that stops answering (switched off, unplugged) is waited for `unreachableMs`, as for an IPP
   * printer; CUPS would hold the job and retry for ever, so the box then cancels it in CUPS
   * (it must not print later unseen) and resolves with why, which print() throws as a transport
   * error: the task ends "printer not connected" (docs/printers-and-scanners.md, "Plug and play").
   */
  private async watchPrinter(
    task: string,
    hooks: Omit<PrintHooks, 'submitted'>,
    stop: AbortSignal,
    cupsJob: () => string | undefined,
  ): Promise<string | undefined> {
    let behind: IppPrinterDriver | undefined;
    try {
      behind = this.behind((await this.queueAttributes(['device-uri'])).string('device-uri'));
    } catch {
      return undefined;
    }
    if (!behind) return undefined;
    const pollMs = this.o.timing?.pollMs ?? DEFAULT_JOB_TIMING.pollMs;
    const unreachableMs = this.o.timing?.unreachableMs ?? DEFAULT_JOB_TIMING.unreachableMs;
    let ref: string | undefined;
    let last: number | undefined;
    let awaySince: number | undefined;
    while (!stop.aborted) {
      try {
        ref ??= await behind.find(task, stop);
        if (ref) {
          const j = await behind.job(Number(ref), stop);
          if (j.impressionsCompleted !== undefined && j.impressionsCompleted !== last) {
            last = j.impressionsCompleted;
            hooks.progress?.({ impressionsCompleted: last });
          }
        }
        awaySince = undefined;
      } catch (e) {
        if (!stop.aborted && e instanceof IppTransportError) {
          awaySince ??= Date.now();
          const id = cupsJob();
          if (Date.now() - awaySince > unreachableMs && id !== undefined && !hooks.signal.aborted) {
            await this.queue.cancel(Number(id)).catch(() => undefined);
            return `the printer behind the CUPS queue (${behind.uri}) did not answer for ${Math.round(unreachableMs / 1000)} s; the job was cancelled in CUPS: ${e.message}`;
          }
        }
        // Otherwise the printer did not answer this time; the next poll asks again.
      }
      await pause(pollMs, stop);
    }
    return undefined;
  }

  /**
   * CUPS puts why it ended a job in job-printer-state-message (its backend's last words, e.g.
   * "Printer cannot print with supplied options."), not in job-state-message.
   */
  private async withCupsWords(o: PrintOutcome, job: string | undefined): Promise<PrintOutcome> {
    if (o.state === 'completed' || job === undefined) return o;
    try {
      const j = await getJobAttributes(this.queue.client, Number(job), {
        requested: ['job-printer-state-message', 'job-state-reasons'],
      });
      const words = j.attributes.string('job-printer-state-message')?.trim();
      return words ? { ...o, message: words.slice(0, 400) } : o;
    } catch {
      return o;
    }
  }

  async follow(ref: string, hooks: Omit<PrintHooks, 'submitted'>): Promise<PrintOutcome | undefined> {
    const viaCups = await this.queue.follow(ref, { ...hooks, progress: () => undefined });
    if (!viaCups) return undefined;
    let task: string | undefined;
    try {
      task = (await getJobAttributes(this.queue.client, Number(ref), { requested: ['job-name'] })).name;
    } catch {
      task = undefined;
    }
    return task ? this.settle(task, viaCups, hooks) : untrusted(viaCups);
  }

  private async settle(
    task: string,
    viaCups: PrintOutcome,
    hooks: Omit<PrintHooks, 'submitted'>,
  ): Promise<PrintOutcome> {
    let behind: IppPrinterDriver | undefined;
    try {
      behind = this.behind((await this.queueAttributes(['device-uri'])).string('device-uri'));
    } catch {
      behind = undefined;
    }
    if (!behind) return untrusted(viaCups);
    let ref: string | undefined;
    try {
      ref = await behind.find(task);
    } catch (e) {
      // The printer behind does not answer: whatever CUPS says (its "completed" means it handed
      // the data on, and its backend calls a job completed when it loses the printer after
      // that), the job is not known to have printed (docs/printers-and-scanners.md, "CUPS queues").
      if (e instanceof IppTransportError && !hooks.signal.aborted) {
        throw new IppTransportError(`the printer behind the CUPS queue (${behind.uri}) does not answer: ${e.message}`);
      }
      ref = undefined;
    }
    if (!ref) {
      if (viaCups.state === 'completed') return untrusted(viaCups);
      // CUPS never handed it on: nothing was printed. Not cancelled by the box, it was CUPS or
      // its backend giving up (measured: the ipp backend ends a job the printer refused at
      // Validate-Job as "canceled at printer"): the printer did not print it, so aborted.
      const o: PrintOutcome = { ...untrusted(viaCups), impressionsCompleted: 0 };
      if (!hooks.signal.aborted) {
        o.state = 'aborted';
        o.message ??= 'CUPS ended the job before the printer took it';
      }
      return o;
    }
    const there = await behind.follow(ref, hooks).catch(() => undefined);
    if (!there) return untrusted(viaCups);
    // A cancel through CUPS reaches the printer as its backend's Cancel-Job: canceled either way.
    if (hooks.signal.aborted && there.state !== 'completed') return { ...there, state: 'canceled' };
    return there;
  }

  find(task: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.queue.find(task, signal);
  }

  maintenance(op: MaintenanceOp): Promise<void> {
    return this.queue.maintenance(op);
  }

  async close(): Promise<void> {
    await this.queue.close();
    await this.behindDriver?.close();
  }
}

/** An outcome as CUPS told it, without its side count (hand-off counts, not printed sides). */
function untrusted(o: PrintOutcome): PrintOutcome {
  const { impressionsCompleted: _handedOff, ...rest } = o;
  return rest;
}
