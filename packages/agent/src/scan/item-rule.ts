// When a scan task's pages go into a new PDF item (docs/scanning.md, "On the box").
//
// One item per batch of paper: a batch is what one ScannerDriver.scan() call delivers, the paper
// in the feeder until it is empty (or one flatbed page). In continuous mode every reload of the
// feeder is a new batch, so a new item. An item is closed early, so that it stays uploadable in
// one PUT, before a page that would take it past ITEM_LIMITS:
//  - items hold whole sheets: before the front of a sheet, the item is closed when the whole
//    sheet (both sides in a duplex scan, each estimated at the size of its front) might not fit;
//  - hard caps: before any page (a back too) that would itself break a cap;
//  - an item always takes its first page, so a single page larger than maxBytes is an item of
//    its own (a page cannot be split).
// The caps count the file as written: JPEG bytes plus PDF_PAGE_OVERHEAD per page plus
// PDF_FILE_OVERHEAD, so an item's file never exceeds maxBytes unless one page alone does.
import { PDF_FILE_OVERHEAD, PDF_PAGE_OVERHEAD } from './pdf-writer.ts';

export interface ItemLimits {
  /** Pages (scanned sides kept) per item. */
  maxPages: number;
  /** Bytes of an item's PDF file. */
  maxBytes: number;
}

/**
 * 200 pages: a full 100-sheet feeder scanned duplex stays one item. 100 MiB: about 150 pages
 * of 200 dpi colour at quality 90, 25 pages at 600 dpi; about 14 minutes of upload at 1 Mbit/s.
 * The server's upload limit for an item must be at least maxBytes.
 */
export const ITEM_LIMITS: Readonly<ItemLimits> = Object.freeze({ maxPages: 200, maxBytes: 100 * 1024 * 1024 });

/** The open item, as far as the rule needs it. */
export interface OpenItem { pages: number; bytes: number }
/** The next page, as far as the rule needs it. */
export interface NextPage { front: boolean; bytes: number }

/** Whether `next` must start a new item rather than go into `item`. Pure. */
export function startsNewItem(item: OpenItem, next: NextPage, duplex: boolean, limits: ItemLimits = ITEM_LIMITS): boolean {
  if (item.pages === 0) return false;
  const fileAfter = (pages: number, bytes: number) => bytes + pages * PDF_PAGE_OVERHEAD + PDF_FILE_OVERHEAD;
  if (next.front) {
    const sides = duplex ? 2 : 1;
    if (item.pages + sides > limits.maxPages) return true;
    if (fileAfter(item.pages + sides, item.bytes + next.bytes * sides) > limits.maxBytes) return true;
  }
  return item.pages + 1 > limits.maxPages || fileAfter(item.pages + 1, item.bytes + next.bytes) > limits.maxBytes;
}
