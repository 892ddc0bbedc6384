// Standard Webhooks verification of a direct-transfer request (docs/direct-transfer.md,
// "Signing"): HMAC-SHA256 with the scan task's direct secret over
// "{webhook-id}.{webhook-timestamp}.{manifest}", any of the space-separated v1 signatures.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TIMESTAMP_TOLERANCE_S = 5 * 60;

export type SignatureProblem = 'missing headers' | 'timestamp out of range' | 'bad signature';

function key(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

export function sign(secret: string, id: string, timestamp: number, payload: string): string {
  return `v1,${createHmac('sha256', key(secret)).update(`${id}.${timestamp}.${payload}`).digest('base64')}`;
}

export function checkTimestamp(raw: string | undefined, nowMs: number): SignatureProblem | undefined {
  if (!raw || !/^\d{1,12}$/.test(raw)) return 'missing headers';
  return Math.abs(Number(raw) - Math.floor(nowMs / 1000)) > TIMESTAMP_TOLERANCE_S
    ? 'timestamp out of range'
    : undefined;
}

export function verify(secret: string, id: string, timestamp: string, header: string, payload: string): boolean {
  const want = Buffer.from(sign(secret, id, Number(timestamp), payload).slice(3), 'base64');
  for (const s of header.split(' ')) {
    const [version, sig] = s.split(',', 2);
    if (version !== 'v1' || !sig) continue;
    const got = Buffer.from(sig, 'base64');
    if (got.length === want.length && timingSafeEqual(got, want)) return true;
  }
  return false;
}
