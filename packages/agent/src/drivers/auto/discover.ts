// What is attached to the box, for `--printer auto` and `--scanner auto`
// (docs/printers-and-scanners.md, "Plug and play"): the local CUPS's queues (CUPS-Get-Default,
// CUPS-Get-Printers), IPP printers and eSCL scanners announced over DNS-SD (avahi-browse; this
// is how ipp-usb announces a USB device's IPP and eSCL on loopback), and SANE's device list
// (scanimage -L). Each look is bounded in time and never throws: nothing found is [].
import { execFile } from 'node:child_process';
import { IppClient } from '../ipp/client.ts';
import { IppAttributes, keyword } from '../ipp/attributes.ts';
import { PrinterState } from '../ipp/tags.ts';

export interface CupsQueue {
  name: string;
  /** ipp://SERVER/printers/NAME */
  uri: string;
  isDefault: boolean;
  accepting: boolean;
  state: string | undefined;
}

/** The queues of the CUPS at `server` (host:port), the default one first, then by name. */
export async function cupsQueues(server: string, timeoutMs = 3000): Promise<CupsQueue[]> {
  const client = new IppClient(`ipp://${server}/`, { timeoutMs });
  try {
    let defaultName: string | undefined;
    try {
      const d = await client.request('CUPS-Get-Default', {
        operation: [keyword('requested-attributes', 'printer-name')],
      });
      if (d.code < 0x0400) defaultName = IppAttributes.of(d, 'printer').string('printer-name');
    } catch {
      return []; // no CUPS there
    }
    const res = await client.request('CUPS-Get-Printers', {
      operation: [
        keyword(
          'requested-attributes',
          'printer-name',
          'printer-uri-supported',
          'printer-is-accepting-jobs',
          'printer-state',
        ),
      ],
    });
    if (res.code >= 0x0400) return [];
    const queues = IppAttributes.each(res, 'printer').flatMap((a) => {
      const name = a.string('printer-name');
      if (!name) return [];
      const state = a.integer('printer-state');
      return [
        {
          name,
          uri: `ipp://${server}/printers/${encodeURIComponent(name)}`,
          isDefault: name === defaultName,
          accepting: a.boolean('printer-is-accepting-jobs') ?? true,
          state: state !== undefined ? PrinterState[state as keyof typeof PrinterState] : undefined,
        },
      ];
    });
    return queues.sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.name.localeCompare(b.name));
  } catch {
    return [];
  } finally {
    client.close();
  }
}

export interface DnssdService {
  name: string;
  /** avahi's interface name: `lo` for a device ipp-usb announces on loopback. */
  iface: string;
  address: string;
  port: number;
  txt: Record<string, string>;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: timeoutMs, maxBuffer: 4 << 20 }, (_err, stdout) =>
      resolve(typeof stdout === 'string' ? stdout : ''),
    );
  });
}

/** avahi-browse -p escapes a name's special bytes as \DDD (decimal). */
function unescapeAvahi(s: string): string {
  return s.replace(/\\(\d{3})/g, (_m, d: string) => String.fromCharCode(Number(d))).replace(/\\(.)/g, '$1');
}

/** One `=` line of avahi-browse -p: =;iface;proto;name;type;domain;host;address;port;"txt"… */
export function parseAvahiLine(line: string): DnssdService | undefined {
  if (!line.startsWith('=;')) return undefined;
  const f = line.split(';');
  if (f.length < 10 || f[2] !== 'IPv4') return undefined;
  const port = Number(f[8]);
  if (!Number.isInteger(port) || port <= 0) return undefined;
  const txt: Record<string, string> = {};
  for (const m of f
    .slice(9)
    .join(';')
    .matchAll(/"([^"]*)"/g)) {
    const i = m[1]!.indexOf('=');
    if (i > 0) txt[m[1]!.slice(0, i).toLowerCase()] = m[1]!.slice(i + 1);
  }
  return { iface: f[1]!, name: unescapeAvahi(f[3]!), address: f[7]!, port, txt };
}

/**
 * Services of one DNS-SD type (`_ipp._tcp`, `_uscan._tcp`…) that avahi resolves now, loopback
 * ones (ipp-usb's USB devices) first. avahi-browse is from avahi-utils; without it, [].
 */
export async function dnssdServices(
  type: string,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 5000,
): Promise<DnssdService[]> {
  const out = await run('avahi-browse', ['-rtpk', type], env, timeoutMs);
  const seen = new Set<string>();
  const list: DnssdService[] = [];
  for (const line of out.split('\n')) {
    const s = parseAvahiLine(line);
    if (!s) continue;
    const key = `${s.name}\u0000${s.address}:${s.port}`;
    if (seen.has(key)) continue;
    seen.add(key);
    list.push(s);
  }
  return list.sort((a, b) => Number(b.iface === 'lo') - Number(a.iface === 'lo') || a.name.localeCompare(b.name));
}

/** An IPP printer's URI from its DNS-SD record (`rp` is its resource path, PWG 5100.14). */
export function ippUri(s: DnssdService, tls = false): string {
  const host = s.address.includes(':') ? `[${s.address}]` : s.address;
  return `${tls ? 'ipps' : 'ipp'}://${host}:${s.port}/${(s.txt.rp ?? 'ipp/print').replace(/^\//, '')}`;
}

/** An eSCL scanner's base URL from its DNS-SD record (`rs` is its resource path, eSCL spec). */
export function esclUri(s: DnssdService, tls = false): string {
  const host = s.address.includes(':') ? `[${s.address}]` : s.address;
  return `escl:${tls ? 'https' : 'http'}://${host}:${s.port}/${(s.txt.rs ?? 'eSCL').replace(/^\/|\/$/g, '')}`;
}

export interface SaneDevice {
  name: string;
  vendor: string;
  model: string;
  type: string;
}

/** SANE's device list (scanimage -L), as the box's SANE configuration finds it. */
export async function saneDevices(env: NodeJS.ProcessEnv = process.env, timeoutMs = 20_000): Promise<SaneDevice[]> {
  const out = await run('scanimage', ['-f', '%d|%v|%m|%t%n', '-L'], env, timeoutMs);
  return out.split('\n').flatMap((l) => {
    const [name, vendor, model, type] = l.split('|');
    return name && vendor !== undefined ? [{ name, vendor, model: model ?? '', type: type ?? '' }] : [];
  });
}
