// Which pages the box sends, in which order, and what it leaves to the printer. Pure.
//
// The printer does page ranges, reverse order and copies itself when it lists the attribute
// (page-ranges-supported, page-delivery-supported with a reverse-order value, copies-supported
// and multiple-document-handling-supported with the asked collation). Otherwise the box builds
// the pages itself, so every printer gives the same sheets (docs/printing.md, "Box-side
// printing"):
//   - ranges: the selected pages in the order given (a page named twice prints twice);
//   - reverse: the pages last to first; two-sided, the *sheets* last to first, an odd count
//     padded with a blank back first so every sheet keeps its front and back;
//   - copies: collated, the set N times, each copy starting on a new sheet when two-sided;
//     uncollated, each sheet N times.
// Once the box reorders, it also selects (page-ranges would count the reordered pages).
import type { PageRange } from '@boxhub/protocol';

/** What the printer does itself. */
export interface PrinterPageFeatures {
  pageRanges: boolean;
  /** The page-delivery keyword that reverses the order, when the printer lists one. */
  reverseDelivery?: string;
  /** copies-supported upper bound (1 when absent). */
  maxCopies: number;
  /** multiple-document-handling values it lists. */
  collation: { collated: boolean; uncollated: boolean };
}

export interface PageRequest {
  /** Pages in the document. */
  pages: number;
  ranges?: readonly PageRange[];
  reverse: boolean;
  duplex: boolean;
  copies: number;
  collate: boolean;
}

/** A page of the source document (1-based), or a blank side the box adds. */
export type PageItem = number | 'blank';

export interface PagePlan {
  /** null: send the document as it is. Otherwise the pages of the document the box builds. */
  sequence: PageItem[] | null;
  /** Attributes the printer is asked for. */
  printer: {
    pageRanges?: Array<{ lower: number; upper: number }>;
    pageDelivery?: string;
    copies: number;
    collate?: boolean;
  };
  /** Sides one copy of what is sent takes (blank backs included), × copies: what a printer
   *  that counts impressions reports at the end. */
  sides: number;
}

export class PageRangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PageRangeError';
  }
}

/** The selected pages in order (1..pages when no ranges). */
export function selectedPages(pages: number, ranges?: readonly PageRange[]): number[] {
  if (!ranges?.length) return Array.from({ length: pages }, (_, i) => i + 1);
  const out: number[] = [];
  for (const r of ranges) {
    if (r.from > r.to) throw new PageRangeError(`page range ${r.from}-${r.to} runs backwards`);
    if (r.to > pages) throw new PageRangeError(`page range ${r.from}-${r.to} is beyond the last page (${pages})`);
    for (let p = r.from; p <= r.to; p++) out.push(p);
  }
  return out;
}

const sheetsOf = (seq: PageItem[]): PageItem[][] => {
  const sheets: PageItem[][] = [];
  for (let i = 0; i < seq.length; i += 2)
    sheets.push(seq.slice(i, i + 2).concat(seq.length - i === 1 ? ['blank'] : []));
  return sheets;
};

/** Sides one copy of `n` pages takes. */
export const sidesFor = (n: number, duplex: boolean) => (duplex ? Math.ceil(n / 2) * 2 : n);

export function planPages(req: PageRequest, printer: PrinterPageFeatures): PagePlan {
  const selected = selectedPages(req.pages, req.ranges);
  if (selected.length === 0) throw new PageRangeError('no page selected');
  const ranged = req.ranges?.length ? req.ranges : undefined;

  const wantCollation = req.copies > 1;
  const printerCopies =
    req.copies <= printer.maxCopies &&
    (!wantCollation || (req.collate ? printer.collation.collated : printer.collation.uncollated));
  const boxReverse = req.reverse && !printer.reverseDelivery;
  // page-ranges is only as good as the printer's reading of it; ranges that repeat or go
  // backwards in order are not expressible as sorted rangeOfInteger values (RFC 8011 §5.2.7).
  const rangesExpressible = !ranged || ranged.every((r, i) => i === 0 || r.from > ranged[i - 1]!.to);
  const boxSelect = !!ranged && (!printer.pageRanges || boxReverse || !printerCopies || !rangesExpressible);
  const touch = boxReverse || boxSelect || !printerCopies;

  if (!touch) {
    const p: PagePlan['printer'] = { copies: req.copies };
    if (ranged) p.pageRanges = ranged.map((r) => ({ lower: r.from, upper: r.to }));
    if (req.reverse && printer.reverseDelivery) p.pageDelivery = printer.reverseDelivery;
    if (wantCollation) p.collate = req.collate;
    return { sequence: null, printer: p, sides: sidesFor(selected.length, req.duplex) * req.copies };
  }

  // One copy, as sheets when two-sided.
  let one: PageItem[] = selected;
  if (boxReverse) {
    one = req.duplex ? sheetsOf(selected).reverse().flat() : [...selected].reverse();
  }
  const p: PagePlan['printer'] = { copies: printerCopies ? req.copies : 1 };
  if (req.reverse && !boxReverse) p.pageDelivery = printer.reverseDelivery!;
  if (printerCopies) {
    if (wantCollation) p.collate = req.collate;
    return { sequence: one, printer: p, sides: sidesFor(one.length, req.duplex) * req.copies };
  }
  let seq: PageItem[];
  if (req.collate) {
    // Each copy starts on a new sheet: pad an odd copy when two-sided.
    const copy = req.duplex && one.length % 2 === 1 ? [...one, 'blank' as const] : one;
    seq = Array.from({ length: req.copies }, () => copy).flat();
  } else {
    const units = req.duplex ? sheetsOf(one) : one.map((x) => [x]);
    seq = units.flatMap((u) => Array.from({ length: req.copies }, () => u).flat());
  }
  return { sequence: seq, printer: p, sides: sidesFor(seq.length, req.duplex) };
}
