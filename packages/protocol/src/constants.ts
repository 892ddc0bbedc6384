// Print parameter constants (spec: "Printer capability"). The spec writes the service prefix
// as SVC and lists only some values; the rest follow the same pattern. docs/printers-and-
// scanners.md lists them all with the IPP keyword each maps to (agent: ipp/capability.ts).
export const ColorMode = ['SVC_CM_MONO', 'SVC_CM_COLOR'] as const;
export const MediaSize = ['SVC_MS_A4', 'SVC_MS_A5', 'SVC_MS_A3', 'SVC_MS_B5', 'SVC_MS_LETTER', 'SVC_MS_LEGAL', 'SVC_MS_4X6'] as const;
export const MediaType = ['SVC_MT_PLAIN', 'SVC_MT_PHOTO'] as const;
export const Duplex = ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE', 'SVC_DP_TUMBLE'] as const;
export const Quality = ['SVC_QU_DRAFT', 'SVC_QU_NORMAL', 'SVC_QU_HIGH'] as const;
export const InputSlot = ['SVC_IS_AUTO', 'SVC_IS_CASS1', 'SVC_IS_REAR'] as const;

export type ColorMode = (typeof ColorMode)[number];
export type MediaSize = (typeof MediaSize)[number];
export type MediaType = (typeof MediaType)[number];
export type Duplex = (typeof Duplex)[number];
export type Quality = (typeof Quality)[number];
export type InputSlot = (typeof InputSlot)[number];

// Device.connection_type values (spec: "not shown").
export const ConnectionType = ['usb', 'network', 'virtual'] as const;
export type ConnectionType = (typeof ConnectionType)[number];

export const NetworkType = ['ethernet', 'wifi', 'cellular'] as const;
export type NetworkType = (typeof NetworkType)[number];
