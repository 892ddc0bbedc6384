// The manifest of a boxhub direct v1 request (docs/direct-transfer.md), checked field by field:
// whatever the receiver stores comes from here.
export interface ManifestPage {
  part: string; item_id: number; paper_number: number; page_number: number; front: boolean;
  width: number; height: number; dpi: number; content_type: string; bytes: number; sha256: string;
}
export type Manifest =
  | { v: 1; type: 'pages'; scan_uuid: string; batch: number; pages: ManifestPage[] }
  | { v: 1; type: 'scan.end'; scan_uuid: string; batch: number; error_code: number; totals: { batches: number; pages: number } };

export const MAX_PAGES_PER_BATCH = 10;

const isInt = (x: unknown, min = 0): x is number => typeof x === 'number' && Number.isInteger(x) && x >= min && x <= 2 ** 31;
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The manifest, or a message saying what is wrong with it. */
export function parseManifest(text: string): Manifest | string {
  let m: unknown;
  try { m = JSON.parse(text); } catch { return 'the meta part is not JSON'; }
  if (!isObj(m)) return 'the meta part is not a JSON object';
  if (m.v !== 1) return 'meta.v must be 1 (boxhub direct v1)';
  if (typeof m.scan_uuid !== 'string' || m.scan_uuid.length === 0 || m.scan_uuid.length > 64) return 'meta.scan_uuid is missing';
  if (!isInt(m.batch, 1)) return 'meta.batch must be an integer from 1';
  if (m.type === 'scan.end') {
    if (!isInt(m.error_code)) return 'meta.error_code must be an integer';
    if (!isObj(m.totals) || !isInt(m.totals.batches) || !isInt(m.totals.pages)) return 'meta.totals must hold batches and pages';
    return { v: 1, type: 'scan.end', scan_uuid: m.scan_uuid, batch: m.batch, error_code: m.error_code, totals: { batches: m.totals.batches, pages: m.totals.pages } };
  }
  if (m.type !== 'pages') return 'meta.type must be "pages" or "scan.end"';
  if (!Array.isArray(m.pages) || m.pages.length < 1 || m.pages.length > MAX_PAGES_PER_BATCH) return `meta.pages must hold 1 to ${MAX_PAGES_PER_BATCH} pages`;
  const pages: ManifestPage[] = [];
  const parts = new Set<string>();
  for (const [i, p] of m.pages.entries()) {
    const at = `meta.pages[${i}]`;
    if (!isObj(p)) return `${at} must be an object`;
    if (typeof p.part !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(p.part) || p.part === 'meta' || parts.has(p.part)) return `${at}.part must name a distinct image part`;
    parts.add(p.part);
    for (const f of ['item_id', 'paper_number', 'page_number', 'bytes'] as const) if (!isInt(p[f], f === 'bytes' ? 1 : 1)) return `${at}.${f} must be a positive integer`;
    for (const f of ['width', 'height', 'dpi'] as const) if (p[f] !== undefined && !isInt(p[f])) return `${at}.${f} must be an integer`;
    if (typeof p.front !== 'boolean') return `${at}.front must be true or false`;
    if (typeof p.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(p.sha256)) return `${at}.sha256 must be 64 lowercase hex digits`;
    if (p.content_type !== undefined && p.content_type !== 'image/jpeg') return `${at}.content_type must be image/jpeg`;
    pages.push({
      part: p.part, item_id: p.item_id as number, paper_number: p.paper_number as number, page_number: p.page_number as number, front: p.front,
      width: (p.width as number | undefined) ?? 0, height: (p.height as number | undefined) ?? 0, dpi: (p.dpi as number | undefined) ?? 0,
      content_type: 'image/jpeg', bytes: p.bytes as number, sha256: p.sha256,
    });
  }
  return { v: 1, type: 'pages', scan_uuid: m.scan_uuid, batch: m.batch, pages };
}
