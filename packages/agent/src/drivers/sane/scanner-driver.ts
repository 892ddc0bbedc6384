// ScannerDriver for SANE devices through scanimage: URI `sane:<device-name>`, e.g. `sane:test`,
// `sane:epson2:libusb:001:004`, `sane:airscan:e0:Kyocera`. Status only; scanning is elsewhere.
import type { ScannerStatus } from '@boxhub/protocol';
import { disconnectedScanner, type ScannerDriver } from '../types.ts';
import { listValues, parseOptions, resolutionsOf } from './options.ts';
import { runScanimage, type RunOptions } from './run-scanimage.ts';

export interface SaneScannerDriverOptions {
  /** Environment for scanimage, e.g. SANE_CONFIG_DIR. */
  env?: NodeJS.ProcessEnv;
  /** Per-command timeout; `scanimage -L` probes every backend, seconds on a real box. */
  timeoutMs?: number;
  bin?: string;
}

export interface SaneDevice { name: string; vendor: string; model: string; type: string }

/** `scanimage -L` in a tab-separated format (the -f/--formatted-device-list directives). */
export async function listSaneDevices(o: RunOptions = {}): Promise<SaneDevice[]> {
  const r = await runScanimage(['--formatted-device-list=%d\t%v\t%m\t%t%n'], o);
  if (r.code !== 0) return [];
  return r.stdout.split('\n').filter((l) => l.includes('\t')).map((l) => {
    const [name = '', vendor = '', model = '', type = ''] = l.split('\t');
    return { name, vendor, model, type };
  });
}

/**
 * The SANE backend names the link: `test` is virtual; network backends (net, airscan, escl)
 * or a device name holding `net:`, `/net/`, or an IP address are network; the rest
 * (libusb:, usb, pixma serials, fujitsu…) are USB.
 */
export function saneConnectionType(device: string): 'usb' | 'network' | 'virtual' {
  const backend = device.split(':')[0] ?? '';
  if (backend === 'test') return 'virtual';
  if (['net', 'airscan', 'escl'].includes(backend) || /(^|[:/])net[:/]|\b\d{1,3}(\.\d{1,3}){3}\b|https?:/.test(device)) return 'network';
  return 'usb';
}

export class SaneScannerDriver implements ScannerDriver {
  readonly uri: string;
  readonly device: string;
  private readonly run: RunOptions;
  private identity: SaneDevice | undefined;

  constructor(uri: string, options: SaneScannerDriverOptions = {}) {
    if (!uri.startsWith('sane:') || uri.length <= 5) throw new TypeError(`not a sane:<device> URI: ${uri}`);
    this.uri = uri;
    this.device = uri.slice('sane:'.length);
    this.run = { timeoutMs: options.timeoutMs ?? 20_000 };
    if (options.env) this.run.env = options.env;
    if (options.bin) this.run.bin = options.bin;
  }

  /** -L for make/model (cached once found), -A to prove the device opens and read its options. */
  async status(signal?: AbortSignal): Promise<ScannerStatus> {
    const ro: RunOptions = signal ? { ...this.run, signal } : this.run;
    try {
      if (!this.identity) {
        const list = await listSaneDevices(ro);
        // `sane:test` names the backend; -L lists its devices as test:0, test:1.
        this.identity = list.find((d) => d.name === this.device) ?? list.find((d) => d.name.startsWith(`${this.device}:`));
      }
      const r = await runScanimage(['-d', this.device, '-A'], ro);
      if (r.code !== 0) return { ...disconnectedScanner, connection_type: saneConnectionType(this.device) };
      const opts = parseOptions(r.stdout);
      const sources = listValues(opts.get('source'));
      const resolutions = resolutionsOf(opts.get('resolution'));
      const s: ScannerStatus = {
        connected: true,
        // Driveable = scanimage can set a resolution and a colour mode on it.
        supported: resolutions.length > 0 && opts.has('mode'),
        connection_type: saneConnectionType(this.device),
        state: 'idle',
        error_code: 0,
        // Duplex shows as a source ("ADF Duplex") or an option (--duplex, --adf-mode Duplex).
        duplex: sources.some((v) => /duplex/i.test(v)) || opts.has('duplex') || listValues(opts.get('adf-mode')).some((v) => /duplex/i.test(v)),
        resolutions,
      };
      if (this.identity) {
        s.make = this.identity.vendor.slice(0, 128);
        s.model = this.identity.model.slice(0, 128);
      }
      return s;
    } catch (e) {
      if (signal?.aborted) throw e;
      return { ...disconnectedScanner, connection_type: saneConnectionType(this.device) };
    }
  }

  async close(): Promise<void> {
    // Nothing held between calls: each status() runs its own short-lived scanimage.
  }
}
