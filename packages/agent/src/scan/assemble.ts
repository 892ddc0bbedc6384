// The page pipeline of one batch, composed from its parts: driver pages → blank-page skip →
// JPEG at the task's quality → PDF items cut by the item rule. Items are yielded as soon as
// they are complete (right after the page that completes them, not when the next one comes),
// so the job runner can upload one while the scanner goes on.
//
// A batch whose every page is skipped as blank (or an empty feeder) yields no item.
// A fault of the scanner (ScanFault) keeps the pages before it: the open item is finished and
// yielded, then the fault is thrown. Aborting the signal (stop) deletes the open item's file
// and throws the abort reason. Items already yielded belong to the caller.
import { join } from 'node:path';
import type { ScannedPage, ScanRequest } from '../drivers/types.ts';
import { BLANK_RULE, detectBlank, type BlankRule } from '../media/blank.ts';
import { capsOf, closesNow, ITEM_LIMITS, ITEM_RULE, type ItemLimits, type ItemRule } from './item-rule.ts';
import { pageToJpeg } from '../media/jpeg.ts';
import { PdfItemWriter, type ItemSealer, type PdfItemFile } from '../media/pdf-writer.ts';

export interface AssembleOptions {
  /** Directory the item files are written to. */
  dir: string;
  request: ScanRequest;
  blankPageSkip: boolean;
  signal?: AbortSignal;
  /** Number of the first item of this batch (items of a task count on across batches). */
  firstItem?: number;
  /** File name of item `n` (default `item-<n>.pdf`). */
  fileName?: (item: number) => string;
  /** Hard caps (ITEM_LIMITS). */
  limits?: ItemLimits;
  /** The task's item rule (ITEM_RULE when absent). */
  itemRule?: ItemRule;
  blankRule?: BlankRule;
  /** Called (and awaited) for every page kept, with its JPEG, once it is in its item. */
  onKeep?: (p: KeptPage) => Promise<void>;
  /** Called for every page the driver delivers, kept or skipped. */
  onPage?: (e: PageOutcome) => void;
  now?: () => number;
  /** End-to-end encryption (docs/encryption.md): the sealer of item `n` and its cipher. Each
   *  item is then written encrypted, and its size and MD5 are those of the encrypted file. */
  seal?: (item: number) => Promise<{ sealer: ItemSealer; cipher: string }>;
}

export interface PageOutcome {
  sheet: number;
  front: boolean;
  kept: boolean;
  /** Ink coverage, when blank detection ran. */
  coverage?: number;
  /** Item the page went into (kept pages). */
  item?: number;
  /** The scanner's JPEG went in unchanged. */
  passedThrough?: boolean;
}

export interface KeptPage {
  sheet: number;
  front: boolean;
  item: number;
  jpeg: Buffer;
  width: number;
  height: number;
  dpi: number;
}

export interface AssembledItem extends PdfItemFile {
  item: number;
  /** The sheet and side of each page, in order (sheets counted from 1 per batch). */
  sides: { sheet: number; front: boolean }[];
  /** When its last page was added (Unix ms, box clock). */
  scannedAt: number;
  /** The item's cipher, when it is encrypted. */
  cipher?: string;
}

export async function* assembleItems(
  pages: AsyncIterable<ScannedPage>,
  o: AssembleOptions,
): AsyncGenerator<AssembledItem> {
  const now = o.now ?? Date.now;
  const itemRule = o.itemRule ?? ITEM_RULE;
  const limits = capsOf(itemRule, o.limits ?? ITEM_LIMITS);
  const rule = o.blankRule ?? BLANK_RULE;
  const name = o.fileName ?? ((n: number) => `item-${n}.pdf`);
  let next = o.firstItem ?? 1;
  let open:
    | {
        writer: PdfItemWriter;
        item: number;
        bytes: number;
        sides: AssembledItem['sides'];
        openedAt: number;
        scannedAt: number;
        cipher?: string;
      }
    | undefined;
  /** Size of the last page kept: the estimate of the next one. */
  let lastBytes = 0;
  /** After a page: whether the open item is complete now (item-rule.ts closesNow). */
  const due = (page: ScannedPage): boolean =>
    !!open &&
    closesNow(
      { pages: open.writer.pages, bytes: open.bytes, openedAt: open.openedAt },
      { front: !(o.request.duplex && page.front), bytes: lastBytes },
      o.request.duplex,
      now(),
      itemRule,
      limits,
    );

  const close = async (): Promise<AssembledItem> => {
    const c = open!;
    open = undefined;
    try {
      return {
        ...(await c.writer.finish()),
        item: c.item,
        sides: c.sides,
        scannedAt: c.scannedAt,
        ...(c.cipher ? { cipher: c.cipher } : {}),
      };
    } catch (e) {
      await c.writer.abort();
      throw e;
    }
  };

  try {
    try {
      for await (const page of pages) {
        o.signal?.throwIfAborted();
        let coverage: number | undefined;
        if (o.blankPageSkip) {
          const v = await detectBlank(page, rule);
          coverage = v.coverage;
          if (v.blank) {
            o.onPage?.({ sheet: page.sheet, front: page.front, kept: false, coverage });
            // A blank back can end a sheet, and so the item.
            if (due(page)) yield await close();
            continue;
          }
        }
        const jpeg = await pageToJpeg(page, o.request.jpegQuality, o.request.color);
        if (
          open &&
          closesNow(
            { pages: open.writer.pages, bytes: open.bytes, openedAt: open.openedAt },
            { front: page.front, bytes: jpeg.data.length },
            o.request.duplex,
            now(),
            itemRule,
            limits,
          )
        ) {
          yield await close();
        }
        if (!open) {
          const item = next++;
          const sealed = o.seal ? await o.seal(item) : undefined;
          open = {
            writer: await PdfItemWriter.create(join(o.dir, name(item)), sealed?.sealer),
            item,
            bytes: 0,
            sides: [],
            openedAt: now(),
            scannedAt: 0,
            ...(sealed ? { cipher: sealed.cipher } : {}),
          };
        }
        await open.writer.add(jpeg.data, { width: jpeg.width, height: jpeg.height, dpi: page.dpi });
        open.bytes += jpeg.data.length;
        lastBytes = jpeg.data.length;
        open.sides.push({ sheet: page.sheet, front: page.front });
        open.scannedAt = now();
        await o.onKeep?.({
          sheet: page.sheet,
          front: page.front,
          item: open.item,
          jpeg: jpeg.data,
          width: jpeg.width,
          height: jpeg.height,
          dpi: page.dpi,
        });
        o.onPage?.({
          sheet: page.sheet,
          front: page.front,
          kept: true,
          item: open.item,
          passedThrough: jpeg.passedThrough,
          ...(coverage === undefined ? {} : { coverage }),
        });
        if (due(page)) yield await close();
      }
    } catch (e) {
      // A scanner fault keeps what was scanned before it; a stop does not.
      let last: AssembledItem | undefined;
      if (open && open.writer.pages > 0 && !o.signal?.aborted) {
        // An item that cannot be finished (the disk failed) is dropped; `e` is what is reported.
        last = await close().catch(() => undefined);
      }
      if (last) yield last;
      throw e;
    }
    if (open) yield await close();
  } finally {
    // Stopped, failed, or the caller left the loop early: the unfinished item goes.
    if (open) await open.writer.abort();
  }
}
