// The print task's shape (docs/api.md) and the print callback bodies (docs/callbacks.md, "Print events").
import type { api } from '@boxhub/protocol';
import type { TaskRow } from '../../db/schema.ts';

export const kb = (bytes: number): number => Math.ceil(bytes / 1024);

export function printInfo(t: TaskRow): api.PrintInfo {
  const o: api.PrintInfo = {
    action_ack: t.acked_at !== null,
    started: t.started_at !== null,
    finished: t.state === 'ended',
    error_code: Number(t.error_code),
    created_at: Number(t.created_at),
    expires_at: Math.floor(Number(t.expires_at) / 1000),
  };
  if (t.acked_at !== null) o.action_ack_at = Number(t.acked_at);
  if (t.started_at !== null) o.started_at = Number(t.started_at);
  if (t.finished_at !== null) o.finished_at = Number(t.finished_at);
  if (Number(t.file_bytes) > 0) o.file_size = kb(Number(t.file_bytes));
  if (t.download_spent_ms !== null) o.download_spent = Math.round(Number(t.download_spent_ms) / 1000);
  if (t.pages !== null && t.started_at !== null) o.pages = Number(t.pages);
  if (t.printed_pages !== null && t.state === 'ended') o.printed_pages = Number(t.printed_pages);
  return o;
}

export type PrintEvent = 'print.ack' | 'print.started' | 'print.finished';

/** Body of a print callback: the event, the task and device, and the task's status then. */
export function printEvent(event: PrintEvent, t: TaskRow, now: number) {
  return { event, uuid: t.uuid, client_uuid: t.device_uuid, occurred_at: now, ...printInfo(t) };
}
