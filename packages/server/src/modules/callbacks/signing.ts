// Standard Webhooks signatures (https://www.standardwebhooks.com, architecture notes
// "Callbacks"): HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}" keyed with the
// base64-decoded part of the `whsec_` secret, sent as "v1,<base64>". During a rotation grace
// period both signatures are sent, space-separated, so a receiver holding either secret verifies.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

export function sign(secret: string, id: string, timestampSec: number, body: string): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSec}.${body}`).digest('base64')}`;
}

export function signatureHeader(secrets: string[], id: string, timestampSec: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestampSec, body)).join(' ');
}

/**
 * Receiver-side check, as a receiver would write it (used by tests and the docs' example):
 * true when any v1 signature in the header matches and the timestamp is within `toleranceSec`.
 */
export function verify(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  nowSec = Math.floor(Date.now() / 1000),
  toleranceSec = 300,
): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowSec - ts) > toleranceSec) return false;
  const expected = Buffer.from(sign(secret, headers.id, ts, body).slice(3), 'base64');
  return headers.signature.split(' ').some((part) => {
    const [version, sig] = part.split(',', 2);
    if (version !== 'v1' || !sig) return false;
    const got = Buffer.from(sig, 'base64');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
