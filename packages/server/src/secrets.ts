// Credentials the server issues. All are 256-bit random values; stored as sha256 where the
// server only needs to recognise them (API keys, device secrets), since a fast hash of a
// high-entropy secret cannot be brute-forced (the reasoning GitHub and Stripe tokens follow).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export const newApiKey = () => `bhk_${randomBytes(32).toString('base64url')}`;
export const newDeviceSecret = () => randomBytes(32).toString('base64url');
/** Standard Webhooks secret format: `whsec_` + base64 of the raw key. */
export const newCallbackSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
