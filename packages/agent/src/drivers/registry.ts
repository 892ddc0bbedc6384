// Drivers chosen by URI scheme. Each scheme's module is loaded only when used.
// `auto` finds what is attached and follows it when it goes and comes back (drivers/auto/).
import { disconnectedPrinter, disconnectedScanner, type PrinterDriver, type ScannerDriver } from './types.ts';
import { isCupsQueueUri } from './cups/queue-uri.ts';
import type { AutoPrinterOptions } from './auto/printer.ts';
import type { AutoScannerOptions } from './auto/scanner.ts';

/** What `auto` needs: where to say what it chose, its environment, its drivers' options. */
export type DriverContext = AutoPrinterOptions & AutoScannerOptions;

export async function createPrinterDriver(uri: string | undefined, ctx: DriverContext = {}): Promise<PrinterDriver> {
  if (!uri || uri === 'none') return noPrinter;
  if (uri === 'auto') return new (await import('./auto/printer.ts')).AutoPrinterDriver(ctx);
  const scheme = uri.slice(0, uri.indexOf(':') + 1);
  switch (scheme) {
    case 'sim:':
      return new (await import('./sim/printer.ts')).SimPrinter(uri);
    case 'cups:':
      return new (await import('./cups/printer-driver.ts')).CupsQueueDriver(uri);
    case 'ipp:':
    case 'ipps:':
      // A CUPS queue (…/printers/NAME) is driven as a queue: its counts and states are CUPS's
      // (docs/printers-and-scanners.md, "CUPS queues").
      if (isCupsQueueUri(uri)) return new (await import('./cups/printer-driver.ts')).CupsQueueDriver(uri);
      return new (await import('./ipp/printer-driver.ts')).IppPrinterDriver(uri);
    default:
      throw new Error(`unknown printer URI scheme '${scheme}' (use sim:, ipp:, ipps:, cups:NAME, auto or none)`);
  }
}

export async function createScannerDriver(uri: string | undefined, ctx: DriverContext = {}): Promise<ScannerDriver> {
  if (!uri || uri === 'none') return noScanner;
  if (uri === 'auto') return new (await import('./auto/scanner.ts')).AutoScannerDriver(ctx);
  const scheme = uri.slice(0, uri.indexOf(':') + 1);
  switch (scheme) {
    case 'sim:':
      return new (await import('./sim/scanner.ts')).SimScanner(uri);
    case 'sane:':
      return new (await import('./sane/scanner-driver.ts')).SaneScannerDriver(uri);
    case 'escl:':
      return new (await import('./escl/scanner-driver.ts')).EsclScannerDriver(uri);
    default:
      throw new Error(`unknown scanner URI scheme '${scheme}' (use sim:, sane:, escl:, auto or none)`);
  }
}

const noPrinter: PrinterDriver = {
  uri: 'none',
  status: async () => disconnectedPrinter,
  capability: async () => null,
  print: async () => {
    throw new Error('no printer configured');
  },
  follow: async () => undefined,
  find: async () => undefined,
  maintenance: async () => {
    throw new Error('no printer configured');
  },
  close: async () => undefined,
};
const noScanner: ScannerDriver = {
  uri: 'none',
  status: async () => disconnectedScanner,
  scan: () => {
    throw new Error('no scanner configured');
  },
  waitForPaper: async () => false,
  close: async () => undefined,
};
