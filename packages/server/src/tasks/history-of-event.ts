// What each box job event adds to its task's history (docs/tasks.md, "History"), and who said
// so: the box, or the printer or scanner it relays. Recorded in the transaction that applies
// the event (box-link/job-events.ts), so an event is in the history exactly once.
import type { TypedJobEvent } from '@boxhub/protocol';
import type { HistoryEntry } from './history.ts';

const printerSaid = (code: number) => code === 4202 || (code >= 4300 && code < 4400);
// 2006 (the scanner went away) is what the box saw, not what the scanner said.
const scannerSaid = (code: number) => code >= 2001 && code <= 2007 && code !== 2006;

export function historyOfEvent(e: TypedJobEvent): Omit<HistoryEntry, 'at'> {
  switch (e.type) {
    case 'scan.item':
      return {
        source: 'box',
        what: 'item_stored',
        detail: {
          item_id: e.data.item_id,
          pages: e.data.pages.length,
          ...(e.data.upload ? { size: e.data.upload.size } : {}),
        },
      };
    case 'scan.finished':
      return {
        source: scannerSaid(e.data.error_code) ? 'scanner' : 'box',
        what: 'finished',
        detail: {
          error_code: e.data.error_code,
          items: e.data.items,
          pages: e.data.pages,
          ...(e.data.message ? { message: e.data.message } : {}),
        },
      };
    case 'print.downloaded':
      return {
        source: 'box',
        what: 'downloaded',
        detail: { size: e.data.size, download_spent_ms: e.data.download_spent_ms },
      };
    case 'print.started':
      return { source: 'printer', what: 'accepted', detail: { pages: e.data.pages } };
    case 'print.progress':
      return { source: 'printer', what: 'pages_done', detail: { pages: e.data.impressions_completed } };
    case 'print.finished': {
      const d = e.data;
      const printer = d.outcome === 'completed' || d.printed_pages !== undefined || printerSaid(d.error_code);
      return {
        source: printer ? 'printer' : 'box',
        what: 'finished',
        detail: {
          outcome: d.outcome,
          error_code: d.error_code,
          ...(d.printed_pages !== undefined ? { printed_pages: d.printed_pages } : {}),
          ...(d.message ? { message: d.message } : {}),
        },
      };
    }
  }
}
