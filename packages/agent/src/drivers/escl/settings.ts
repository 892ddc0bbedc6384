// eSCL documents the driver reads and writes (Mopria eSCL; docs/printers-and-scanners.md, "eSCL scanning"):
// ScannerCapabilities → what to ask for, ScanSettings ← the job, ScannerStatus → ADF state.
// Elements are read by local name, whatever namespace prefix a device uses. Pure.
import { NotSupportedError, ScanFault, type ScanRequest } from '../types.ts';

/** Text of every element named `local` (any namespace prefix). */
export function elements(xml: string, local: string): string[] {
  const re = new RegExp(`<(?:[\\w.-]+:)?${local}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:[\\w.-]+:)?${local}>`, 'g');
  return [...xml.matchAll(re)].map((m) => m[1]!.trim());
}

const has = (xml: string, local: string) => new RegExp(`<(?:[\\w.-]+:)?${local}[\\s>/]`).test(xml);
const num = (s: string | undefined) => (s !== undefined && /^-?\d+$/.test(s) ? Number(s) : undefined);

export interface EsclCapabilities {
  version: string;
  resolutions: number[];
  platen: boolean;
  adf: boolean;
  duplex: boolean;
  colorModes: string[];
  /** The ADF's (else the platen's) largest region, 1/300 inch. */
  maxWidth?: number;
  maxHeight?: number;
  compression?: { min: number; max: number; step: number };
}

export function parseCapabilities(caps: string): EsclCapabilities {
  const adfXml = elements(caps, 'Adf')[0];
  const platenXml = elements(caps, 'Platen')[0];
  const area = adfXml ?? platenXml ?? '';
  const c: EsclCapabilities = {
    version: elements(caps, 'Version')[0] ?? '2.6',
    resolutions: [
      ...new Set(
        elements(caps, 'XResolution')
          .map(Number)
          .filter((n) => Number.isInteger(n) && n >= 1 && n <= 4800),
      ),
    ]
      .sort((a, b) => a - b)
      .slice(0, 16),
    platen: platenXml !== undefined,
    adf: adfXml !== undefined,
    duplex: has(caps, 'AdfDuplexInputCaps'),
    colorModes: [...new Set(elements(caps, 'ColorMode'))],
  };
  const maxW = num(elements(area, 'MaxWidth')[0]),
    maxH = num(elements(area, 'MaxHeight')[0]);
  if (maxW) c.maxWidth = maxW;
  if (maxH) c.maxHeight = maxH;
  const cf = elements(caps, 'CompressionFactorSupport')[0];
  if (cf) {
    const min = num(elements(cf, 'Min')[0]),
      max = num(elements(cf, 'Max')[0]);
    if (min !== undefined && max !== undefined && max > min)
      c.compression = { min, max, step: Math.max(1, num(elements(cf, 'Step')[0]) ?? 1) };
  }
  return c;
}

/**
 * CompressionFactor for a JPEG quality: lower is a better image (the convention of eSCL
 * clients such as sane-airscan's author's go-mfp: "Lower num, better image"), mapped linearly
 * onto the device's range and step. Devices interpret it their own way; the page pipeline
 * reads the real quality back from each JPEG's tables, so a device that does otherwise costs a
 * re-encode, not a wrong file.
 */
export function compressionFactor(quality: number, r: { min: number; max: number; step: number }): number {
  const raw = r.min + ((r.max - r.min) * (100 - quality)) / 99;
  const stepped = r.min + Math.round((raw - r.min) / r.step) * r.step;
  return Math.min(r.max, Math.max(r.min, stepped));
}

/** A4 in 1/300 inch (eSCL ContentRegionUnits escl:ThreeHundredthsOfInches). */
export const A4_300THS = { width: 2480, height: 3508 } as const;

export interface JobPlan {
  xml: string;
  feeder: boolean;
  duplex: boolean;
}

export function scanSettings(caps: EsclCapabilities, req: ScanRequest, device: string): JobPlan {
  if (!caps.resolutions.includes(req.resolution)) {
    throw new NotSupportedError(
      `${device} cannot scan at ${req.resolution} dpi (it lists ${caps.resolutions.join(', ') || 'no resolution'})`,
    );
  }
  const mode = req.color === 'color' ? 'RGB24' : 'Grayscale8';
  if (caps.colorModes.length > 0 && !caps.colorModes.includes(mode))
    throw new NotSupportedError(`${device} has no ${mode} colour mode (it lists ${caps.colorModes.join(', ')})`);
  if (!caps.adf && !caps.platen) throw new NotSupportedError(`${device} lists neither a feeder nor a platen`);
  const feeder = caps.adf;
  const duplex = feeder && req.duplex && caps.duplex;
  const width = Math.min(A4_300THS.width, caps.maxWidth ?? A4_300THS.width);
  const height = Math.min(A4_300THS.height, caps.maxHeight ?? A4_300THS.height);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<scan:ScanSettings xmlns:scan="http://schemas.hp.com/imaging/escl/2011/05/03" xmlns:pwg="http://www.pwg.org/schemas/2010/12/sm">',
    `  <pwg:Version>${caps.version.replace(/[^\d.]/g, '') || '2.6'}</pwg:Version>`,
    '  <scan:Intent>Document</scan:Intent>',
    '  <pwg:ScanRegions pwg:MustHonor="false"><pwg:ScanRegion>',
    '    <pwg:ContentRegionUnits>escl:ThreeHundredthsOfInches</pwg:ContentRegionUnits>',
    `    <pwg:XOffset>0</pwg:XOffset><pwg:YOffset>0</pwg:YOffset><pwg:Width>${width}</pwg:Width><pwg:Height>${height}</pwg:Height>`,
    '  </pwg:ScanRegion></pwg:ScanRegions>',
    `  <pwg:InputSource>${feeder ? 'Feeder' : 'Platen'}</pwg:InputSource>`,
    '  <pwg:DocumentFormat>image/jpeg</pwg:DocumentFormat>',
    '  <scan:DocumentFormatExt>image/jpeg</scan:DocumentFormatExt>',
    `  <scan:ColorMode>${mode}</scan:ColorMode>`,
    `  <scan:XResolution>${req.resolution}</scan:XResolution>`,
    `  <scan:YResolution>${req.resolution}</scan:YResolution>`,
    ...(feeder ? [`  <scan:Duplex>${duplex}</scan:Duplex>`] : []),
    ...(caps.compression
      ? [`  <scan:CompressionFactor>${compressionFactor(req.jpegQuality, caps.compression)}</scan:CompressionFactor>`]
      : []),
    '</scan:ScanSettings>',
  ];
  return { xml: lines.join('\n'), feeder, duplex };
}

/** ScannerStatus AdfState values (Mopria eSCL) and what they mean for a scan. */
export function adfMeaning(
  state: string | undefined,
): 'loaded' | 'empty' | 'jammed' | 'misfeed' | 'cover-open' | 'unknown' {
  switch (state) {
    case 'ScannerAdfLoaded':
    case 'ScannerAdfProcessing': // Kyocera reports this with paper in the feeder
      return 'loaded';
    case 'ScannerAdfEmpty':
      return 'empty';
    case 'ScannerAdfMispick':
    case 'ScannerAdfMultipickDetected':
      return 'misfeed';
    case 'ScannerAdfJam':
    case 'ScannerAdfDuplexPageTooShort':
    case 'ScannerAdfDuplexPageTooLong':
      return 'jammed';
    case 'ScannerAdfDoorOpen':
    case 'ScannerAdfHatchOpen':
      return 'cover-open';
    default:
      return 'unknown';
  }
}

/** The fault an ADF state stands for, if any. */
export function adfFault(state: string | undefined, device: string): ScanFault | undefined {
  const m = adfMeaning(state);
  if (m === 'jammed') return new ScanFault('jammed', `${device} reports ${state}`);
  if (m === 'misfeed') return new ScanFault('misfeed', `${device} reports ${state}`);
  if (m === 'cover-open') return new ScanFault('cover-open', `${device} reports ${state}`);
  return undefined;
}

/** A job as ScannerStatus lists it (scan:Jobs/scan:JobInfo); devices that list none give []. */
export interface EsclJobInfo {
  uri: string;
  state: string;
  reasons: string[];
}

export function jobInfos(status: string): EsclJobInfo[] {
  return elements(status, 'JobInfo').map((j) => ({
    uri: elements(j, 'JobUri')[0] ?? '',
    state: elements(j, 'JobState')[0] ?? '',
    reasons: elements(j, 'JobStateReason'),
  }));
}

/** Seconds of a Retry-After header (RFC 9110 §10.2.3: delay-seconds or an HTTP date), in ms. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
