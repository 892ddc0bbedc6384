// Encodes layout + sheet + side in the 48 cells of the identification strip (page-frame.ts):
// 32 bits of layout key, 6 bits sheet, 1 bit side, 1 constant bit, CRC-8. The CRC starts
// from a non-zero value so that an all-white or all-black strip never passes.
import { ID_STRIP } from './page-frame.ts';

export type Side = 'front' | 'back';
export interface SideIdentity { layoutKey: number; sheet: number; side: Side }

export const ID_BITS = ID_STRIP.cols * ID_STRIP.rows;
export const MAX_SHEETS = 63;

function crc8(bits: readonly number[]): number {
  let crc = 0xa5;
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
  if (!Number.isInteger(id.sheet) || id.sheet < 1 || id.sheet > MAX_SHEETS) throw new RangeError(`sheet ${id.sheet} out of 1-${MAX_SHEETS}`);
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
