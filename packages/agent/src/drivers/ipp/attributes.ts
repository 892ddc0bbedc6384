// Typed access to decoded attributes, and small builders for requests. Lookups are lenient on
// syntax (a `name` where a `keyword` is expected still reads as a string), because printers in
// the field mix them (RFC 8011 §5.1.4 allows keyword | name for many attributes).
import type { IppAttribute, IppGroup, IppMessage, IppValue, Range, Resolution, StringTag } from './model.ts';
import type { GroupName } from './tags.ts';

export class IppAttributes {
  readonly list: readonly IppAttribute[];
  private readonly byName: Map<string, IppAttribute>;
  constructor(list: readonly IppAttribute[]) {
    this.list = list;
    // A name repeated in a group (RFC 8011 §4.1.3 forbids it; ippeveprinter -a does it for
    // document-format-supported): the first counts, as in CUPS' ippFindAttribute.
    this.byName = new Map();
    for (const a of list) if (!this.byName.has(a.name)) this.byName.set(a.name, a);
  }
  static of(msg: IppMessage, group: GroupName): IppAttributes {
    return new IppAttributes(msg.groups.filter((g) => g.tag === group).flatMap((g) => g.attributes));
  }
  /** All groups of a kind, one reader each (Get-Jobs answers one job group per job). */
  static each(msg: IppMessage, group: GroupName): IppAttributes[] {
    return msg.groups.filter((g) => g.tag === group).map((g) => new IppAttributes(g.attributes));
  }
  has(name: string): boolean {
    return this.byName.has(name);
  }
  values(name: string): IppValue[] {
    return this.byName.get(name)?.values ?? [];
  }
  strings(name: string): string[] {
    return this.values(name).flatMap((v) => ('value' in v && typeof v.value === 'string' ? [v.value] : []));
  }
  string(name: string): string | undefined {
    return this.strings(name)[0];
  }
  /** integer and enum values. */
  integers(name: string): number[] {
    return this.values(name).flatMap((v) => (v.tag === 'integer' || v.tag === 'enum' ? [v.value] : []));
  }
  integer(name: string): number | undefined {
    return this.integers(name)[0];
  }
  boolean(name: string): boolean | undefined {
    const v = this.values(name)[0];
    return v?.tag === 'boolean' ? v.value : undefined;
  }
  ranges(name: string): Range[] {
    return this.values(name).flatMap((v) => (v.tag === 'rangeOfInteger' ? [v.value] : []));
  }
  resolutions(name: string): Resolution[] {
    return this.values(name).flatMap((v) => (v.tag === 'resolution' ? [v.value] : []));
  }
  dates(name: string): Date[] {
    return this.values(name).flatMap((v) => (v.tag === 'dateTime' ? [v.value] : []));
  }
  /** octetString values read as UTF-8 text (printer-supply, printer-input-tray: PWG 5100.13 §6.6). */
  octetStrings(name: string): string[] {
    return this.values(name).flatMap((v) => (v.tag === 'octetString' ? [Buffer.from(v.value).toString('utf8')] : []));
  }
  collections(name: string): IppAttributes[] {
    return this.values(name).flatMap((v) => (v.tag === 'collection' ? [new IppAttributes(v.value)] : []));
  }
  collection(name: string): IppAttributes | undefined {
    return this.collections(name)[0];
  }
  /** The out-of-band tag of an attribute (no-value, unknown, unsupported…), if that is what it holds. */
  outOfBand(name: string): string | undefined {
    const v = this.values(name)[0];
    return v && !('value' in v) ? v.tag : undefined;
  }
}

// Builders: one attribute per call, values of one syntax.
const str =
  (tag: StringTag) =>
  (name: string, ...values: string[]): IppAttribute => ({ name, values: values.map((value) => ({ tag, value })) });
export const keyword = str('keyword');
export const uri = str('uri');
export const charset = str('charset');
export const naturalLanguage = str('naturalLanguage');
export const mimeMediaType = str('mimeMediaType');
export const nameAttr = str('nameWithoutLanguage');
export const textAttr = str('textWithoutLanguage');
export const integer = (name: string, ...values: number[]): IppAttribute => ({
  name,
  values: values.map((value) => ({ tag: 'integer', value })),
});
export const enumAttr = (name: string, ...values: number[]): IppAttribute => ({
  name,
  values: values.map((value) => ({ tag: 'enum', value })),
});
export const boolean = (name: string, value: boolean): IppAttribute => ({ name, values: [{ tag: 'boolean', value }] });
export const rangeOfInteger = (name: string, ...values: Range[]): IppAttribute => ({
  name,
  values: values.map((value) => ({ tag: 'rangeOfInteger', value })),
});
export const collection = (name: string, ...values: IppAttribute[][]): IppAttribute => ({
  name,
  values: values.map((value) => ({ tag: 'collection', value })),
});

/** The operation group every request starts with (RFC 8011 §4.1.4: charset, then language). */
export function operationGroup(...rest: IppAttribute[]): IppGroup {
  return {
    tag: 'operation',
    attributes: [charset('attributes-charset', 'utf-8'), naturalLanguage('attributes-natural-language', 'en'), ...rest],
  };
}
