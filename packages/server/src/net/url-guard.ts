// The one check for every user-supplied URL the service will fetch or post to: callback URLs
// now, print file_url and direct_addr later (spec "Limits": these are at most 200 characters).
//
// SSRF (architecture notes, "Callbacks"): only public unicast addresses are reachable unless
// the operator allows private networks. The check runs twice: once up front for a quick
// answer (`check`), and again on every connection (`guardedLookup` / `guardIpLiteral` in
// ./guarded-agent.ts), because DNS answers change between the two (DNS rebinding) and Node's
// `lookup` hook is never called for IP-literal hosts. Redirects are never followed.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export const MAX_URL_LENGTH = 200;

/** Cloud metadata endpoints: refused even when private networks are allowed. */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', 'fd00:ec2:0:0:0:0:0:254']);

export interface UrlGuardOptions {
  /** BOXHUB_ALLOW_PRIVATE_NETWORKS=1: private, loopback and link-local targets are allowed. */
  allowPrivateNetworks: boolean;
  maxLength?: number;
}

export type UrlProblem =
  | { kind: 'syntax'; reason: string }
  | { kind: 'blocked'; reason: string };

/** Thrown when a connection would reach an address the policy refuses. */
export class BlockedAddressError extends Error {
  readonly code = 'BOXHUB_BLOCKED_ADDRESS';
  constructor(message: string) { super(message); this.name = 'BlockedAddressError'; }
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function embeddedV4(addr: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = addr.range();
  const p = addr.parts;
  // ::ffff:a.b.c.d, ::ffff:0:a.b.c.d, 64:ff9b::a.b.c.d (NAT64) carry the IPv4 in the last 32 bits.
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') {
    return new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
  }
  // 2002:AABB:CCDD::/48 (6to4) carries it in bits 16-47.
  if (range === '6to4') return new ipaddr.IPv4([p[1]! >> 8, p[1]! & 0xff, p[2]! >> 8, p[2]! & 0xff]);
  return undefined;
}

/**
 * Why an address may not be contacted, or undefined when it may. Only 'unicast' (public)
 * ranges pass by default: private, loopback, link-local, CGNAT, unique-local, multicast,
 * unspecified, reserved, documentation, and IPv6 forms embedding any of those IPv4s.
 */
export function addressProblem(ip: string, allowPrivateNetworks: boolean): string | undefined {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try { addr = ipaddr.parse(stripBrackets(ip).split('%')[0]!); } catch { return `'${ip}' is not an IP address`; }
  const normal = addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
  if (METADATA.has(normal.toNormalizedString()) || METADATA.has(normal.toString())) return `${ip} is a cloud metadata address`;
  if (allowPrivateNetworks) return undefined;
  if (normal.kind() === 'ipv6') {
    const v4 = embeddedV4(normal as ipaddr.IPv6);
    if (v4) {
      const inner = addressProblem(v4.toString(), false);
      return inner ? `${ip} embeds ${v4.toString()}: ${inner}` : undefined;
    }
  }
  const range = normal.range();
  return range === 'unicast' ? undefined : `${ip} is in a non-public range (${range})`;
}

/** Syntax and length only (no DNS): http or https, a host, no credentials, at most 200 characters. */
export function urlSyntaxProblem(raw: string, maxLength = MAX_URL_LENGTH): string | undefined {
  if (raw.length > maxLength) return `URL is longer than ${maxLength} characters`;
  let u: URL;
  try { u = new URL(raw); } catch { return 'not a valid absolute URL'; }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `scheme must be http or https, got '${u.protocol.replace(/:$/, '')}'`;
  if (!u.hostname) return 'URL has no host';
  if (u.username || u.password) return 'URL must not contain credentials';
  return undefined;
}

export type Resolver = (host: string) => Promise<string[]>;
const systemResolver: Resolver = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export class UrlGuard {
  readonly allowPrivateNetworks: boolean;
  readonly maxLength: number;
  private readonly resolve: Resolver;
  constructor(opts: UrlGuardOptions, resolve: Resolver = systemResolver) {
    this.allowPrivateNetworks = opts.allowPrivateNetworks;
    this.maxLength = opts.maxLength ?? MAX_URL_LENGTH;
    this.resolve = resolve;
  }

  /** Syntax, then the host: an IP literal is checked directly, a name through every DNS answer. */
  async check(raw: string): Promise<UrlProblem | undefined> {
    const syntax = urlSyntaxProblem(raw, this.maxLength);
    if (syntax) return { kind: 'syntax', reason: syntax };
    const host = stripBrackets(new URL(raw).hostname);
    if (isIP(host)) {
      const p = addressProblem(host, this.allowPrivateNetworks);
      return p ? { kind: 'blocked', reason: p } : undefined;
    }
    let addrs: string[];
    try { addrs = await this.resolve(host); } catch (e) {
      return { kind: 'syntax', reason: `host '${host}' does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
    }
    for (const a of addrs) {
      const p = addressProblem(a, this.allowPrivateNetworks);
      if (p) return { kind: 'blocked', reason: `host '${host}' resolves to ${p}` };
    }
    return undefined;
  }
}
