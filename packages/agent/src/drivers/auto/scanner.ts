// `--scanner auto`: the box's scanner is whatever is attached (docs/printers-and-scanners.md,
// "Plug and play"), in this order: an eSCL scanner announced over DNS-SD on loopback (ipp-usb
// announces a USB scanner's eSCL there); else the first device of SANE's list that is not
// itself an eSCL client (a USB scanner's own backend); else an eSCL scanner announced on the
// network; else SANE's eSCL devices (airscan:, escl:) as SANE lists them.
import type { ScannerStatus } from '@boxhub/protocol';
import { disconnectedScanner, ScanFault, type ScannedPage, type ScannerDriver, type ScanRequest } from '../types.ts';
import { EsclScannerDriver, type EsclScannerDriverOptions } from '../escl/scanner-driver.ts';
import { SaneScannerDriver, type SaneScannerDriverOptions } from '../sane/scanner-driver.ts';
import { dnssdServices, esclUri, saneDevices } from './discover.ts';
import { Follower, type AutoOptions, type Found } from './follow.ts';

export interface AutoScannerOptions extends AutoOptions {
  escl?: EsclScannerDriverOptions;
  sane?: SaneScannerDriverOptions;
}

const ESCL_BACKEND = /^(?:airscan|escl):/;

export async function findScanner(o: AutoScannerOptions = {}): Promise<Found<ScannerDriver> | undefined> {
  const env = o.env ?? process.env;
  const escl = (uri: string, why: string): Found<ScannerDriver> => ({
    uri,
    why,
    make: () => new EsclScannerDriver(uri, o.escl ?? {}),
  });
  const sane = (name: string, why: string): Found<ScannerDriver> => {
    const uri = `sane:${name}`;
    return { uri, why, make: () => new SaneScannerDriver(uri, { ...(o.env ? { env: o.env } : {}), ...o.sane }) };
  };
  const [plain, secure, devices] = await Promise.all([
    dnssdServices('_uscan._tcp', env),
    dnssdServices('_uscans._tcp', env),
    saneDevices(env),
  ]);
  const announced = [...plain.map((s) => ({ s, tls: false })), ...secure.map((s) => ({ s, tls: true }))];
  const local = announced.find((a) => a.s.iface === 'lo');
  if (local)
    return escl(
      esclUri(local.s, local.tls),
      `'${local.s.name}', an eSCL scanner announced over DNS-SD on loopback (as ipp-usb announces a USB scanner)`,
    );
  const own = devices.find((d) => !ESCL_BACKEND.test(d.name));
  if (own) return sane(own.name, `'${`${own.vendor} ${own.model}`.trim()}', first in SANE's device list`);
  const remote = announced[0];
  if (remote)
    return escl(
      esclUri(remote.s, remote.tls),
      `'${remote.s.name}', an eSCL scanner announced over DNS-SD on ${remote.s.iface}`,
    );
  const viaSane = devices[0];
  if (viaSane)
    return sane(
      viaSane.name,
      `'${`${viaSane.vendor} ${viaSane.model}`.trim()}', an eSCL scanner in SANE's device list`,
    );
  return undefined;
}

export class AutoScannerDriver implements ScannerDriver {
  private readonly follower: Follower<ScannerStatus, ScannerDriver>;

  constructor(o: AutoScannerOptions = {}) {
    this.follower = new Follower('scanner', () => findScanner(o), o);
  }

  get uri(): string {
    return this.follower.current?.uri ?? 'auto';
  }

  status(signal?: AbortSignal): Promise<ScannerStatus> {
    return this.follower.status(disconnectedScanner, signal);
  }

  async *scan(req: ScanRequest, signal: AbortSignal): AsyncIterable<ScannedPage> {
    const d = this.follower.current;
    if (!d)
      throw new ScanFault(
        'unavailable',
        "no scanner found (scanner auto: no eSCL scanner announced over DNS-SD, nothing in SANE's device list)",
      );
    yield* d.scan(req, signal);
  }

  waitForPaper(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    return this.follower.current ? this.follower.current.waitForPaper(signal, timeoutMs) : Promise.resolve(false);
  }

  close(): Promise<void> {
    return this.follower.close();
  }
}
