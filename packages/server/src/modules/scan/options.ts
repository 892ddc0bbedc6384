// Scan create's options (docs/api.md, "POST /api/scan/create"): their defaults, and what this
// box's scanner can do. The route schema has already checked types and bounds.
import { randomBytes } from 'node:crypto';
import { ApiError, api, type ScanJobOptions, type ScannerStatus } from '@boxhub/protocol';

export interface ResolvedScan {
  job: ScanJobOptions;
  callbackUrl: string | undefined;
}

/** A new direct-transfer secret: Standard Webhooks' form, `whsec_` + base64 of 32 random bytes. */
export const newDirectSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * `direct_addr` as the box uses it (docs/direct-transfer.md, "HTTP/1.1 and HTTP/2"): the
 * fragment `#h2c` (never sent on the wire) asks for cleartext HTTP/2 with prior knowledge; it
 * is taken off the address. Any other fragment is refused: it would mean nothing to the box.
 */
export function directTarget(addr: string): { addr: string; h2c: boolean } {
  const hash = addr.indexOf('#');
  if (hash < 0) return { addr, h2c: false };
  const fragment = addr.slice(hash + 1);
  const bare = addr.slice(0, hash);
  if (fragment !== 'h2c')
    throw new ApiError(
      'INVALID_PARAMETER',
      `options.direct_addr: the only fragment understood is '#h2c' (cleartext HTTP/2), got '#${fragment}'`,
    );
  if (!bare.toLowerCase().startsWith('http:'))
    throw new ApiError(
      'INVALID_PARAMETER',
      "options.direct_addr: '#h2c' is for http addresses; over https HTTP/2 is negotiated by ALPN",
    );
  return { addr: bare, h2c: true };
}

/** The defaults (docs/scanning.md) applied; options that only make sense together checked together. */
export function resolveScanOptions(
  o: api.ScanOptions = {},
): ResolvedScan & { directMode: number; directAddr: string | undefined } {
  const d = api.SCAN_DEFAULTS;
  const directMode = o.direct_mode ?? d.direct_mode;
  if (directMode > 0 && !o.direct_addr)
    throw new ApiError('INVALID_PARAMETER', 'options.direct_addr is required when options.direct_mode is 1 or 2');
  if (directMode === 0 && o.direct_addr !== undefined)
    throw new ApiError(
      'INVALID_PARAMETER',
      'options.direct_addr is given but options.direct_mode is 0 (direct transfer off); set direct_mode to 1 or 2, or leave direct_addr out',
    );
  const job: ScanJobOptions = {
    duplex: o.duplex ?? d.duplex,
    resolution: o.resolution ?? d.resolution,
    color: (o.color_type ?? d.color_type) === 1 ? 'grayscale' : 'color',
    quality: o.quality ?? d.quality,
    blank_page_skip: o.blank_page_skip ?? d.blank_page_skip,
    continuous: o.continuous ?? d.continuous,
    continuous_wait: o.continuous_wait ?? d.continuous_wait,
    // boxhub's item rule (docs/scanning.md, "Items as the stack scans"), always sent resolved.
    item_pages: o.item_pages ?? api.SCAN_ITEM_DEFAULTS.item_pages,
    item_seconds: o.item_seconds ?? api.SCAN_ITEM_DEFAULTS.item_seconds,
  };
  // Only with direct transfer on (direct_addr without it, or it without direct_addr, was refused above).
  const directAddr = directMode > 0 ? o.direct_addr : undefined;
  if (directAddr) {
    const t = directTarget(directAddr);
    // The secret is the service's to make (and to store sealed); the box gets it in scan.start.
    job.direct = {
      mode: directMode as 1 | 2,
      page_size: o.direct_page_size ?? d.direct_page_size,
      addr: t.addr,
      secret: '',
      ...(t.h2c ? { h2c: true } : {}),
    };
  }
  return { job, callbackUrl: o.callback_url, directMode, directAddr };
}

/**
 * The preconditions of scan create (docs/api.md) that the box's last report can answer: a scanner
 * connected and driveable, not busy or in error, paper in the feeder when the scanner can tell
 * (continuous mode waits for paper, so it does not need any yet), and options it can honour.
 * Duplex is the API's default: on a simplex scanner it is honoured only when asked for.
 */
export function checkScanner(
  scanner: ScannerStatus | undefined,
  job: ScanJobOptions,
  asked: api.ScanOptions = {},
): ScanJobOptions {
  if (!scanner?.connected) throw new ApiError('SCANNER_NOT_CONNECTED', 'the box reports no scanner connected');
  if (!scanner.supported)
    throw new ApiError(
      'SCANNER_NOT_CONNECTED',
      `the box cannot drive its scanner${scanner.model ? ` (${scanner.model})` : ''}`,
    );
  // What the scanner can never do comes first: loading paper would not help.
  const have = scanner.resolutions ?? [];
  if (have.length > 0 && !have.includes(job.resolution)) {
    const offered = api.SCAN_RESOLUTIONS.filter((r) => have.includes(r));
    throw new ApiError(
      'SCAN_OPTION_UNSUPPORTED',
      `this scanner cannot scan at ${job.resolution} dpi; it has ${offered.length > 0 ? offered.join(', ') : have.join(', ')} dpi`,
    );
  }
  let resolved = job;
  if (job.duplex && scanner.duplex === false) {
    if (asked.duplex === true)
      throw new ApiError('SCAN_OPTION_UNSUPPORTED', 'this scanner scans one side only: set options.duplex to false');
    resolved = { ...job, duplex: false };
  }
  if ((scanner.error_code ?? 0) !== 0)
    throw new ApiError(
      'SCANNER_BUSY',
      `the scanner reports error ${scanner.error_code} (docs/errors.md, "Scan error codes")`,
    );
  // 'processing' is not checked here: the report may be a moment old (a scan just stopped), and
  // the box refuses a scan itself while its scanner is busy (30202 from its answer).
  if (scanner.state === 'stopped') throw new ApiError('SCANNER_BUSY', 'the scanner is stopped');
  if (scanner.adf_loaded === false && !job.continuous)
    throw new ApiError(
      'SCANNER_NO_PAPER',
      'no paper in the feeder: load the stack, or use continuous mode to wait for it',
    );
  return resolved;
}
