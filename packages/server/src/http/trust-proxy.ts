// Which X-Forwarded-* headers to believe (BOXHUB_TRUST_PROXY; docs/configuration.md "Behind a
// proxy"). The client address is always taken from the right end of X-Forwarded-For: each proxy
// appends the address it received the request from, so only the entries the trusted proxies
// wrote are true; anything to their left is what the client sent and may be invented.
//
// - off: the socket's peer is the client; forwarded headers are ignored.
// - a hop count N: the last N hops (the socket's peer and N-1 X-Forwarded-For entries from the
//   right) are proxies; the entry left of them is the client. Passed to Fastify as a function:
//   the installed Fastify reads a bare number as "trust nothing".
// - proxy addresses/CIDRs: hops are walked from the right while they are listed; the first one
//   that is not is the client.
// "Trust every hop" (`true`) is refused at start: it takes the leftmost entry, which the client
// chooses, and so lets any client pick its own address past the per-address limits.
import { isIP } from 'node:net';

export type TrustProxy = { hops: number } | { proxies: string[] } | undefined;

/** Fastify's `trustProxy` option for a setting. */
export function fastifyTrustProxy(t: TrustProxy): false | string | ((address: string, hop: number) => boolean) {
  if (!t) return false;
  if ('hops' in t) {
    const hops = t.hops;
    return (_address, hop) => hop < hops;
  }
  return t.proxies.join(',');
}

/** Parses BOXHUB_TRUST_PROXY; a string in the return is the reason it was refused. */
export function parseTrustProxy(raw: string | undefined): TrustProxy | string {
  const v = raw?.trim() ?? '';
  if (v === '' || v === '0' || v === 'false' || v === 'off') return undefined;
  if (v === 'true') {
    return 'BOXHUB_TRUST_PROXY=true is not accepted: it would let any client choose its own address through X-Forwarded-For; give the number of proxies in front (e.g. 1) or their addresses/CIDRs';
  }
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops > 16)
      return `BOXHUB_TRUST_PROXY: ${hops} hops is more proxies than any deployment has; give 1 to 16, or the proxies' addresses/CIDRs`;
    return { hops };
  }
  const proxies = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const p of proxies) {
    const [addr = '', bits, extra] = p.split('/');
    const family = isIP(addr);
    const max = family === 4 ? 32 : 128;
    const okBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (family === 0 || !okBits || extra !== undefined) {
      return `BOXHUB_TRUST_PROXY must be off, a number of proxy hops (e.g. 1), or comma-separated proxy addresses/CIDRs (e.g. 10.0.0.0/8,::1); '${p}' is none of these`;
    }
  }
  if (proxies.length === 0) return undefined;
  return { proxies };
}
