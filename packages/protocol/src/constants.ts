// Print parameter constants (docs/api.md, "Printer capability"), written with the prefix SVC.
// The API's own examples are only some values (SVC_CM_MONO, SVC_MS_A4, SVC_MT_PLAIN/PHOTO, the three
// SVC_DP_*, SVC_QU_HIGH/NORMAL, SVC_IS_AUTO/CASS1/REAR); the rest follow the same pattern.
// Each maps to IPP and back through one table (print-mapping.ts, docs/printing.md "Mapping").
// The sets are closed: an IPP value with no constant is left out of the capability.
export const ColorMode = ['SVC_CM_MONO', 'SVC_CM_COLOR'] as const;
export const MediaSize = [
  'SVC_MS_A4',
  'SVC_MS_A3',
  'SVC_MS_A5',
  'SVC_MS_A6',
  'SVC_MS_B5',
  'SVC_MS_JIS_B5',
  'SVC_MS_LETTER',
  'SVC_MS_LEGAL',
  'SVC_MS_EXECUTIVE',
  'SVC_MS_TABLOID',
  'SVC_MS_3X5',
  'SVC_MS_3_5X5',
  'SVC_MS_4X6',
  'SVC_MS_10X15CM',
  'SVC_MS_5X7',
  'SVC_MS_8X10',
  'SVC_MS_HAGAKI',
  'SVC_MS_ENV_DL',
  'SVC_MS_ENV_C5',
  'SVC_MS_ENV_C6',
  'SVC_MS_ENV_10',
] as const;
export const MediaType = [
  'SVC_MT_PLAIN',
  'SVC_MT_PHOTO',
  'SVC_MT_MATTE',
  'SVC_MT_ENVELOPE',
  'SVC_MT_LABELS',
  'SVC_MT_CARDSTOCK',
] as const;
export const Duplex = ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE', 'SVC_DP_TUMBLE'] as const;
export const Quality = ['SVC_QU_DRAFT', 'SVC_QU_NORMAL', 'SVC_QU_HIGH'] as const;
export const InputSlot = [
  'SVC_IS_AUTO',
  'SVC_IS_CASS1',
  'SVC_IS_CASS2',
  'SVC_IS_CASS3',
  'SVC_IS_REAR',
  'SVC_IS_MANUAL',
  'SVC_IS_BYPASS',
  'SVC_IS_PHOTO',
  'SVC_IS_ENVELOPE',
] as const;

export type ColorMode = (typeof ColorMode)[number];
export type MediaSize = (typeof MediaSize)[number];
export type MediaType = (typeof MediaType)[number];
export type Duplex = (typeof Duplex)[number];
export type Quality = (typeof Quality)[number];
export type InputSlot = (typeof InputSlot)[number];

// Device.connection_type values (boxhub's own; docs/printers-and-scanners.md).
export const ConnectionType = ['usb', 'network', 'virtual'] as const;
export type ConnectionType = (typeof ConnectionType)[number];

export const NetworkType = ['ethernet', 'wifi', 'cellular'] as const;
export type NetworkType = (typeof NetworkType)[number];
