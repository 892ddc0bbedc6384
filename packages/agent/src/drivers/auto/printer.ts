// `--printer auto`: the box's printer is whatever is attached (docs/printers-and-scanners.md,
// "Plug and play"), in this order: the local CUPS's default queue, else its first queue that
// accepts jobs (by name); else an IPP printer announced over DNS-SD that takes PDF, those on
// loopback first (ipp-usb announces a USB printer there), ipps before ipp on the same device.
import type { PrinterCapability, PrinterStatus } from '@boxhub/protocol';
import {
  disconnectedPrinter,
  type MaintenanceOp,
  type PrintHooks,
  type PrintOutcome,
  type PrinterDriver,
  type PrintRequest,
} from '../types.ts';
import { CupsQueueDriver, type CupsQueueDriverOptions } from '../cups/printer-driver.ts';
import { cupsServer } from '../cups/queue-uri.ts';
import { IppPrinterDriver } from '../ipp/printer-driver.ts';
import { cupsQueues, dnssdServices, ippUri } from './discover.ts';
import { Follower, type AutoOptions, type Found } from './follow.ts';

export interface AutoPrinterOptions extends AutoOptions {
  /** Options of the drivers it makes (tests shorten polls and timeouts). */
  printer?: CupsQueueDriverOptions;
}

export async function findPrinter(o: AutoPrinterOptions = {}): Promise<Found<PrinterDriver> | undefined> {
  const env = o.env ?? process.env;
  const opts = o.printer ?? {};
  const queues = (await cupsQueues(cupsServer(env))).filter((q) => q.accepting);
  const q = queues[0];
  if (q) {
    return {
      uri: q.uri,
      why: q.isDefault
        ? `the default queue '${q.name}' of the local CUPS`
        : `the queue '${q.name}' of the local CUPS (it has no default queue; ${queues.length} accept jobs)`,
      make: () => new CupsQueueDriver(q.uri, opts),
    };
  }
  const services = (await dnssdServices('_ipp._tcp', env)).filter(
    (s) => !s.txt.pdl || s.txt.pdl.split(',').includes('application/pdf'),
  );
  const s = services[0];
  if (s) {
    const uri = ippUri(s);
    return {
      uri,
      why: `'${s.name}', an IPP printer announced over DNS-SD ${s.iface === 'lo' ? 'on loopback (as ipp-usb announces a USB printer)' : `on ${s.iface}`}`,
      make: () => new IppPrinterDriver(uri, opts),
    };
  }
  return undefined;
}

export class AutoPrinterDriver implements PrinterDriver {
  private readonly follower: Follower<PrinterStatus, PrinterDriver>;

  constructor(o: AutoPrinterOptions = {}) {
    this.follower = new Follower('printer', () => findPrinter(o), o);
  }

  /** The driver in use now ('auto' until something is found). */
  get uri(): string {
    return this.follower.current?.uri ?? 'auto';
  }

  private async driver(): Promise<PrinterDriver> {
    if (!this.follower.current) await this.follower.rediscover();
    const d = this.follower.current;
    if (!d) throw new Error('no printer found (printer auto: no CUPS queue, no IPP printer announced over DNS-SD)');
    return d;
  }

  status(signal?: AbortSignal): Promise<PrinterStatus> {
    return this.follower.status(disconnectedPrinter, signal);
  }

  async capability(signal?: AbortSignal): Promise<PrinterCapability | null> {
    return (await this.driver()).capability(signal);
  }
  async print(req: PrintRequest, hooks: PrintHooks): Promise<PrintOutcome> {
    return (await this.driver()).print(req, hooks);
  }
  async follow(ref: string, hooks: Omit<PrintHooks, 'submitted'>): Promise<PrintOutcome | undefined> {
    return (await this.driver()).follow(ref, hooks);
  }
  async find(task: string, signal?: AbortSignal): Promise<string | undefined> {
    return (await this.driver()).find(task, signal);
  }
  async maintenance(op: MaintenanceOp, signal?: AbortSignal): Promise<void> {
    return (await this.driver()).maintenance(op, signal);
  }
  close(): Promise<void> {
    return this.follower.close();
  }
}
