// Drivers chosen by URI scheme. Each scheme's module is loaded only when used.
import { disconnectedPrinter, disconnectedScanner, type PrinterDriver, type ScannerDriver } from './types.ts';

export async function createPrinterDriver(uri: string | undefined): Promise<PrinterDriver> {
  if (!uri || uri === 'none') return noPrinter;
  const scheme = uri.slice(0, uri.indexOf(':') + 1);
  switch (scheme) {
    case 'sim:': return new (await import('./sim/printer.ts')).SimPrinter(uri);
    case 'ipp:':
    case 'ipps:': return new (await import('./ipp/printer-driver.ts')).IppPrinterDriver(uri);
    default: throw new Error(`unknown printer URI scheme '${scheme}' (use sim:, ipp:, ipps: or none)`);
  }
}

export async function createScannerDriver(uri: string | undefined): Promise<ScannerDriver> {
  if (!uri || uri === 'none') return noScanner;
  const scheme = uri.slice(0, uri.indexOf(':') + 1);
  switch (scheme) {
    case 'sim:': return new (await import('./sim/scanner.ts')).SimScanner(uri);
    case 'sane:': return new (await import('./sane/scanner-driver.ts')).SaneScannerDriver(uri);
    case 'escl:': return new (await import('./escl/scanner-driver.ts')).EsclScannerDriver(uri);
    default: throw new Error(`unknown scanner URI scheme '${scheme}' (use sim:, sane:, escl: or none)`);
  }
}

const noPrinter: PrinterDriver = {
  uri: 'none',
  status: async () => disconnectedPrinter,
  capability: async () => null,
  print: async () => { throw new Error('no printer configured'); },
  follow: async () => undefined,
  find: async () => undefined,
  maintenance: async () => { throw new Error('no printer configured'); },
  close: async () => undefined,
};
const noScanner: ScannerDriver = {
  uri: 'none',
  status: async () => disconnectedScanner,
  // eslint-disable-next-line require-yield
  scan: async function* () { throw new Error('no scanner configured'); },
  waitForPaper: async () => false,
  close: async () => undefined,
};
