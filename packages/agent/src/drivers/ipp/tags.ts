// IPP wire constants (RFC 8010 §3.5 "Tags", RFC 8011 §5.4.15 operation ids, §B status codes).
// Names are the RFC's own so they can be looked up; codes are the bytes on the wire.

/** Delimiter tags that open an attribute group (RFC 8010 §3.5.1). */
export const GroupTag = {
  operation: 0x01,
  job: 0x02,
  printer: 0x04,
  unsupported: 0x05,
  subscription: 0x06,
  'event-notification': 0x07,
  resource: 0x08,
  document: 0x09,
  system: 0x0a,
} as const;
export type GroupName = keyof typeof GroupTag;
export const END_OF_ATTRIBUTES = 0x03;

/** Value tags (RFC 8010 §3.5.2). Out-of-band tags carry no value (RFC 8010 §3.8). */
export const ValueTag = {
  unsupported: 0x10,
  default: 0x11,
  unknown: 0x12,
  'no-value': 0x13,
  'not-settable': 0x15,
  'delete-attribute': 0x16,
  'admin-define': 0x17,
  integer: 0x21,
  boolean: 0x22,
  enum: 0x23,
  octetString: 0x30,
  dateTime: 0x31,
  resolution: 0x32,
  rangeOfInteger: 0x33,
  begCollection: 0x34,
  textWithLanguage: 0x35,
  nameWithLanguage: 0x36,
  endCollection: 0x37,
  textWithoutLanguage: 0x41,
  nameWithoutLanguage: 0x42,
  keyword: 0x44,
  uri: 0x45,
  uriScheme: 0x46,
  charset: 0x47,
  naturalLanguage: 0x48,
  mimeMediaType: 0x49,
  memberAttrName: 0x4a,
  /** RFC 8010 §3.5.2: the real tag follows as 4 octets in the value. */
  extension: 0x7f,
} as const;
export type ValueTagName = keyof typeof ValueTag;

export const OutOfBandTags = [
  'unsupported',
  'default',
  'unknown',
  'no-value',
  'not-settable',
  'delete-attribute',
  'admin-define',
] as const;
export type OutOfBandTag = (typeof OutOfBandTags)[number];

/** Operation ids the box uses (RFC 8011 §5.4.15, PWG 5100.13 §4.1 for Identify-Printer). */
export const Operation = {
  'Print-Job': 0x0002,
  'Validate-Job': 0x0004,
  'Create-Job': 0x0005,
  'Send-Document': 0x0006,
  'Cancel-Job': 0x0008,
  'Get-Job-Attributes': 0x0009,
  'Get-Jobs': 0x000a,
  'Get-Printer-Attributes': 0x000b,
  'Identify-Printer': 0x003c,
  // CUPS's own operations (CUPS Implementation of IPP, "CUPS Operations"): the box lists the
  // queues of its local CUPS for `--printer auto` (docs/printers-and-scanners.md).
  'CUPS-Get-Default': 0x4001,
  'CUPS-Get-Printers': 0x4002,
} as const;
export type OperationName = keyof typeof Operation;

/** Status codes worth naming (RFC 8011 Appendix B); others print as hex. */
export const StatusCode: Readonly<Record<number, string>> = {
  0x0000: 'successful-ok',
  0x0001: 'successful-ok-ignored-or-substituted-attributes',
  0x0002: 'successful-ok-conflicting-attributes',
  0x0400: 'client-error-bad-request',
  0x0401: 'client-error-forbidden',
  0x0402: 'client-error-not-authenticated',
  0x0403: 'client-error-not-authorized',
  0x0404: 'client-error-not-possible',
  0x0405: 'client-error-timeout',
  0x0406: 'client-error-not-found',
  0x0407: 'client-error-gone',
  0x0408: 'client-error-request-entity-too-large',
  0x040a: 'client-error-document-format-not-supported',
  0x040b: 'client-error-attributes-or-values-not-supported',
  0x040c: 'client-error-uri-scheme-not-supported',
  0x040d: 'client-error-charset-not-supported',
  0x040e: 'client-error-conflicting-attributes',
  0x0410: 'client-error-document-password-error',
  0x0500: 'server-error-internal-error',
  0x0501: 'server-error-operation-not-supported',
  0x0502: 'server-error-service-unavailable',
  0x0503: 'server-error-version-not-supported',
  0x0504: 'server-error-device-error',
  0x0505: 'server-error-temporary-error',
  0x0506: 'server-error-not-accepting-jobs',
  0x0507: 'server-error-busy',
  0x0508: 'server-error-job-canceled',
};

export function statusName(code: number): string {
  return StatusCode[code] ?? `0x${code.toString(16).padStart(4, '0')}`;
}

/** RFC 8011 §5.4.2 job-state enum. */
export const JobState = {
  3: 'pending',
  4: 'pending-held',
  5: 'processing',
  6: 'processing-stopped',
  7: 'canceled',
  8: 'aborted',
  9: 'completed',
} as const;
export type JobStateName = (typeof JobState)[keyof typeof JobState];

/** RFC 8011 §5.4.11 printer-state enum. */
export const PrinterState = { 3: 'idle', 4: 'processing', 5: 'stopped' } as const;
export type PrinterStateName = (typeof PrinterState)[keyof typeof PrinterState];

/** PWG 5100.13 §5.6.19 print-quality enum. */
export const PrintQuality = { draft: 3, normal: 4, high: 5 } as const;

const byCode = new Map<number, ValueTagName>(Object.entries(ValueTag).map(([k, v]) => [v, k as ValueTagName]));
export function valueTagName(code: number): ValueTagName | undefined {
  return byCode.get(code);
}
const groupByCode = new Map<number, GroupName>(Object.entries(GroupTag).map(([k, v]) => [v, k as GroupName]));
export function groupTagName(code: number): GroupName | undefined {
  return groupByCode.get(code);
}
