// Maps Get-Printer-Attributes to the API's Printer capability (docs/api.md) through the one SVC ↔ IPP
// table (protocol print-mapping.ts, docs/printing.md "Mapping"). Pure: attributes in, tree out.
// The same MediaCatalog resolves a task's media options back to IPP (job-plan.ts), so the box
// never offers a combination it would print differently.
//
// IPP sources: media-col-database (PWG 5100.7 §6.6) or, without it, media-size-supported /
// media-supported (RFC 8011 §5.2.11) and the media-*-margin-supported lists (PWG 5100.13
// §6.2.4); media-type-supported / media-source-supported (PWG 5100.7); sides-supported
// (RFC 8011 §5.2.8); print-color-mode-supported (PWG 5100.13 §6.2.3); print-quality-supported
// (RFC 8011 §5.2.13).
import type { ColorMode, Duplex, InputSlot, MediaSize, MediaType, PrinterCapability, Quality } from '@boxhub/protocol';
import type { MediaTypeCapability } from '@boxhub/protocol';
import {
  COLOR_MODE_MAP,
  DUPLEX_MAP,
  INPUT_SLOT_MAP,
  MEDIA_SIZE_MAP,
  MEDIA_TYPE_MAP,
  QUALITY_MAP,
  keywordForSvc,
  mediaSizeFor,
  type MediaSizeMapping,
} from '@boxhub/protocol/print-mapping.ts';
import type { IppAttributes } from './attributes.ts';

export type { PrinterCapability, MediaTypeCapability };

/** One media the printer can print on: a media-col-database entry (or one made from the
 *  attributes of a printer without the database). Dimensions are the printer's own numbers. */
export interface MediaEntry {
  size: MediaSizeMapping;
  x: number;
  y: number;
  /** undefined: the entry holds for every media-type-supported (PWG 5100.7 §6.6). */
  type?: string;
  /** undefined: the entry holds for every media-source-supported. */
  source?: string;
  borderless: boolean;
  /** Hundredths of a millimetre; the printer's unprintable edge on this media. */
  margins: { top: number; bottom: number; left: number; right: number };
  /** The printer's media-supported name, when the entry came from one. */
  name?: string;
}

/** Margins of a printer that says nothing about them: 5 mm (IPP Everywhere printers must print
 *  within 6.35 mm of each edge, PWG 5100.14 §5.6). */
const UNKNOWN_MARGIN = 500;

/** A size of a PWG 5101.1 self-describing media name (`iso_a4_210x297mm`, `na_letter_8.5x11in`).
 *  custom_min_… / custom_max_… are the bounds of custom sizes, not sizes. */
export function pwgNameSize(name: string): { x: number; y: number } | undefined {
  if (/^custom_(min|max)_/.test(name)) return undefined;
  const m = /_(\d+(?:\.\d+)?)x(\d+(?:\.\d+)?)(mm|in)$/.exec(name);
  if (!m) return undefined;
  const k = m[3] === 'mm' ? 100 : 2540;
  return { x: Math.round(Number(m[1]) * k), y: Math.round(Number(m[2]) * k) };
}

const MARGINS = ['media-top-margin', 'media-bottom-margin', 'media-left-margin', 'media-right-margin'] as const;

function databaseEntries(a: IppAttributes): MediaEntry[] {
  const out: MediaEntry[] = [];
  for (const col of a.collections('media-col-database')) {
    const ms = col.collection('media-size');
    const x = ms?.integer('x-dimension');
    const y = ms?.integer('y-dimension');
    // Custom-size ranges (x-dimension as rangeOfInteger) have no constant: left out.
    if (x === undefined || y === undefined) continue;
    const size = mediaSizeFor(x, y);
    if (!size) continue;
    const [top, bottom, left, right] = MARGINS.map((m) => col.integer(m) ?? UNKNOWN_MARGIN) as [
      number,
      number,
      number,
      number,
    ];
    const e: MediaEntry = {
      size,
      x,
      y,
      borderless: top === 0 && bottom === 0 && left === 0 && right === 0,
      margins: { top, bottom, left, right },
    };
    const type = col.string('media-type');
    if (type !== undefined) e.type = type;
    const source = col.string('media-source');
    if (source !== undefined) e.source = source;
    out.push(e);
  }
  return out;
}

/**
 * A printer without media-col-database (IPP/1.1 printers, many older lasers): sizes from
 * media-size-supported, else from the names in media-supported; every type and source holds
 * for every size; borderless when all four media-*-margin-supported lists hold 0 (the printer
 * then says nothing per size, so it counts for every size).
 */
function fallbackEntries(a: IppAttributes, mediaCol: boolean): MediaEntry[] {
  // Margins are media-col members: a printer without media-col cannot be asked for 0.
  const borderless = mediaCol && MARGINS.every((m) => a.integers(`${m}-supported`).includes(0));
  // The smallest margin other than 0 each side: what it prints with when not borderless.
  const smallest = (m: string) => {
    const v = a.integers(`${m}-supported`).filter((x) => x > 0);
    return v.length ? Math.min(...v) : UNKNOWN_MARGIN;
  };
  const margins = {
    top: smallest('media-top-margin'),
    bottom: smallest('media-bottom-margin'),
    left: smallest('media-left-margin'),
    right: smallest('media-right-margin'),
  };
  const dims: Array<{ x: number; y: number; name?: string }> = [];
  for (const col of a.collections('media-size-supported')) {
    const x = col.integer('x-dimension');
    const y = col.integer('y-dimension');
    if (x !== undefined && y !== undefined) dims.push({ x, y });
  }
  if (dims.length === 0) {
    for (const name of a.strings('media-supported')) {
      const d = pwgNameSize(name);
      if (d) dims.push({ ...d, name });
    }
  }
  const out: MediaEntry[] = [];
  for (const d of dims) {
    const size = mediaSizeFor(d.x, d.y);
    if (size && !out.some((e) => e.size.svc === size.svc))
      out.push({ size, x: d.x, y: d.y, borderless, margins, ...(d.name ? { name: d.name } : {}) });
  }
  return out;
}

export interface TypeChoice {
  svc: MediaType /** undefined: the printer takes no media-type; send none. */;
  keyword?: string;
}
export interface SlotChoice {
  svc: InputSlot;
  keyword: string;
}

/** The printer's media, asked the questions both the capability and printing need. */
export class MediaCatalog {
  readonly entries: readonly MediaEntry[];
  readonly fromDatabase: boolean;
  /** The printer takes media-col (PWG 5100.7); without it, only `media` by name: no type, no
   *  source, no margins can be asked for. */
  readonly mediaCol: boolean;
  private readonly types: string[];
  private readonly sources: string[];

  constructor(a: IppAttributes) {
    const db = databaseEntries(a);
    this.fromDatabase = a.has('media-col-database');
    this.mediaCol = this.fromDatabase || a.has('media-col-supported');
    this.entries = this.fromDatabase ? db : fallbackEntries(a, this.mediaCol);
    this.types = this.mediaCol ? a.strings('media-type-supported') : [];
    this.sources = this.mediaCol ? a.strings('media-source-supported') : [];
  }

  /** The `media` keyword for a size on a printer without media-col: its own name for it. */
  mediaName(size: MediaSize): string {
    const entry = this.entriesFor(size)[0];
    return entry?.name ?? MEDIA_SIZE_MAP.find((m) => m.svc === size)!.pwg;
  }

  sizes(): MediaSize[] {
    return MEDIA_SIZE_MAP.map((m) => m.svc).filter((s) => this.entries.some((e) => e.size.svc === s));
  }

  entriesFor(size: MediaSize): MediaEntry[] {
    return this.entries.filter((e) => e.size.svc === size);
  }

  /** Media types this size can be printed on, each with the one IPP keyword it prints with:
   *  the first of its constant's list the printer has for this size. A printer that lists no
   *  media-type at all prints on what is loaded: SVC_MT_PLAIN, sent without media-type. */
  typesFor(size: MediaSize): TypeChoice[] {
    const entries = this.entriesFor(size);
    if (entries.length === 0) return [];
    const available = new Set(entries.flatMap((e) => (e.type === undefined ? this.types : [e.type])));
    if (available.size === 0) return [{ svc: 'SVC_MT_PLAIN' }];
    return MEDIA_TYPE_MAP.flatMap((row) => {
      const keyword = keywordForSvc(MEDIA_TYPE_MAP, row.svc, [...available]);
      return keyword ? [{ svc: row.svc, keyword }] : [];
    });
  }

  /** Entries of a size usable with a media-type keyword (undefined: the printer has no types). */
  matching(size: MediaSize, typeKeyword: string | undefined): MediaEntry[] {
    return this.entriesFor(size).filter(
      (e) => typeKeyword === undefined || e.type === undefined || e.type === typeKeyword,
    );
  }

  /** Input slots for a size and type, each with the source keyword it prints with. */
  slotsFor(size: MediaSize, typeKeyword: string | undefined): SlotChoice[] {
    const available = [
      ...new Set(this.matching(size, typeKeyword).flatMap((e) => (e.source === undefined ? this.sources : [e.source]))),
    ];
    return INPUT_SLOT_MAP.flatMap((row) => {
      const keyword = keywordForSvc(INPUT_SLOT_MAP, row.svc, available);
      return keyword ? [{ svc: row.svc, keyword }] : [];
    });
  }

  borderless(size: MediaSize, typeKeyword: string | undefined): boolean {
    return this.matching(size, typeKeyword).some((e) => e.borderless);
  }
}

export function duplexModes(a: IppAttributes): Duplex[] {
  const sides = a.strings('sides-supported');
  const d = DUPLEX_MAP.filter((r) => r.ipp.some((k) => sides.includes(k))).map((r) => r.svc);
  // A printer that lists no sides prints one-sided (RFC 8011 §5.2.8: sides is optional).
  return d.length ? d : ['SVC_DP_NONE'];
}

export function qualities(a: IppAttributes): Quality[] {
  const q = a.integers('print-quality-supported');
  return QUALITY_MAP.filter((r) => q.includes(r.ipp)).map((r) => r.svc);
}

/** print-color-mode-supported; a printer without it: colour when color-supported is true. */
export function colorModes(a: IppAttributes): ColorMode[] {
  const modes = a.strings('print-color-mode-supported');
  if (modes.length === 0) return a.boolean('color-supported') ? ['SVC_CM_MONO', 'SVC_CM_COLOR'] : ['SVC_CM_MONO'];
  return COLOR_MODE_MAP.filter((r) => r.ipp.some((k) => modes.includes(k))).map((r) => r.svc);
}

/** The box sends PDF (JPG tasks as JPEG or wrapped in a PDF): it drives a printer that takes PDF. */
export function canDrive(a: IppAttributes): boolean {
  return a.strings('document-format-supported').includes('application/pdf');
}

/** Builds the capability tree; null when the box cannot drive the printer (API 30302). */
export function capabilityFrom(
  a: IppAttributes,
  makeModel: { make: string; model: string },
  supportStrict: boolean,
): PrinterCapability | null {
  if (!canDrive(a)) return null;
  const media = new MediaCatalog(a);
  const duplex = duplexModes(a);
  const quality = qualities(a);
  const media_sizes: PrinterCapability['media_sizes'] = [];
  for (const size of media.sizes()) {
    const media_types: MediaTypeCapability[] = media.typesFor(size).map((t) => {
      const cap: MediaTypeCapability = {
        media_type: t.svc,
        duplex,
        borderless: media.borderless(size, t.keyword),
        quality,
      };
      const slots = media.slotsFor(size, t.keyword);
      if (slots.length) cap.input_slot = slots.map((s) => s.svc);
      return cap;
    });
    if (media_types.length) media_sizes.push({ media_size: size, media_types });
  }
  if (media_sizes.length === 0) return null;
  return {
    make: makeModel.make,
    model: makeModel.model,
    support_strict: supportStrict,
    color_mode: colorModes(a),
    media_sizes,
  };
}
