// The one table between the SVC print constants and IPP (docs/printing.md, "Mapping"; a test
// keeps the two in step). The box builds the capability from the printer's IPP attributes with
// it (agent ipp/capability.ts) and maps a task's options back to IPP with it (ipp/job-plan.ts);
// the server uses the sizes to check a PDF's pages against media_size (document-check.ts).
//
// IPP sources: media-size and PWG self-describing size names (PWG 5101.1), media-type and
// media-source keywords (PWG 5100.7 §6.3, IANA IPP registry), sides (RFC 8011 §5.2.8),
// print-quality enum (PWG 5100.13 §5.6.19 / RFC 8011 §5.2.13), print-color-mode (PWG 5100.13).
//
// Rule for IPP values with no constant: they are left out of the capability, so they cannot be
// asked for. Where a constant lists several IPP keywords, the first one the printer supports
// (for that size, in media-col-database) is the one printed with; the others only make the
// constant appear.
import type { ColorMode, Duplex, InputSlot, MediaSize, MediaType, Quality } from './constants.ts';

/** Media sizes: x × y in hundredths of a millimetre, portrait (PWG 5100.7 media-size). */
export interface MediaSizeMapping {
  readonly svc: MediaSize;
  readonly pwg: string;
  readonly x: number;
  readonly y: number;
}
const inch = (v: number) => Math.round(v * 2540);

export const MEDIA_SIZE_MAP = [
  { svc: 'SVC_MS_A4', pwg: 'iso_a4_210x297mm', x: 21000, y: 29700 },
  { svc: 'SVC_MS_A3', pwg: 'iso_a3_297x420mm', x: 29700, y: 42000 },
  { svc: 'SVC_MS_A5', pwg: 'iso_a5_148x210mm', x: 14800, y: 21000 },
  { svc: 'SVC_MS_A6', pwg: 'iso_a6_105x148mm', x: 10500, y: 14800 },
  { svc: 'SVC_MS_B5', pwg: 'iso_b5_176x250mm', x: 17600, y: 25000 },
  { svc: 'SVC_MS_JIS_B5', pwg: 'jis_b5_182x257mm', x: 18200, y: 25700 },
  { svc: 'SVC_MS_LETTER', pwg: 'na_letter_8.5x11in', x: inch(8.5), y: inch(11) },
  { svc: 'SVC_MS_LEGAL', pwg: 'na_legal_8.5x14in', x: inch(8.5), y: inch(14) },
  { svc: 'SVC_MS_EXECUTIVE', pwg: 'na_executive_7.25x10.5in', x: inch(7.25), y: inch(10.5) },
  { svc: 'SVC_MS_TABLOID', pwg: 'na_ledger_11x17in', x: inch(11), y: inch(17) },
  { svc: 'SVC_MS_3X5', pwg: 'na_index-3x5_3x5in', x: inch(3), y: inch(5) },
  { svc: 'SVC_MS_3_5X5', pwg: 'oe_photo-l_3.5x5in', x: inch(3.5), y: inch(5) },
  { svc: 'SVC_MS_4X6', pwg: 'na_index-4x6_4x6in', x: inch(4), y: inch(6) },
  { svc: 'SVC_MS_10X15CM', pwg: 'om_small-photo_100x150mm', x: 10000, y: 15000 },
  { svc: 'SVC_MS_5X7', pwg: 'na_5x7_5x7in', x: inch(5), y: inch(7) },
  { svc: 'SVC_MS_8X10', pwg: 'na_govt-letter_8x10in', x: inch(8), y: inch(10) },
  { svc: 'SVC_MS_HAGAKI', pwg: 'jpn_hagaki_100x148mm', x: 10000, y: 14800 },
  { svc: 'SVC_MS_ENV_DL', pwg: 'iso_dl_110x220mm', x: 11000, y: 22000 },
  { svc: 'SVC_MS_ENV_C5', pwg: 'iso_c5_162x229mm', x: 16200, y: 22900 },
  { svc: 'SVC_MS_ENV_C6', pwg: 'iso_c6_114x162mm', x: 11400, y: 16200 },
  { svc: 'SVC_MS_ENV_10', pwg: 'na_number-10_4.125x9.5in', x: inch(4.125), y: inch(9.5) },
] as const satisfies readonly MediaSizeMapping[];

/** A printer's media-size matches a constant within ±0.5 mm per side: printers round inch
 *  sizes differently (ippeveprinter says 10477 for #10's 104.775 mm). */
export const MEDIA_SIZE_TOLERANCE = 50;

/** Keyword lists, most preferred first. */
export interface KeywordMapping<S extends string> {
  readonly svc: S;
  readonly ipp: readonly string[];
}

export const MEDIA_TYPE_MAP = [
  { svc: 'SVC_MT_PLAIN', ipp: ['stationery'] },
  {
    svc: 'SVC_MT_PHOTO',
    ipp: [
      'photographic-glossy',
      'photographic-high-gloss',
      'photographic-semi-gloss',
      'photographic-satin',
      'photographic',
    ],
  },
  { svc: 'SVC_MT_MATTE', ipp: ['photographic-matte'] },
  { svc: 'SVC_MT_ENVELOPE', ipp: ['envelope', 'envelope-plain'] },
  { svc: 'SVC_MT_LABELS', ipp: ['labels'] },
  { svc: 'SVC_MT_CARDSTOCK', ipp: ['cardstock'] },
] as const satisfies ReadonlyArray<KeywordMapping<MediaType>>;

export const INPUT_SLOT_MAP = [
  { svc: 'SVC_IS_AUTO', ipp: ['auto'] },
  { svc: 'SVC_IS_CASS1', ipp: ['main', 'tray-1'] },
  { svc: 'SVC_IS_CASS2', ipp: ['tray-2'] },
  { svc: 'SVC_IS_CASS3', ipp: ['tray-3'] },
  { svc: 'SVC_IS_REAR', ipp: ['rear'] },
  { svc: 'SVC_IS_MANUAL', ipp: ['manual'] },
  { svc: 'SVC_IS_BYPASS', ipp: ['by-pass-tray'] },
  { svc: 'SVC_IS_PHOTO', ipp: ['photo'] },
  { svc: 'SVC_IS_ENVELOPE', ipp: ['envelope'] },
] as const satisfies ReadonlyArray<KeywordMapping<InputSlot>>;

export const COLOR_MODE_MAP = [
  { svc: 'SVC_CM_MONO', ipp: ['monochrome', 'process-monochrome', 'auto-monochrome'] },
  { svc: 'SVC_CM_COLOR', ipp: ['color'] },
] as const satisfies ReadonlyArray<KeywordMapping<ColorMode>>;

export const DUPLEX_MAP = [
  { svc: 'SVC_DP_NONE', ipp: ['one-sided'] },
  { svc: 'SVC_DP_NOTUMBLE', ipp: ['two-sided-long-edge'] },
  { svc: 'SVC_DP_TUMBLE', ipp: ['two-sided-short-edge'] },
] as const satisfies ReadonlyArray<KeywordMapping<Duplex>>;

/** print-quality is an enum on the wire: 3 draft, 4 normal, 5 high. */
export const QUALITY_MAP = [
  { svc: 'SVC_QU_DRAFT', ipp: 3, keyword: 'draft' },
  { svc: 'SVC_QU_NORMAL', ipp: 4, keyword: 'normal' },
  { svc: 'SVC_QU_HIGH', ipp: 5, keyword: 'high' },
] as const satisfies ReadonlyArray<{ svc: Quality; ipp: number; keyword: string }>;

/** The constant for a media-size, either orientation. */
export function mediaSizeFor(x: number, y: number): MediaSizeMapping | undefined {
  const [a, b] = x <= y ? [x, y] : [y, x];
  return MEDIA_SIZE_MAP.find(
    (m) => Math.abs(m.x - a) <= MEDIA_SIZE_TOLERANCE && Math.abs(m.y - b) <= MEDIA_SIZE_TOLERANCE,
  );
}

export function mediaSizeOf(svc: MediaSize): MediaSizeMapping {
  const found = MEDIA_SIZE_MAP.find((m) => m.svc === svc);
  // The table has a row for every MediaSize (a test checks it): this is a caller's cast gone wrong.
  if (!found) throw new Error(`no media size ${String(svc)}`);
  return found;
}

/**
 * The constant an IPP keyword stands for on a printer that supports `supported`: the keyword
 * counts only if it is the first of its constant's list the printer has (so each constant
 * prints with exactly one keyword, and the capability never offers what printing would not use).
 */
export function svcForKeyword<S extends string>(
  map: ReadonlyArray<KeywordMapping<S>>,
  keyword: string,
  supported?: readonly string[],
): S | undefined {
  const row = map.find((r) => r.ipp.includes(keyword));
  if (!row) return undefined;
  if (supported && row.ipp.find((k) => supported.includes(k)) !== keyword) return undefined;
  return row.svc;
}

/** The IPP keyword a constant prints with on a printer that supports `supported`. */
export function keywordForSvc<S extends string>(
  map: ReadonlyArray<KeywordMapping<S>>,
  svc: S,
  supported: readonly string[],
): string | undefined {
  return map.find((r) => r.svc === svc)?.ipp.find((k) => supported.includes(k));
}

/** Points (1/72 in) for hundredths of a millimetre. */
export function hmmToPoints(v: number): number {
  return (v / 2540) * 72;
}
