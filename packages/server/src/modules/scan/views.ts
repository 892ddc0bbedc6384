// The shapes of a scan task and its items (docs/api.md), and the scan callback bodies (docs/callbacks.md,
// "Scan events"). Sizes are KB rounded up (a non-empty file is at least 1 KB), durations whole
// seconds rounded to the nearest; fields that have no value with direct_mode 1 are absent.
import type { api } from '@boxhub/protocol';
import type { ScanItemRow, TaskRow } from '../../db/schema.ts';

export const kb = (bytes: number): number => Math.ceil(bytes / 1024);

export function directMode(task: Pick<TaskRow, 'options'>): number {
  return (JSON.parse(task.options) as { direct?: { mode: number } }).direct?.mode ?? 0;
}

export function scanInfo(t: TaskRow): api.ScanInfo {
  const info: api.ScanInfo = {
    action_ack: t.acked_at !== null,
    finished: t.state === 'ended',
    item_size: Number(t.item_count),
    total_pages: Number(t.page_count),
    error_code: Number(t.error_code),
    created_at: Number(t.created_at),
    expires_at: Math.floor(Number(t.expires_at) / 1000),
  };
  if (t.acked_at !== null) info.action_ack_at = Number(t.acked_at);
  if (directMode(t) !== 1) info.total_file_size = kb(Number(t.file_bytes));
  if (t.finished_at !== null) info.finished_at = Number(t.finished_at);
  // boxhub's progress fields (docs/scanning.md, "Progress").
  info.scanned_pages = Math.max(Number(t.scanned_pages), info.total_pages);
  info.skipped_pages = Number(t.skipped_pages);
  if (t.last_page_at !== null) info.last_page_at = Number(t.last_page_at);
  return info;
}

export function scanItem(r: ScanItemRow, downloadUrl: string | undefined, cipherKid?: string): api.ScanItem {
  const item: api.ScanItem = { item_id: Number(r.item_id), pages: Number(r.pages), scanned_at: Number(r.scanned_at) };
  if (r.blob_key !== null) {
    item.file_size = kb(Number(r.file_bytes));
    item.upload_spent = Math.round(Number(r.upload_spent_ms) / 1000);
    item.check_sum = r.md5!;
    if (r.cipher !== null) item.cipher = r.cipher;
    if (r.cipher !== null && cipherKid) item.cipher_kid = cipherKid;
    if (downloadUrl) item.temp_download_url = downloadUrl;
  }
  return item;
}

/** Body of the scan.item_data callback: the event, the task and device, and the item's fields. */
export function itemDataEvent(t: TaskRow, item: api.ScanItem, now: number) {
  return { event: 'scan.item_data', uuid: t.uuid, client_uuid: t.device_uuid, occurred_at: now, ...item };
}

/** Body of the scan.finish callback: the event, the task and device, and its final status. */
export function finishEvent(t: TaskRow, now: number) {
  return { event: 'scan.finish', uuid: t.uuid, client_uuid: t.device_uuid, occurred_at: now, ...scanInfo(t) };
}
