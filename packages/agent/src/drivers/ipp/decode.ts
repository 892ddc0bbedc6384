// Decodes IPP bytes (RFC 8010 §3.1–§3.9). Every read is bounds-checked: truncated or malformed
// input throws IppDecodeError with the offset, it never reads past the buffer or loops.
import { IppDecodeError } from './errors.ts';
import type { IppAttribute, IppGroup, IppMessage, IppValue, StringTag } from './model.ts';
import { END_OF_ATTRIBUTES, groupTagName, OutOfBandTags, ValueTag, valueTagName } from './tags.ts';
import type { OutOfBandTag } from './tags.ts';

/** Collections nest (media-col → media-size); real printers go 2–3 deep. Bounds the recursion. */
const MAX_COLLECTION_DEPTH = 16;

class Reader {
  pos = 0;
  readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
  }
  need(n: number, what: string): void {
    if (this.pos + n > this.buf.length) {
      throw new IppDecodeError(`truncated: ${what} needs ${n} byte(s), ${this.buf.length - this.pos} left`, this.pos);
    }
  }
  u8(what: string): number {
    this.need(1, what);
    return this.buf.readUInt8(this.pos++);
  }
  u16(what: string): number {
    this.need(2, what);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  i32(what: string): number {
    this.need(4, what);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  field(what: string): Buffer {
    return this.bytes(this.u16(`${what} length`), what);
  }
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
}

const OOB = new Set<string>(OutOfBandTags);
const STRING_TAGS = new Set<string>([
  'keyword',
  'uri',
  'uriScheme',
  'charset',
  'naturalLanguage',
  'mimeMediaType',
  'nameWithoutLanguage',
  'textWithoutLanguage',
]);

function fixed(b: Buffer, n: number, what: string, at: number): void {
  if (b.length !== n) throw new IppDecodeError(`${what} value must be ${n} octets, got ${b.length}`, at);
}

function decodeDateTime(b: Buffer, at: number): IppValue {
  fixed(b, 11, 'dateTime', at);
  const dir = String.fromCharCode(b[8]!);
  if (dir !== '+' && dir !== '-')
    throw new IppDecodeError(`dateTime direction must be + or -, got ${JSON.stringify(dir)}`, at);
  const offsetMinutes = (dir === '-' ? -1 : 1) * (b[9]! * 60 + b[10]!);
  const local = Date.UTC(b.readUInt16BE(0), b[2]! - 1, b[3], b[4], b[5], b[6], b[7]! * 100);
  return { tag: 'dateTime', value: new Date(local - offsetMinutes * 60_000), offsetMinutes };
}

/** Decodes one simple (non-collection) value from its tag and raw bytes. */
function decodeSimple(code: number, b: Buffer, at: number): IppValue {
  const name = valueTagName(code);
  if (
    name === undefined ||
    name === 'extension' ||
    name === 'memberAttrName' ||
    name === 'begCollection' ||
    name === 'endCollection'
  ) {
    return { tag: 'unknownTag', code, value: Uint8Array.from(b) };
  }
  if (OOB.has(name)) return { tag: name as OutOfBandTag };
  switch (name) {
    case 'integer':
    case 'enum':
      fixed(b, 4, name, at);
      return { tag: name, value: b.readInt32BE(0) };
    case 'boolean':
      fixed(b, 1, name, at);
      return { tag: 'boolean', value: b[0] !== 0 };
    case 'octetString':
      return { tag: 'octetString', value: Uint8Array.from(b) };
    case 'dateTime':
      return decodeDateTime(b, at);
    case 'resolution': {
      fixed(b, 9, name, at);
      const u = b.readInt8(8);
      if (u !== 3 && u !== 4) throw new IppDecodeError(`resolution units must be 3 (dpi) or 4 (dpcm), got ${u}`, at);
      return {
        tag: 'resolution',
        value: { x: b.readInt32BE(0), y: b.readInt32BE(4), units: u === 3 ? 'dpi' : 'dpcm' },
      };
    }
    case 'rangeOfInteger':
      fixed(b, 8, name, at);
      return { tag: 'rangeOfInteger', value: { lower: b.readInt32BE(0), upper: b.readInt32BE(4) } };
    case 'textWithLanguage':
    case 'nameWithLanguage': {
      const r = new Reader(b);
      try {
        const lang = r.field('natural language').toString('utf8');
        const value = r.field('text').toString('utf8');
        if (!r.done) throw new IppDecodeError('trailing bytes', r.pos);
        return { tag: name, value, lang };
      } catch (e) {
        if (e instanceof IppDecodeError) throw new IppDecodeError(`bad ${name}: ${e.message}`, at);
        throw e;
      }
    }
    default:
      if (STRING_TAGS.has(name)) return { tag: name as StringTag, value: b.toString('utf8') };
      return { tag: 'unknownTag', code, value: Uint8Array.from(b) };
  }
}

/** Reads one value header (tag, name, value bytes). Returns null at a delimiter tag. */
function readHeader(r: Reader): { code: number; name: string; value: Buffer; at: number } | null {
  const at = r.pos;
  const code = r.u8('value tag');
  if (code <= 0x0f) {
    r.pos = at;
    return null;
  }
  let tag = code;
  const name = r.field('attribute name').toString('utf8');
  const value = r.field('value');
  if (code === ValueTag.extension) {
    // RFC 8010 §3.5.2: the extended tag is the first 4 octets of the value.
    if (value.length < 4) throw new IppDecodeError('extension tag without its 4-octet tag', at);
    tag = value.readInt32BE(0);
    return { code: tag, name, value: value.subarray(4), at };
  }
  return { code: tag, name, value, at };
}

/** Reads collection members up to and including endCollection (RFC 8010 §3.1.6). */
function readCollection(r: Reader, depth: number): IppAttribute[] {
  if (depth > MAX_COLLECTION_DEPTH)
    throw new IppDecodeError(`collections nested deeper than ${MAX_COLLECTION_DEPTH}`, r.pos);
  const members: IppAttribute[] = [];
  let current: IppAttribute | undefined;
  for (;;) {
    const h = readHeader(r);
    if (h === null) throw new IppDecodeError('collection not closed by endCollection', r.pos);
    if (h.name !== '') throw new IppDecodeError(`collection member value has a name (${JSON.stringify(h.name)})`, h.at);
    if (h.code === ValueTag.endCollection) return members;
    if (h.code === ValueTag.memberAttrName) {
      current = { name: h.value.toString('utf8'), values: [] };
      if (current.name === '') throw new IppDecodeError('empty memberAttrName', h.at);
      members.push(current);
      continue;
    }
    if (!current) throw new IppDecodeError('collection value before any memberAttrName', h.at);
    current.values.push(
      h.code === ValueTag.begCollection
        ? { tag: 'collection', value: readCollection(r, depth + 1) }
        : decodeSimple(h.code, h.value, h.at),
    );
  }
}

function readGroup(r: Reader, group: IppGroup): void {
  let current: IppAttribute | undefined;
  for (;;) {
    const h = readHeader(r);
    if (h === null) return;
    if (h.code === ValueTag.endCollection || h.code === ValueTag.memberAttrName) {
      throw new IppDecodeError(
        `${h.code === ValueTag.endCollection ? 'endCollection' : 'memberAttrName'} outside a collection`,
        h.at,
      );
    }
    let value: IppValue;
    if (h.code === ValueTag.begCollection) value = { tag: 'collection', value: readCollection(r, 1) };
    else value = decodeSimple(h.code, h.value, h.at);
    if (h.name === '') {
      // RFC 8010 §3.1.5: an empty name adds a value to the previous attribute (1setOf).
      if (!current) throw new IppDecodeError('additional value without an attribute', h.at);
      current.values.push(value);
    } else {
      current = { name: h.name, values: [value] };
      group.attributes.push(current);
    }
  }
}

/** Decodes a whole IPP message; bytes after end-of-attributes become `data`. */
export function decodeMessage(input: Uint8Array): IppMessage {
  const r = new Reader(Buffer.from(input.buffer, input.byteOffset, input.byteLength));
  const major = r.u8('version-number');
  const minor = r.u8('version-number');
  if (major < 1 || major > 2) throw new IppDecodeError(`unsupported IPP version ${major}.${minor}`, 0);
  const code = r.u16('operation-id/status-code');
  const requestId = r.i32('request-id');
  const groups: IppGroup[] = [];
  for (;;) {
    const at = r.pos;
    const tag = r.u8('delimiter tag');
    if (tag === END_OF_ATTRIBUTES) break;
    const name = groupTagName(tag);
    if (name === undefined)
      throw new IppDecodeError(`expected a group delimiter tag, got 0x${tag.toString(16).padStart(2, '0')}`, at);
    const group: IppGroup = { tag: name, attributes: [] };
    groups.push(group);
    readGroup(r, group);
  }
  const msg: IppMessage = { version: [major, minor], code, requestId, groups };
  if (!r.done) msg.data = Uint8Array.from(r.buf.subarray(r.pos));
  return msg;
}
