// When a scan task's pages go into a new PDF item (docs/scanning.md, "Items as the stack scans").
//
// Items never span batches of paper: a batch is what one ScannerDriver.scan() call delivers, the
// paper in the feeder until it is empty (or one flatbed page). In continuous mode every reload
// of the feeder is a new batch, so a new item. Within a batch the task's item rule (ItemRule:
// item_pages, item_seconds) closes an item as the stack scans, so that the application gets the
// first pages within seconds and a failure late in a long stack loses at most the open item.
// The same caps (the rule's pages, and ITEM_LIMITS so that an item stays uploadable in one PUT)
// close an item before a page that would take it past them:
//  - items hold whole sheets: before the front of a sheet, the item is closed when the whole
//    sheet (both sides in a duplex scan, each estimated at the size of its front) might not fit;
//  - hard caps: before any page (a back too) that would itself break a cap;
//  - an item always takes its first page, so a single page larger than maxBytes is an item of
//    its own (a page cannot be split).
// The caps count the file as written: JPEG bytes plus PDF_PAGE_OVERHEAD per page plus
// PDF_FILE_OVERHEAD, so an item's file never exceeds maxBytes unless one page alone does.
import { PDF_FILE_OVERHEAD, PDF_PAGE_OVERHEAD } from '../media/pdf-writer.ts';

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

/** The task's item rule (scan create's item_pages and item_seconds, docs/scanning.md). */
export interface ItemRule {
  /** An item holds at most this many pages (whole sheets where they fit). */
  pages: number;
  /** An item is closed at the end of a sheet once its first page is this old; 0: never. */
  seconds: number;
}

/** The box's defaults, for a task that does not say (the server always does). */
export const ITEM_RULE: Readonly<ItemRule> = Object.freeze({ pages: 20, seconds: 3 });

/** The caps of one task: its rule's pages within the hard caps. */
export function capsOf(rule: ItemRule, limits: ItemLimits = ITEM_LIMITS): ItemLimits {
  return { maxPages: Math.min(rule.pages, limits.maxPages), maxBytes: limits.maxBytes };
}

/**
 * Whether the open item is to be closed now, right after a page, rather than when the next page
 * comes (which can be a while: the next sheet, or the end of the feeder). `next` is the page
 * expected: a back after a front in a duplex scan, else the front of the next sheet, estimated
 * at the size of the last page. Closed when that page would start a new item anyway, or at the
 * end of a sheet once the item is `rule.seconds` old. Pure.
 */
export function closesNow(
  item: OpenItem & { openedAt: number },
  next: NextPage,
  duplex: boolean,
  now: number,
  rule: ItemRule,
  limits: ItemLimits,
): boolean {
  if (item.pages === 0) return false;
  if (startsNewItem(item, next, duplex, limits)) return true;
  return next.front && rule.seconds > 0 && now - item.openedAt >= rule.seconds * 1000;
}

/** The open item, as far as the rule needs it. */
export interface OpenItem {
  pages: number;
  bytes: number;
}
/** The next page, as far as the rule needs it. */
export interface NextPage {
  front: boolean;
  bytes: number;
}

/** Whether `next` must start a new item rather than go into `item`. Pure. */
export function startsNewItem(
  item: OpenItem,
  next: NextPage,
  duplex: boolean,
  limits: ItemLimits = ITEM_LIMITS,
): boolean {
  if (item.pages === 0) return false;
  const fileAfter = (pages: number, bytes: number) => bytes + pages * PDF_PAGE_OVERHEAD + PDF_FILE_OVERHEAD;
  if (next.front) {
    const sides = duplex ? 2 : 1;
    if (item.pages + sides > limits.maxPages) return true;
    if (fileAfter(item.pages + sides, item.bytes + next.bytes * sides) > limits.maxBytes) return true;
  }
  return item.pages + 1 > limits.maxPages || fileAfter(item.pages + 1, item.bytes + next.bytes) > limits.maxBytes;
}
