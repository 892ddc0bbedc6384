// Maps Get-Printer-Attributes to the spec's "Printer capability" shape, following the table in
// design/device-notes.md ("Capability mapping"). Pure: attributes in, capability out.
// IPP sources: media-col-database (PWG 5100.7 §6.6), media-col members (PWG 5100.7 §6.3),
// sides-supported (RFC 8011 §5.2.8), print-color-mode-supported / print-quality-supported
// (PWG 5100.13 §6.2.3, §5.6.19), media-source-supported / media-type-supported (PWG 5100.7).
import type { ColorMode, Duplex, InputSlot, MediaSize, MediaType, Quality } from '@boxhub/protocol';
import type { IppAttributes } from './attributes.ts';

export interface MediaTypeCapability {
  media_type: MediaType;
  duplex: Duplex[];
  borderless: boolean;
  quality: Quality[];
  input_slot?: InputSlot[];
}
export interface PrinterCapability {
  make: string;
  model: string;
  support_strict: boolean;
  color_mode: ColorMode[];
  media_sizes: Array<{ media_size: MediaSize; media_types: MediaTypeCapability[] }>;
}

/** Media sizes by PWG 5101.1 self-describing name; dimensions in hundredths of a millimetre. */
export const MEDIA_SIZES: ReadonlyArray<{ svc: MediaSize; pwg: string; x: number; y: number }> = [
  { svc: 'SVC_MS_A4', pwg: 'iso_a4_210x297mm', x: 21000, y: 29700 },
  { svc: 'SVC_MS_A5', pwg: 'iso_a5_148x210mm', x: 14800, y: 21000 },
  { svc: 'SVC_MS_A3', pwg: 'iso_a3_297x420mm', x: 29700, y: 42000 },
  { svc: 'SVC_MS_B5', pwg: 'iso_b5_176x250mm', x: 17600, y: 25000 },
  { svc: 'SVC_MS_LETTER', pwg: 'na_letter_8.5x11in', x: 21590, y: 27940 },
  { svc: 'SVC_MS_LEGAL', pwg: 'na_legal_8.5x14in', x: 21590, y: 35560 },
  { svc: 'SVC_MS_4X6', pwg: 'na_index-4x6_4x6in', x: 10160, y: 15240 },
];
/** Tolerance when matching dimensions: printers round inch sizes differently (±0.5 mm). */
const SIZE_TOLERANCE = 50;

export const SIDES: ReadonlyArray<{ svc: Duplex; ipp: string }> = [
  { svc: 'SVC_DP_NONE', ipp: 'one-sided' },
  { svc: 'SVC_DP_NOTUMBLE', ipp: 'two-sided-long-edge' },
  { svc: 'SVC_DP_TUMBLE', ipp: 'two-sided-short-edge' },
];
/** print-quality enum values (PWG 5100.13 §5.6.19: 3 draft, 4 normal, 5 high). */
export const QUALITIES: ReadonlyArray<{ svc: Quality; ipp: number }> = [
  { svc: 'SVC_QU_DRAFT', ipp: 3 }, { svc: 'SVC_QU_NORMAL', ipp: 4 }, { svc: 'SVC_QU_HIGH', ipp: 5 },
];
export const COLOR_MODES: ReadonlyArray<{ svc: ColorMode; ipp: string }> = [
  { svc: 'SVC_CM_MONO', ipp: 'monochrome' }, { svc: 'SVC_CM_COLOR', ipp: 'color' },
];
/** PWG 5100.7 photo media types, best first: SVC_MT_PHOTO uses the first the printer has. */
export const PHOTO_TYPES = ['photographic-glossy', 'photographic-high-gloss', 'photographic-semi-gloss', 'photographic-satin', 'photographic-matte', 'photographic'] as const;

export function mediaSizeFor(x: number, y: number): MediaSize | undefined {
  return MEDIA_SIZES.find((m) => Math.abs(m.x - x) <= SIZE_TOLERANCE && Math.abs(m.y - y) <= SIZE_TOLERANCE)?.svc;
}

/** The IPP media-type keyword for a cloud media type on this printer, or undefined if it has none. */
export function ippMediaType(svc: MediaType, supported: readonly string[]): string | undefined {
  if (svc === 'SVC_MT_PLAIN') return supported.includes('stationery') ? 'stationery' : undefined;
  return PHOTO_TYPES.find((t) => supported.includes(t));
}

/** The IPP media-source for a cloud input slot: CASS1 is `main`, else `tray-1`. */
export function ippMediaSource(svc: InputSlot, supported: readonly string[]): string | undefined {
  const want = svc === 'SVC_IS_AUTO' ? ['auto'] : svc === 'SVC_IS_REAR' ? ['rear'] : ['main', 'tray-1'];
  return want.find((s) => supported.includes(s));
}

function slotFor(source: string): InputSlot | undefined {
  if (source === 'auto') return 'SVC_IS_AUTO';
  if (source === 'main' || source === 'tray-1') return 'SVC_IS_CASS1';
  if (source === 'rear') return 'SVC_IS_REAR';
  return undefined;
}

function typeFor(ippType: string): MediaType | undefined {
  if (ippType === 'stationery') return 'SVC_MT_PLAIN';
  if ((PHOTO_TYPES as readonly string[]).includes(ippType)) return 'SVC_MT_PHOTO';
  return undefined;
}

interface DbEntry { size: MediaSize; type?: string; source?: string; borderless: boolean }

/** media-col-database entries with a fixed size we name (custom-size ranges are skipped). */
function databaseEntries(a: IppAttributes): DbEntry[] {
  const out: DbEntry[] = [];
  for (const col of a.collections('media-col-database')) {
    const size = col.collection('media-size');
    const x = size?.integer('x-dimension');
    const y = size?.integer('y-dimension');
    const svc = x !== undefined && y !== undefined ? mediaSizeFor(x, y) : undefined;
    if (!svc) continue;
    const margins = ['media-top-margin', 'media-bottom-margin', 'media-left-margin', 'media-right-margin'].map((m) => col.integer(m));
    const e: DbEntry = { size: svc, borderless: margins.every((m) => m === 0) };
    const type = col.string('media-type'); if (type !== undefined) e.type = type;
    const source = col.string('media-source'); if (source !== undefined) e.source = source;
    out.push(e);
  }
  return out;
}

function ordered<T extends string>(all: readonly T[], have: Set<T>): T[] {
  return all.filter((v) => have.has(v));
}

/**
 * Builds the capability. An entry of media-col-database without media-type (or media-source)
 * holds for every value of media-type-supported (media-source-supported), as PWG 5100.7 §6.6
 * lets a printer omit members that do not restrict the combination. Borderless is true only
 * where the database lists that size (and type) with all four margins 0.
 */
export function capabilityFrom(a: IppAttributes, makeModel: { make: string; model: string }, supportStrict: boolean): PrinterCapability {
  const types = a.strings('media-type-supported');
  const sources = a.strings('media-source-supported');
  const duplex = SIDES.filter((s) => a.strings('sides-supported').includes(s.ipp)).map((s) => s.svc);
  const quality = QUALITIES.filter((q) => a.integers('print-quality-supported').includes(q.ipp)).map((q) => q.svc);

  const colorModes = a.strings('print-color-mode-supported');
  let color_mode = COLOR_MODES.filter((c) => colorModes.includes(c.ipp)).map((c) => c.svc);
  if (colorModes.length === 0) color_mode = a.boolean('color-supported') ? ['SVC_CM_MONO', 'SVC_CM_COLOR'] : ['SVC_CM_MONO'];

  const entries = databaseEntries(a);
  const media_sizes: PrinterCapability['media_sizes'] = [];
  for (const size of MEDIA_SIZES.map((m) => m.svc)) {
    const forSize = entries.filter((e) => e.size === size);
    if (forSize.length === 0) continue;
    const media_types: MediaTypeCapability[] = [];
    for (const mt of ['SVC_MT_PLAIN', 'SVC_MT_PHOTO'] as const) {
      const matching = forSize.filter((e) => (e.type === undefined ? types.some((t) => typeFor(t) === mt) : typeFor(e.type) === mt));
      if (matching.length === 0) continue;
      const slots = new Set<InputSlot>();
      for (const e of matching) {
        for (const s of e.source === undefined ? sources : [e.source]) {
          const slot = slotFor(s);
          if (slot) slots.add(slot);
        }
      }
      const cap: MediaTypeCapability = {
        media_type: mt,
        duplex: duplex.length ? duplex : ['SVC_DP_NONE'],
        borderless: matching.some((e) => e.borderless),
        quality,
      };
      if (slots.size) cap.input_slot = ordered(['SVC_IS_AUTO', 'SVC_IS_CASS1', 'SVC_IS_REAR'] as const, slots);
      media_types.push(cap);
    }
    if (media_types.length) media_sizes.push({ media_size: size, media_types });
  }
  return { make: makeModel.make, model: makeModel.model, support_strict: supportStrict, color_mode, media_sizes };
}
