// Encodes layout + sheet + side in the 48 cells of the identification strip (page-frame.ts):
// 32 bits of layout key, 6 bits sheet, 1 bit side, 1 constant bit, CRC-8. The CRC starts
// from a non-zero value so that an all-white or all-black strip never passes.
import { createHash } from 'node:crypto';
import { ID_STRIP, STUDENT_STRIP } from './page-frame.ts';

export type Side = 'front' | 'back';
export interface SideIdentity {
  layoutKey: number;
  sheet: number;
  side: Side;
}

export const ID_BITS = ID_STRIP.cols * ID_STRIP.rows;
export const MAX_SHEETS = 63;

function crc8(bits: readonly number[], init = 0xa5): number {
  let crc = init;
  for (const b of bits) {
    const top = ((crc >> 7) & 1) ^ b;
    crc = (crc << 1) & 0xff;
    if (top) crc ^= 0x07;
  }
  return crc;
}

function pushBits(out: number[], value: number, n: number): void {
  for (let i = n - 1; i >= 0; i--) out.push(Math.floor(value / 2 ** i) % 2);
}

/** 48 bits, row-major over the strip's cells. */
export function encodeSideIdentity(id: SideIdentity): number[] {
  if (!Number.isInteger(id.sheet) || id.sheet < 1 || id.sheet > MAX_SHEETS)
    throw new RangeError(`sheet ${id.sheet} out of 1-${MAX_SHEETS}`);
  const bits: number[] = [];
  pushBits(bits, id.layoutKey >>> 0, 32);
  pushBits(bits, id.sheet, 6);
  bits.push(id.side === 'back' ? 1 : 0, 1);
  pushBits(bits, crc8(bits), 8);
  return bits;
}

export function decodeSideIdentity(bits: readonly number[]): SideIdentity | null {
  if (bits.length !== ID_BITS) return null;
  const payload = bits.slice(0, 40);
  let crc = 0;
  for (let i = 40; i < 48; i++) crc = crc * 2 + bits[i]!;
  if (crc8(payload) !== crc || payload[39] !== 1) return null;
  let key = 0;
  for (let i = 0; i < 32; i++) key = key * 2 + payload[i]!;
  let sheet = 0;
  for (let i = 32; i < 38; i++) sheet = sheet * 2 + payload[i]!;
  if (sheet < 1) return null;
  return { layoutKey: key >>> 0, sheet, side: payload[38] === 1 ? 'back' : 'front' };
}

export function layoutKeyHex(key: number): string {
  return (key >>> 0).toString(16).padStart(8, '0');
}

export const STUDENT_BITS = STUDENT_STRIP.cols * STUDENT_STRIP.rows;

/** 16 bits of the student's number (SHA-256): equal numbers give equal keys, two students almost never. */
export function studentKey(studentId: string): number {
  return createHash('sha256').update(studentId, 'utf8').digest().readUInt16BE(0);
}

export function studentKeyHex(key: number): string {
  return (key & 0xffff).toString(16).padStart(4, '0');
}

/**
 * 24 bits: the student key, then a CRC-8 over the layout key and the student key (another start
 * value than the side strip's). Tied to the layout, so a strip is only valid on its own card.
 */
export function encodeStudentIdentity(layoutKey: number, key: number): number[] {
  const bits: number[] = [];
  pushBits(bits, key & 0xffff, 16);
  const covered: number[] = [];
  pushBits(covered, layoutKey >>> 0, 32);
  pushBits(covered, key & 0xffff, 16);
  pushBits(bits, crc8(covered, 0x3c), 8);
  return bits;
}

/**
 * The student key printed on a side: a number, `null` if the strip is there but does not check
 * (damaged, or written over), `undefined` if it is blank (a card printed without a student list).
 */
export function decodeStudentIdentity(bits: readonly number[], layoutKey: number): number | null | undefined {
  if (bits.length !== STUDENT_BITS) return null;
  if (bits.every((b) => b === 0)) return undefined;
  let key = 0;
  for (let i = 0; i < 16; i++) key = key * 2 + bits[i]!;
  let crc = 0;
  for (let i = 16; i < 24; i++) crc = crc * 2 + bits[i]!;
  const covered: number[] = [];
  pushBits(covered, layoutKey >>> 0, 32);
  pushBits(covered, key, 16);
  return crc8(covered, 0x3c) === crc ? key : null;
}
