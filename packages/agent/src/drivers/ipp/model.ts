// The in-memory shape of an IPP message (RFC 8010 §3.1). Every value carries its own tag
// because a 1setOf may mix syntaxes (e.g. `media` as keyword | name, RFC 8011 §5.2.11).
import type { GroupName, OutOfBandTag } from './tags.ts';

export type StringTag =
  | 'keyword'
  | 'uri'
  | 'uriScheme'
  | 'charset'
  | 'naturalLanguage'
  | 'mimeMediaType'
  | 'nameWithoutLanguage'
  | 'textWithoutLanguage';

export interface Resolution {
  x: number;
  y: number;
  units: 'dpi' | 'dpcm';
}
export interface Range {
  lower: number;
  upper: number;
}

export type IppValue =
  | { tag: 'integer' | 'enum'; value: number }
  | { tag: 'boolean'; value: boolean }
  | { tag: StringTag; value: string }
  | { tag: 'nameWithLanguage' | 'textWithLanguage'; value: string; lang: string }
  | { tag: 'octetString'; value: Uint8Array }
  /** RFC 2579 DateAndTime; `offsetMinutes` keeps the sender's UTC offset for re-encoding. */
  | { tag: 'dateTime'; value: Date; offsetMinutes: number }
  | { tag: 'resolution'; value: Resolution }
  | { tag: 'rangeOfInteger'; value: Range }
  | { tag: 'collection'; value: IppAttribute[] }
  | { tag: OutOfBandTag }
  /** A tag this codec does not know: kept as raw bytes so nothing is lost (RFC 8010 §3.5.2). */
  | { tag: 'unknownTag'; code: number; value: Uint8Array };

export interface IppAttribute {
  name: string;
  values: IppValue[];
}
export interface IppGroup {
  tag: GroupName;
  attributes: IppAttribute[];
}

export interface IppMessage {
  /** IPP version, e.g. [2, 0]. */
  version: readonly [number, number];
  /** operation-id in a request, status-code in a response. */
  code: number;
  requestId: number;
  groups: IppGroup[];
  /** Document data that follows end-of-attributes (RFC 8010 §3.1.1). */
  data?: Uint8Array;
}
