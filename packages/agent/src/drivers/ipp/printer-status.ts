// Pure mapping of Get-Printer-Attributes to the box's PrinterStatus. The rules are listed in
// docs/printers-and-scanners.md ("IPP printer status").
import type { PrinterStatus } from '@boxhub/protocol';
import { printerErrorCode } from '@boxhub/protocol/printer-errors.ts';
import type { IppAttributes } from './attributes.ts';
import { PrinterState } from './tags.ts';
import { canDrive } from './capability.ts';

/** Attributes status() asks for: small answer, fast poll. */
export const STATUS_ATTRIBUTES = [
  'printer-state',
  'printer-state-reasons',
  'printer-make-and-model',
  'printer-info',
  'printer-device-id',
  'document-format-supported',
  'ipp-features-supported',
  'ipp-versions-supported',
  'marker-types',
  'printer-supply',
  'printer-is-accepting-jobs',
];

const clip = (s: string, n = 128) => (s.length > n ? s.slice(0, n) : s);

/** IEEE 1284 device id "MFG:x;MDL:y;…" (printer-device-id, PWG 5107.2) as a map. */
export function parseDeviceId(id: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of id.split(';')) {
    const i = part.indexOf(':');
    if (i > 0) out.set(part.slice(0, i).trim().toUpperCase(), part.slice(i + 1).trim());
  }
  return out;
}

/**
 * make = MFG (or MANUFACTURER) of printer-device-id, else the first word of
 * printer-make-and-model; model = MDL (or MODEL), else make-and-model without the make,
 * else printer-info.
 */
export function makeAndModel(a: IppAttributes): { make: string; model: string } {
  const id = parseDeviceId(a.string('printer-device-id') ?? '');
  const mm = (a.string('printer-make-and-model') ?? '').trim();
  const make = id.get('MFG') ?? id.get('MANUFACTURER') ?? mm.split(/\s+/)[0] ?? '';
  let model = id.get('MDL') ?? id.get('MODEL');
  if (!model) model = make && mm.toLowerCase().startsWith(make.toLowerCase()) ? mm.slice(make.length).trim() : mm;
  if (!model) model = (a.string('printer-info') ?? '').trim();
  return { make: clip(make), model: clip(model) };
}

/**
 * ipp-usb (the IPP-over-USB proxy) serves each USB printer on loopback from port 60000 up
 * (its `http-min-port` default). So: a loopback host with a port >= 60000 is 'usb', anything
 * else 'network'. A driver option overrides it for proxies configured otherwise.
 */
export function connectionTypeFor(printerUri: string): 'usb' | 'network' {
  const u = new URL(printerUri);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host);
  const port = Number(u.port || 631);
  return loopback && port >= 60000 ? 'usb' : 'network';
}

/**
 * inkjet when marker-types (RFC 3805 prtMarkerSuppliesType keywords) or the printer-supply
 * `type=` (PWG 5100.13 printer-supply) names ink; laser when they name toner; else other.
 * Ink ribbons belong to impact printers, not inkjets.
 */
export function kindOf(a: IppAttributes): 'inkjet' | 'laser' | 'other' {
  const supplyTypes = a
    .octetStrings('printer-supply')
    .concat(a.strings('printer-supply'))
    .map((s) => /(?:^|;)type=([^;]*)/.exec(s)?.[1] ?? '');
  const types = a
    .strings('marker-types')
    .concat(supplyTypes)
    .map((t) => t.toLowerCase().replace(/[-_]/g, ''));
  if (types.some((t) => t.includes('ink') && !t.includes('ribbon') && !t.startsWith('waste'))) return 'inkjet';
  if (types.some((t) => t.includes('toner') && !t.startsWith('waste'))) return 'laser';
  return 'other';
}

/**
 * Supported = the box can print on it: it takes application/pdf (the box sends PDF, and JPG
 * tasks as JPEG or as a PDF page). The same rule makes capability() null (API 30302), so the
 * Device resource and the capability endpoint never disagree. PWG-raster-only printers (no
 * PDF) are not driven: the box does not rasterise.
 */
export function isSupported(a: IppAttributes): boolean {
  return canDrive(a);
}

export function claimsJobCounters(a: IppAttributes): boolean {
  return (
    a.strings('ipp-features-supported').includes('ipp-everywhere') ||
    a.strings('ipp-versions-supported').some((v) => /^2\./.test(v))
  );
}

export function statusFrom(a: IppAttributes, o: { connectionType: 'usb' | 'network'; strict: boolean }): PrinterStatus {
  const stateNum = a.integer('printer-state');
  const state = stateNum !== undefined ? PrinterState[stateNum as keyof typeof PrinterState] : undefined;
  const reasons = a
    .strings('printer-state-reasons')
    .slice(0, 32)
    .map((r) => clip(r));
  const { make, model } = makeAndModel(a);
  const s: PrinterStatus = {
    connected: true,
    supported: isSupported(a),
    connection_type: o.connectionType,
    error_code: printerErrorCode(state, reasons),
    state_reasons: reasons,
    kind: kindOf(a),
    strict: o.strict,
    // Head cleaning and nozzle checks have no IPP operation; they need a vendor path.
    maintenance: [],
  };
  if (make) s.make = make;
  if (model) s.model = model;
  if (state) s.state = state;
  return s;
}
