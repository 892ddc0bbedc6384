// A task's options (SVC constants, already resolved by the server) as IPP Job Template
// attributes for one printer, checked against what that printer lists: printers accept
// options they do not support (ippeveprinter answers successful-ok to media-source=rear it does
// not have; docs/printing.md, "Box-side printing"), so the box refuses them itself, with the same words the
// server uses, before anything is printed. Pure: attributes and options in, plan out.
import type { PrintJobOptions } from '@boxhub/protocol';
import { COLOR_MODE_MAP, DUPLEX_MAP, QUALITY_MAP, hmmToPoints, keywordForSvc } from '@boxhub/protocol/print-mapping.ts';
import { PrintRejectedError } from '../types.ts';
import type { PrinterDocumentFeatures } from '../../media/document.ts';
import type { Margins } from '../../media/document-jpeg.ts';
import type { IppAttributes } from './attributes.ts';
import { canDrive, colorModes, duplexModes, MediaCatalog, qualities, type MediaEntry } from './capability.ts';
import type { JobTemplate } from './operations.ts';

export interface IppJobPlan {
  /** Media, sides, colour, quality; copies, ranges, delivery and collation come from the
   *  document's preparation (what the printer does itself). */
  template: JobTemplate;
  features: PrinterDocumentFeatures;
  /** The media in points, with the printer's margins for it. */
  page: { width: number; height: number; margins: Margins };
}

const list = (v: readonly string[]) => (v.length ? v.join(', ') : 'none');

function reject(option: string, value: string, allowed: readonly string[], where = ''): never {
  throw new PrintRejectedError(
    `options.${option} ${value} is not supported by this printer${where}; allowed: ${list(allowed)}`,
  );
}

/** What the printer does with pages and copies itself (document-plan.ts decides the rest). */
export function documentFeatures(a: IppAttributes): PrinterDocumentFeatures {
  const delivery = a.strings('page-delivery-supported');
  const copies = Math.max(1, ...a.ranges('copies-supported').map((r) => r.upper), ...a.integers('copies-supported'));
  const mdh = a.strings('multiple-document-handling-supported');
  const reverseDelivery = ['reverse-order-face-up', 'reverse-order-face-down'].find((k) => delivery.includes(k));
  return {
    pages: {
      pageRanges: a.boolean('page-ranges-supported') === true,
      ...(reverseDelivery ? { reverseDelivery } : {}),
      maxCopies: copies,
      collation: {
        collated: mdh.includes('separate-documents-collated-copies'),
        uncollated: mdh.includes('separate-documents-uncollated-copies'),
      },
    },
    formats: a.strings('document-format-supported'),
    printScaling: a.strings('print-scaling-supported'),
  };
}

export function planIppJob(a: IppAttributes, o: PrintJobOptions): IppJobPlan {
  if (!canDrive(a))
    throw new PrintRejectedError(
      `the printer takes none of the formats the box sends (it lists ${list(a.strings('document-format-supported'))}; the box needs application/pdf)`,
    );
  const media = new MediaCatalog(a);
  if (!media.sizes().includes(o.media_size)) reject('media_size', o.media_size, media.sizes());
  const types = media.typesFor(o.media_size);
  const type = types.find((t) => t.svc === o.media_type);
  if (!type)
    reject(
      'media_type',
      o.media_type,
      types.map((t) => t.svc),
      ` for ${o.media_size}`,
    );
  let source: string | undefined;
  if (o.input_slot !== undefined) {
    const slots = media.slotsFor(o.media_size, type.keyword);
    source = slots.find((s) => s.svc === o.input_slot)?.keyword;
    if (!source)
      reject(
        'input_slot',
        o.input_slot,
        slots.map((s) => s.svc),
        ` for ${o.media_size} / ${o.media_type}`,
      );
  }
  const matching = media.matching(o.media_size, type.keyword);
  if (o.borderless && !matching.some((e) => e.borderless)) {
    throw new PrintRejectedError(
      `options.borderless is not supported by this printer for ${o.media_size} / ${o.media_type}`,
    );
  }
  const duplex = duplexModes(a);
  if (o.duplex !== undefined && !duplex.includes(o.duplex)) reject('duplex', o.duplex, duplex);
  const quality = qualities(a);
  if (o.quality !== undefined && !quality.includes(o.quality)) reject('quality', o.quality, quality);
  const color = colorModes(a);
  if (o.color_mode !== undefined && !color.includes(o.color_mode)) reject('color_mode', o.color_mode, color);

  // The entry printed on: from the slot asked for when there is one, borderless when asked.
  const fromSource = (e: MediaEntry) => source === undefined || e.source === undefined || e.source === source;
  const entry =
    matching.find((e) => fromSource(e) && e.borderless === o.borderless) ?? matching.find(fromSource) ?? matching[0]!;

  const template: JobTemplate = !media.mediaCol
    ? { media: media.mediaName(o.media_size) }
    : {
        mediaCol: {
          size: { x: entry.x, y: entry.y },
          ...(type.keyword ? { type: type.keyword } : {}),
          ...(source ? { source } : {}),
          // PWG 5100.13 §6.2.4: all four margins 0 is borderless. Otherwise the printer's own.
          ...(o.borderless ? { margins: { top: 0, bottom: 0, left: 0, right: 0 } } : {}),
        },
      };
  if (o.duplex !== undefined)
    template.sides = keywordForSvc(DUPLEX_MAP, o.duplex, a.strings('sides-supported')) as JobTemplate['sides'];
  if (o.color_mode !== undefined) {
    const k = keywordForSvc(COLOR_MODE_MAP, o.color_mode, a.strings('print-color-mode-supported'));
    // A printer without print-color-mode-supported (colorModes fell back to color-supported).
    if (k) template.printColorMode = k;
  }
  if (o.quality !== undefined) template.printQuality = QUALITY_MAP.find((q) => q.svc === o.quality)!.keyword;

  const m = o.borderless ? { top: 0, bottom: 0, left: 0, right: 0 } : entry.margins;
  return {
    template,
    features: documentFeatures(a),
    page: {
      width: hmmToPoints(entry.x),
      height: hmmToPoints(entry.y),
      margins: {
        top: hmmToPoints(m.top),
        bottom: hmmToPoints(m.bottom),
        left: hmmToPoints(m.left),
        right: hmmToPoints(m.right),
      },
    },
  };
}
