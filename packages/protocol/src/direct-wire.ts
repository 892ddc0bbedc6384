// The manifest of `boxhub direct v1` (docs/direct-transfer.md): one multipart/form-data request
// per batch of pages, this JSON manifest as the part `meta` first, then one part per page; a
// final `scan.end` request with the manifest alone; Standard Webhooks headers sign the manifest.
// The box builds it with these types; every receiver in this repository (the service's own, for
// recognition, and the SDK's) checks it with `parseManifest`, so they refuse the same things.
import { E2E } from './e2e.ts';

/** A batch holds 1 to this many pages (options.direct_page_size is at most this). */
export const MAX_PAGES_PER_BATCH = 10;
/** A page's part: `p1` … `p10` (the box names the i-th page of a batch `p{i}`), each once. */
export const PART_NAME = /^p([1-9]|10)$/;
export const partName = (index: number): string => `p${index + 1}`;
/** A page's SHA-256: 64 lowercase hex digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;
/** An encrypted page's cipher (docs/encryption.md): lowercase hex, as an item's. */
export const CIPHER_HEX = new RegExp(`^[0-9a-f]{${E2E.cipherHexLength}}$`);
/** Longest scan_uuid and client_uuid taken. */
export const MAX_UUID_LENGTH = 64;

export interface DirectPageMeta {
  /** The part holding the page's bytes (p1 … p10). */
  part: string;
  item_id: number;
  paper_number: number;
  page_number: number;
  front: boolean;
  width: number;
  height: number;
  dpi: number;
  /** image/jpeg; application/octet-stream for an encrypted page (then `cipher` is set). */
  content_type: 'image/jpeg' | 'application/octet-stream';
  bytes: number;
  sha256: string;
  /** An encrypted scan's page: its cipher (docs/encryption.md, "Direct transfer"). */
  cipher?: string;
}

export interface PagesManifest {
  v: 1;
  type: 'pages';
  scan_uuid: string;
  client_uuid: string;
  batch: number;
  pages: DirectPageMeta[];
}

export interface EndManifest {
  v: 1;
  type: 'scan.end';
  scan_uuid: string;
  client_uuid: string;
  batch: number;
  /** The scan's error code (docs/errors.md, "Scan error codes"); 0 when it ended normally. */
  error_code: number;
  totals: { batches: number; pages: number };
}

export type Manifest = PagesManifest | EndManifest;

/** webhook-id (and Idempotency-Key) of a scan's batch: the same on every attempt. */
export const webhookId = (scanUuid: string, batch: number): string => `dt_${scanUuid}_${batch}`;

export interface ManifestRules {
  /** Take encrypted pages (application/octet-stream with a `cipher`). A receiver that must read
   *  the pages (the service's recognition) leaves this off: then every page is image/jpeg. */
  encrypted?: boolean;
}

const isInt = (x: unknown, min: number): x is number =>
  typeof x === 'number' && Number.isInteger(x) && x >= min && x <= 2 ** 31;
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isId = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= MAX_UUID_LENGTH;

/** The manifest's text parsed and checked (`checkManifest`), or a message saying what is wrong. */
export function parseManifest(text: string, rules: ManifestRules = {}): Manifest | string {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return 'the meta part is not JSON';
  }
  return checkManifest(m, rules);
}

/**
 * The manifest, checked field by field and rebuilt from the fields it knows (others are
 * ignored), or a message saying what is wrong with it: the first field that is.
 */
export function checkManifest(m: unknown, rules: ManifestRules = {}): Manifest | string {
  if (!isObj(m)) return 'the meta part is not a JSON object';
  if (m.v !== 1) return 'meta.v must be 1 (boxhub direct v1)';
  if (!isId(m.scan_uuid)) return `meta.scan_uuid must be a string of 1 to ${MAX_UUID_LENGTH} characters`;
  if (!isId(m.client_uuid)) return `meta.client_uuid must be a string of 1 to ${MAX_UUID_LENGTH} characters`;
  if (!isInt(m.batch, 1)) return 'meta.batch must be an integer from 1';
  const head = { v: 1 as const, scan_uuid: m.scan_uuid, client_uuid: m.client_uuid, batch: m.batch };
  if (m.type === 'scan.end') {
    if (!isInt(m.error_code, 0)) return 'meta.error_code must be an integer from 0';
    if (!isObj(m.totals) || !isInt(m.totals.batches, 0) || !isInt(m.totals.pages, 0))
      return 'meta.totals must hold batches and pages (integers from 0)';
    return {
      ...head,
      type: 'scan.end',
      error_code: m.error_code,
      totals: { batches: m.totals.batches, pages: m.totals.pages },
    };
  }
  if (m.type !== 'pages') return 'meta.type must be "pages" or "scan.end"';
  if (!Array.isArray(m.pages) || m.pages.length < 1 || m.pages.length > MAX_PAGES_PER_BATCH)
    return `meta.pages must hold 1 to ${MAX_PAGES_PER_BATCH} pages`;
  const pages: DirectPageMeta[] = [];
  const parts = new Set<string>();
  const list: unknown[] = m.pages;
  for (const [i, p] of list.entries()) {
    const at = `meta.pages[${i}]`;
    if (!isObj(p)) return `${at} must be an object`;
    if (typeof p.part !== 'string' || !PART_NAME.test(p.part)) return `${at}.part must be p1 … p${MAX_PAGES_PER_BATCH}`;
    if (parts.has(p.part)) return `${at}.part: ${p.part} is named twice`;
    parts.add(p.part);
    const { item_id, paper_number, page_number, width, height, dpi, bytes } = p;
    const positive = (f: string) => `${at}.${f} must be a positive integer`;
    if (!isInt(item_id, 1)) return positive('item_id');
    if (!isInt(paper_number, 1)) return positive('paper_number');
    if (!isInt(page_number, 1)) return positive('page_number');
    if (!isInt(width, 1)) return positive('width');
    if (!isInt(height, 1)) return positive('height');
    if (!isInt(dpi, 1)) return positive('dpi');
    if (!isInt(bytes, 1)) return positive('bytes');
    if (typeof p.front !== 'boolean') return `${at}.front must be true or false`;
    if (typeof p.sha256 !== 'string' || !SHA256_HEX.test(p.sha256))
      return `${at}.sha256 must be 64 lowercase hex digits`;
    const encrypted = p.content_type === 'application/octet-stream';
    if ((!encrypted && p.content_type !== 'image/jpeg') || (encrypted && !rules.encrypted)) {
      return `${at}.content_type must be image/jpeg${rules.encrypted ? ', or application/octet-stream for an encrypted page' : ' (this receiver takes no encrypted pages)'}`;
    }
    const { cipher } = p;
    if (encrypted && (typeof cipher !== 'string' || !CIPHER_HEX.test(cipher)))
      return `${at}.cipher must be ${E2E.cipherHexLength} lowercase hex digits (an encrypted page)`;
    if (!encrypted && cipher !== undefined)
      return `${at}.cipher is for an encrypted page only (content_type application/octet-stream)`;
    pages.push({
      part: p.part,
      item_id,
      paper_number,
      page_number,
      front: p.front,
      width,
      height,
      dpi,
      bytes,
      sha256: p.sha256,
      // A cipher is there exactly when the page is encrypted (checked just above).
      ...(typeof cipher === 'string'
        ? { content_type: 'application/octet-stream' as const, cipher }
        : { content_type: 'image/jpeg' as const }),
    });
  }
  return { ...head, type: 'pages', pages };
}
