// Encodes an IPP message to bytes (RFC 8010 §3.1–§3.9).
import type { IppAttribute, IppMessage, IppValue } from './model.ts';
import { END_OF_ATTRIBUTES, GroupTag, ValueTag } from './tags.ts';

class Writer {
  private readonly chunks: Buffer[] = [];
  u8(n: number): void {
    const b = Buffer.alloc(1);
    b.writeUInt8(n);
    this.chunks.push(b);
  }
  u16(n: number): void {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(n);
    this.chunks.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    this.chunks.push(b);
  }
  bytes(b: Uint8Array): void {
    this.chunks.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  }
  /** A length-prefixed field; lengths are 2 octets, so 32767 is the most a value may hold. */
  field(b: Uint8Array, what: string): void {
    if (b.byteLength > 0x7fff)
      throw new RangeError(`IPP ${what} is ${b.byteLength} bytes; the limit is 32767 (RFC 8010 §3.1.4)`);
    this.u16(b.byteLength);
    this.bytes(b);
  }
  result(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

function int32(n: number): Buffer {
  if (!Number.isInteger(n) || n < -0x80000000 || n > 0x7fffffff) throw new RangeError(`IPP integer out of range: ${n}`);
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

/** RFC 2579 DateAndTime, 11 octets, in the value's own UTC offset. */
function dateTime(d: Date, offsetMinutes: number): Buffer {
  const local = new Date(d.getTime() + offsetMinutes * 60_000);
  const b = Buffer.alloc(11);
  b.writeUInt16BE(local.getUTCFullYear(), 0);
  b.writeUInt8(local.getUTCMonth() + 1, 2);
  b.writeUInt8(local.getUTCDate(), 3);
  b.writeUInt8(local.getUTCHours(), 4);
  b.writeUInt8(local.getUTCMinutes(), 5);
  b.writeUInt8(local.getUTCSeconds(), 6);
  b.writeUInt8(Math.floor(local.getUTCMilliseconds() / 100), 7);
  b.write(offsetMinutes < 0 ? '-' : '+', 8, 'latin1');
  b.writeUInt8(Math.floor(Math.abs(offsetMinutes) / 60), 9);
  b.writeUInt8(Math.abs(offsetMinutes) % 60, 10);
  return b;
}

function tagCode(v: IppValue): number {
  if (v.tag === 'collection') return ValueTag.begCollection;
  if (v.tag === 'unknownTag') return v.code;
  return ValueTag[v.tag];
}

function valueBytes(v: IppValue): Buffer {
  switch (v.tag) {
    case 'integer':
    case 'enum':
      return int32(v.value);
    case 'boolean':
      return Buffer.from([v.value ? 1 : 0]);
    case 'keyword':
    case 'uri':
    case 'uriScheme':
    case 'charset':
    case 'naturalLanguage':
    case 'mimeMediaType':
    case 'nameWithoutLanguage':
    case 'textWithoutLanguage':
      return utf8(v.value);
    case 'nameWithLanguage':
    case 'textWithLanguage': {
      // RFC 8010 §3.9: two length-prefixed parts inside the value.
      const w = new Writer();
      w.field(utf8(v.lang), 'natural language');
      w.field(utf8(v.value), 'text');
      return w.result();
    }
    case 'octetString':
    case 'unknownTag':
      return Buffer.from(v.value);
    case 'dateTime':
      return dateTime(v.value, v.offsetMinutes);
    case 'resolution': {
      const b = Buffer.alloc(9);
      b.writeInt32BE(v.value.x, 0);
      b.writeInt32BE(v.value.y, 4);
      b.writeInt8(v.value.units === 'dpi' ? 3 : 4, 8);
      return b;
    }
    case 'rangeOfInteger':
      return Buffer.concat([int32(v.value.lower), int32(v.value.upper)]);
    case 'collection':
      return Buffer.alloc(0);
    default:
      return Buffer.alloc(0); // out-of-band values have no value (RFC 8010 §3.8)
  }
}

function writeValue(w: Writer, name: string, v: IppValue): void {
  w.u8(tagCode(v));
  w.field(utf8(name), 'attribute name');
  w.field(valueBytes(v), `value of ${name || 'member'}`);
  if (v.tag === 'collection') {
    // RFC 8010 §3.1.6: each member is a memberAttrName whose value is the member's name,
    // followed by its values with empty names; endCollection closes it.
    for (const m of v.value) {
      w.u8(ValueTag.memberAttrName);
      w.u16(0);
      w.field(utf8(m.name), 'member name');
      for (const mv of m.values) writeValue(w, '', mv);
    }
    w.u8(ValueTag.endCollection);
    w.u16(0);
    w.u16(0);
  }
}

function writeAttribute(w: Writer, a: IppAttribute): void {
  if (a.values.length === 0) throw new RangeError(`IPP attribute ${a.name} has no values`);
  for (const [i, v] of a.values.entries()) writeValue(w, i === 0 ? a.name : '', v); // additional values: empty name (RFC 8010 §3.1.5)
}

export function encodeMessage(msg: IppMessage): Buffer {
  const w = new Writer();
  w.u8(msg.version[0]);
  w.u8(msg.version[1]);
  w.u16(msg.code);
  w.i32(msg.requestId);
  for (const g of msg.groups) {
    w.u8(GroupTag[g.tag]);
    for (const a of g.attributes) writeAttribute(w, a);
  }
  w.u8(END_OF_ATTRIBUTES);
  if (msg.data) w.bytes(msg.data);
  return w.result();
}
