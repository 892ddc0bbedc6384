// Print create options (docs/api.md, "POST /api/print/create", options.*) resolved against the
// box's Printer capability: the defaults applied, every one documented in
// docs/printing.md ("Options and defaults"), every value checked against what the printer
// lists for the chosen media size and type. Pure: no database, no HTTP; the print service
// calls it and sends the result to the box as PrintJobOptions.
import {
  ApiError,
  type ColorMode,
  type Duplex,
  type InputSlot,
  type MediaSize,
  type MediaType,
  type PageRange,
  type PrinterCapability,
  type PrintJobOptions,
  type Quality,
} from '@boxhub/protocol';

/** The print options of the create request that shape the print (schema-checked already). */
export interface PrintOptionsInput {
  media_size?: MediaSize;
  media_type?: MediaType;
  color_mode?: ColorMode;
  borderless?: boolean;
  quality?: Quality;
  duplex?: Duplex;
  input_slot?: InputSlot;
  /** Copies (options.number). */
  number?: number;
  page_ranges?: string;
  reverse?: boolean;
  collate?: boolean;
  strict?: boolean;
}

/** The defaults the API states (docs/printing.md, "Options and defaults"). */
export const SPEC_DEFAULTS = {
  media_size: 'SVC_MS_A4',
  media_type: 'SVC_MT_PLAIN',
  borderless: false,
  number: 1,
  reverse: true,
  collate: true,
  strict: false,
} as const;

export const MAX_COPIES = 999;
/** page_ranges: at most this many comma-separated parts (PrintJobOptions allows 100). */
export const MAX_PAGE_RANGES = 100;

const list = (v: readonly string[] | undefined) => (v?.length ? v.join(', ') : 'none');

function unsupported(option: string, value: string, allowed: readonly string[] | undefined, where = ''): ApiError {
  return new ApiError(
    'PRINT_OPTION_UNSUPPORTED',
    `options.${option} ${value} is not supported by this printer${where}; allowed: ${list(allowed)}`,
    { option, value, allowed: allowed ?? [] },
  );
}

/**
 * "1,3,5", "1-10", "1-3,5,6-10" (options.page_ranges, docs/api.md): pages from 1, ranges inclusive,
 * spaces around numbers allowed. Parts are printed in the order written, a page named twice
 * prints twice (docs/printing.md). Bounds against the document: document-check.ts.
 */
export function parsePageRanges(text: string): PageRange[] {
  const bad = (why: string) =>
    new ApiError(
      'INVALID_PARAMETER',
      `options.page_ranges '${text.length > 40 ? `${text.slice(0, 40)}…` : text}' is not valid: ${why}`,
    );
  const parts = text.split(',');
  if (parts.length > MAX_PAGE_RANGES) throw bad(`it has ${parts.length} parts, at most ${MAX_PAGE_RANGES} are allowed`);
  return parts.map((part) => {
    const m = /^\s*(\d{1,6})\s*(?:-\s*(\d{1,6})\s*)?$/.exec(part);
    if (!m) throw bad(`'${part.trim()}' is not a page or a range like 1-3`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1) throw bad('pages count from 1');
    if (to < from) throw bad(`${from}-${to} runs backwards (write ${to}-${from})`);
    return { from, to };
  });
}

/**
 * Resolves the options of a print create against the printer's capability. Throws ApiError:
 * PRINTER_UNSUPPORTED without a capability, PRINT_OPTION_UNSUPPORTED naming the option and
 * what is allowed, INVALID_PARAMETER for a malformed page_ranges or copies.
 */
export function resolvePrintOptions(input: PrintOptionsInput, capability: PrinterCapability | null): PrintJobOptions {
  if (!capability)
    throw new ApiError('PRINTER_UNSUPPORTED', 'the box cannot drive this printer, so it has no print capability');
  const media_size = input.media_size ?? SPEC_DEFAULTS.media_size;
  const size = capability.media_sizes.find((s) => s.media_size === media_size);
  if (!size)
    throw unsupported(
      'media_size',
      media_size,
      capability.media_sizes.map((s) => s.media_size),
    );
  const media_type = input.media_type ?? SPEC_DEFAULTS.media_type;
  const type = size.media_types.find((t) => t.media_type === media_type);
  if (!type)
    throw unsupported(
      'media_type',
      media_type,
      size.media_types.map((t) => t.media_type),
      ` for ${media_size}`,
    );
  const where = ` for ${media_size} / ${media_type}`;

  const borderless = input.borderless ?? SPEC_DEFAULTS.borderless;
  if (borderless && !type.borderless) {
    const can = capability.media_sizes.flatMap((s) =>
      s.media_types.filter((t) => t.borderless).map((t) => `${s.media_size} / ${t.media_type}`),
    );
    throw new ApiError(
      'PRINT_OPTION_UNSUPPORTED',
      `options.borderless is not supported by this printer${where}; borderless is possible on: ${list(can)}`,
      { option: 'borderless', value: true, allowed: can },
    );
  }
  if (input.color_mode !== undefined && !capability.color_mode.includes(input.color_mode))
    throw unsupported('color_mode', input.color_mode, capability.color_mode);
  if (input.quality !== undefined && !type.quality.includes(input.quality))
    throw unsupported('quality', input.quality, type.quality, where);
  if (input.duplex !== undefined && !type.duplex.includes(input.duplex))
    throw unsupported('duplex', input.duplex, type.duplex, where);
  if (input.input_slot !== undefined && !type.input_slot?.includes(input.input_slot))
    throw unsupported('input_slot', input.input_slot, type.input_slot, where);
  const strict = input.strict ?? SPEC_DEFAULTS.strict;
  if (strict && !capability.support_strict) {
    throw new ApiError(
      'PRINT_OPTION_UNSUPPORTED',
      'options.strict is not supported by this printer: it does not report the sides it printed (support_strict is false)',
      { option: 'strict', value: true, allowed: [false] },
    );
  }
  const copies = input.number ?? SPEC_DEFAULTS.number;
  if (!Number.isInteger(copies) || copies < 1 || copies > MAX_COPIES)
    throw new ApiError('INVALID_PARAMETER', `options.number ${copies} is not valid: copies are 1 to ${MAX_COPIES}`);

  const out: PrintJobOptions = {
    media_size,
    media_type,
    borderless,
    copies,
    strict,
    collate: input.collate ?? SPEC_DEFAULTS.collate,
    reverse: input.reverse ?? SPEC_DEFAULTS.reverse,
  };
  // "Not shown" defaults (docs/printing.md): colour when the printer has it, normal quality
  // when listed, one-sided; the input slot is left to the printer's own choice.
  const color =
    input.color_mode ?? (capability.color_mode.includes('SVC_CM_COLOR') ? 'SVC_CM_COLOR' : capability.color_mode[0]);
  if (color) out.color_mode = color;
  const quality = input.quality ?? (type.quality.includes('SVC_QU_NORMAL') ? 'SVC_QU_NORMAL' : undefined);
  if (quality) out.quality = quality;
  const duplex = input.duplex ?? (type.duplex.includes('SVC_DP_NONE') ? 'SVC_DP_NONE' : undefined);
  if (duplex) out.duplex = duplex;
  if (input.input_slot !== undefined) out.input_slot = input.input_slot;
  // An empty page_ranges is "every page", as leaving it out (clients send "" for unset fields).
  if (input.page_ranges !== undefined && input.page_ranges.trim() !== '')
    out.page_ranges = parsePageRanges(input.page_ranges);
  return out;
}
