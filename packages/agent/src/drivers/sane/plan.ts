// Turns a scan request into scanimage options, from the values the device itself lists
// (`scanimage -d DEV -A`): source, duplex, mode, resolution, depth. Pure.
import { NotSupportedError, ScanFault, type ScanRequest } from '../types.ts';
import { listValues, resolutionsOf, type SaneOption } from './options.ts';

export interface SanePlan {
  /** Options for scanimage (device, format and batch options are added by the runner). */
  args: string[];
  /** The device scans both sides: pages come front, back, front, back… */
  duplex: boolean;
  /** Where the paper comes from: an ADF scans until it is empty, a flatbed one page. */
  feed: 'adf' | 'flatbed';
  /** Pages to scan (a flatbed, or a device without a --source option: one page). */
  batchCount?: number;
}

const COLOR = /^colou?r$/i;
const GREY = /^gr[ae]y(scale)?$/i;

function pick(values: string[], exact: RegExp, loose: RegExp, not?: RegExp): string | undefined {
  return values.find((v) => exact.test(v)) ?? values.find((v) => loose.test(v) && !not?.test(v));
}

/**
 * Source: a duplex source ("ADF Duplex", "Duplex") when the request is duplex and the device has
 * one; else an ADF source ("ADF", "ADF Front", "Automatic Document Feeder"), with the device's
 * own duplex switch (--adf-mode Duplex, --duplex=yes) when it has one; else the flatbed (one
 * page). A device without --source gets one page: scanning "until empty" on a flatbed would
 * never end. A duplex request on a simplex device scans the fronts.
 */
export function planScan(opts: Map<string, SaneOption>, req: ScanRequest, device: string): SanePlan {
  const resolutions = resolutionsOf(opts.get('resolution'));
  if (!resolutions.includes(req.resolution)) {
    throw new NotSupportedError(
      `${device} cannot scan at ${req.resolution} dpi (it lists ${resolutions.join(', ') || 'no resolution'})`,
    );
  }
  const modes = listValues(opts.get('mode'));
  const mode =
    req.color === 'color'
      ? pick(modes, COLOR, /colou?r/i, /lineart|halftone/i)
      : pick(modes, GREY, /gr[ae]y/i, /diffusion|dither|halftone/i);
  if (!mode) throw new NotSupportedError(`${device} has no ${req.color} mode (it lists ${modes.join(', ') || 'none'})`);
  const args = ['--mode', mode, '--resolution', String(req.resolution)];
  if (listValues(opts.get('depth')).includes('8')) args.push('--depth', '8');

  const sources = listValues(opts.get('source'));
  if (sources.length === 0) return { args, duplex: false, feed: 'flatbed', batchCount: 1 };
  const duplexSource = sources.find((v) => /duplex/i.test(v));
  const adfSource = sources.find((v) => /\badf\b|feeder|automatic document/i.test(v) && !/duplex|back/i.test(v));
  if (req.duplex && duplexSource) {
    args.push('--source', duplexSource);
    return { args, duplex: true, feed: 'adf' };
  }
  if (adfSource) {
    args.push('--source', adfSource);
    let duplex = false;
    const adfModes = listValues(opts.get('adf-mode'));
    if (adfModes.length > 0) {
      const m = req.duplex ? adfModes.find((v) => /duplex/i.test(v)) : undefined;
      const simplex = adfModes.find((v) => /simplex/i.test(v));
      if (m) {
        args.push('--adf-mode', m);
        duplex = true;
      } else if (simplex) args.push('--adf-mode', simplex);
    } else if (opts.has('duplex') && opts.get('duplex')?.value !== 'inactive') {
      args.push(`--duplex=${req.duplex ? 'yes' : 'no'}`);
      duplex = req.duplex;
    }
    return { args, duplex, feed: 'adf' };
  }
  if (duplexSource && !req.duplex) {
    // Only a duplex feeder (and maybe a flatbed): a simplex request still uses the feeder and
    // keeps the fronts (the runner sees front/back and the driver drops the backs).
    args.push('--source', duplexSource);
    return { args, duplex: true, feed: 'adf' };
  }
  const flatbed = sources.find((v) => /flatbed|platen|normal/i.test(v)) ?? sources[0]!;
  args.push('--source', flatbed);
  return { args, duplex: false, feed: 'flatbed', batchCount: 1 };
}

/**
 * Read-only options through which some backends report paper in the feeder (fujitsu,
 * canon_dr, epjitsu: page-loaded; others: paper-loaded, document-loaded, adf-loaded). SANE has
 * no standard for it; the test backend has none.
 */
export const PAPER_SENSORS = ['page-loaded', 'paper-loaded', 'document-loaded', 'adf-loaded'];

/** The paper sensor option of a device and its reading, or undefined when it has none. */
export function paperSensor(opts: Map<string, SaneOption>): { name: string; loaded: boolean } | undefined {
  for (const name of PAPER_SENSORS) {
    const o = opts.get(name);
    if (o && o.value !== undefined && o.value !== 'inactive') return { name, loaded: /^(yes|true|1)$/i.test(o.value) };
  }
  return undefined;
}

/** SANE_Status values (SANE standard 1.0, "Status Type"); scanimage exits with the status. */
export const SANE_STATUS = {
  GOOD: 0,
  UNSUPPORTED: 1,
  CANCELLED: 2,
  DEVICE_BUSY: 3,
  INVAL: 4,
  EOF: 5,
  JAMMED: 6,
  NO_DOCS: 7,
  COVER_OPEN: 8,
  IO_ERROR: 9,
  NO_MEM: 10,
  ACCESS_DENIED: 11,
} as const;

/**
 * The status scanimage exits with, read from what it printed: the last status it reports, a
 * page's ("Scanned page 3. (scanner status = 6)") or sane_start's message ("scanimage:
 * sane_start: Document feeder jammed"), EOF and NO_DOCS as GOOD, as scanimage 1.2 exits. For a
 * scanimage that said "Batch terminated" and then hung in the backend's sane_cancel (batch.ts).
 */
export function statusOfBatchEnd(stderr: string): number {
  const messages: Record<string, number> = {
    'Document feeder out of documents': SANE_STATUS.NO_DOCS,
    'Document feeder jammed': SANE_STATUS.JAMMED,
    'Scanner cover is open': SANE_STATUS.COVER_OPEN,
    'Error during device I/O': SANE_STATUS.IO_ERROR,
    'Device busy': SANE_STATUS.DEVICE_BUSY,
    'Access to resource has been denied': SANE_STATUS.ACCESS_DENIED,
  };
  let status: number = SANE_STATUS.GOOD;
  for (const line of stderr.split('\n')) {
    const page = /\(scanner status = (\d+)\)/.exec(line);
    const start = /sane_start: (.+)$/.exec(line.trim());
    if (page) status = Number(page[1]);
    else if (start) status = messages[start[1]!] ?? SANE_STATUS.IO_ERROR;
  }
  // 5 is SANE_STATUS_EOF: the page ended as a page should.
  return status === 5 || status === SANE_STATUS.NO_DOCS ? SANE_STATUS.GOOD : status;
}

/**
 * What a scanimage exit means for the scan: undefined = the batch ended normally (GOOD; NO_DOCS:
 * the feeder is empty, which ends a batch and is no fault), else the ScanFault to throw.
 */
export function faultOfExit(code: number | null, stderr: string, device: string): ScanFault | undefined {
  const last =
    stderr
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !/^Scann(ing|ed) page|^Batch terminated|^Output format/.test(l))
      .pop() ?? '';
  const detail = last ? `: ${last.replace(/^scanimage: /, '')}` : '';
  switch (code) {
    case SANE_STATUS.GOOD:
    case SANE_STATUS.NO_DOCS:
      return undefined;
    case SANE_STATUS.JAMMED:
      return new ScanFault('jammed', `${device} reports a paper jam${detail}`);
    case SANE_STATUS.COVER_OPEN:
      return new ScanFault('cover-open', `${device} reports its cover open${detail}`);
    case SANE_STATUS.DEVICE_BUSY:
      return new ScanFault('unavailable', `${device} is busy${detail}`);
    case SANE_STATUS.ACCESS_DENIED:
      return new ScanFault('unavailable', `access to ${device} was denied${detail}`);
    case SANE_STATUS.UNSUPPORTED:
      if (/open of device/.test(stderr)) return new ScanFault('unavailable', `cannot open ${device}${detail}`);
      return new ScanFault('io', `scanimage failed (status 1)${detail}`);
    default:
      return new ScanFault('io', `scanimage failed (${code === null ? 'killed' : `status ${code}`})${detail}`);
  }
}
