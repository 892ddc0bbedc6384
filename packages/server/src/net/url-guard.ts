// The one check for every user-supplied URL the service will fetch or post to: callback URLs,
// print file_url and direct_addr (docs/api.md, "Limits": at most 200 characters, counted as the request schemas count
// them: @boxhub/protocol url-length.ts).
//
// SSRF (architecture notes, "Callbacks"): only public unicast addresses are reachable unless
// the operator allows private networks. The check runs twice: once up front for a quick
// answer (`check`), and again on every connection (`guardedLookup` / `guardIpLiteral` in
// ./guarded-agent.ts), because DNS answers change between the two (DNS rebinding) and Node's
// `lookup` hook is never called for IP-literal hosts. Redirects are never followed.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { MAX_URL_CHARS, urlChars, errnoCode, messageOf } from '@boxhub/protocol';

export const MAX_URL_LENGTH = MAX_URL_CHARS;

/**
 * Cloud metadata and credential endpoints: refused even when private networks are allowed,
 * in any spelling (an IPv6 form that embeds one of the IPv4s included).
 * 169.254.169.254: AWS, GCP, Azure, OCI, OpenStack instance metadata; 169.254.170.2: AWS ECS
 * task credentials; 169.254.170.23 / fd00:ec2::23: EKS pod identity; fd00:ec2::254: AWS IPv6
 * metadata; 100.100.100.200: Alibaba Cloud; 168.63.129.16: Azure WireServer.
 */
const METADATA = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '169.254.170.23',
  '100.100.100.200',
  '168.63.129.16',
  'fd00:ec2::254',
  'fd00:ec2::23',
]);

export interface UrlGuardOptions {
  /** BOXHUB_ALLOW_PRIVATE_NETWORKS=1: private, loopback and link-local targets are allowed. */
  allowPrivateNetworks: boolean;
  maxLength?: number;
}

export type UrlProblem = { kind: 'syntax'; reason: string } | { kind: 'blocked'; reason: string };

/** Thrown when a connection would reach an address the policy refuses. */
export class BlockedAddressError extends Error {
  readonly code = 'BOXHUB_BLOCKED_ADDRESS';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

const v4 = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/** IPv6 ranges that stand for an IPv4 address: judged by that address when private networks are off. */
const TRANSLATED = new Set(['ipv4Mapped', 'rfc6145', 'ipv4Compatible', 'nat64', '6to4']);

/**
 * The range of an IPv6 address, refining ipaddr.js: the deprecated IPv4-compatible ::/96
 * (RFC 4291 2.5.5.1; `::7f00:1` is 127.0.0.1 to a stack that still routes it) is not unicast,
 * and NAT64's well-known prefix (RFC 6052, /96) is told apart from the local-use one (RFC 8215).
 */
function v6Range(addr: ipaddr.IPv6): string {
  const p = addr.parts;
  const range = addr.range();
  if (range === 'unicast' && p.slice(0, 6).every((x) => x === 0)) return 'ipv4Compatible';
  if (range === 'rfc6052') return p[2] === 0 ? 'nat64' : 'nat64LocalUse';
  return range;
}

/** The eight 16-bit words of an IPv6 address (ipaddr.js always holds eight). */
type Words = [number, number, number, number, number, number, number, number];
const isWords = (parts: number[]): parts is Words => parts.length === 8;
function words(addr: ipaddr.IPv6): Words {
  if (!isWords(addr.parts)) throw new Error(`an IPv6 address with ${addr.parts.length} words`);
  return addr.parts;
}

/**
 * Every IPv4 address an IPv6 address may stand for: the last 32 bits of the mapped,
 * translated (RFC 6145), IPv4-compatible and NAT64 forms, for a local-use NAT64 prefix every
 * position RFC 6052 2.2 allows for prefixes of /48 and longer, bits 16-47 of 6to4, and both
 * addresses a Teredo address carries (server: bits 32-63; client: the last 32 bits inverted).
 */
function embeddedV4s(addr: ipaddr.IPv6, range: string): ipaddr.IPv4[] {
  const p = words(addr);
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'ipv4Compatible':
    case 'nat64':
      return [v4(p[6], p[7])];
    case 'nat64LocalUse': {
      // Bytes 6, 7 and 9-12; byte 8 (bits 64-71) is always zero in RFC 6052 forms, so it is skipped.
      const by = addr.toByteArray();
      const run = [...by.slice(6, 8), ...by.slice(9, 13)];
      return [
        new ipaddr.IPv4(run.slice(0, 4)),
        new ipaddr.IPv4(run.slice(1, 5)),
        new ipaddr.IPv4(run.slice(2, 6)),
        v4(p[6], p[7]),
      ];
    }
    case '6to4':
      return [v4(p[1], p[2])];
    case 'teredo':
      return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      return [];
  }
}

const isMetadata = (a: ipaddr.IPv4 | ipaddr.IPv6): boolean =>
  METADATA.has(a.toString()) || METADATA.has(a.toNormalizedString());

/**
 * Why an address may not be contacted, or undefined when it may. Only 'unicast' (public)
 * ranges pass by default: private, loopback, link-local, CGNAT, unique-local, multicast,
 * unspecified, reserved, documentation, and IPv6 forms standing for any of those IPv4s.
 * Metadata endpoints are refused always, in every spelling.
 */
export function addressProblem(ip: string, allowPrivateNetworks: boolean): string | undefined {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(stripBrackets(ip).replace(/%.*/s, ''));
  } catch {
    return `'${ip}' is not an IP address`;
  }
  if (addr instanceof ipaddr.IPv4) {
    if (isMetadata(addr)) return `${ip} is a cloud metadata address`;
    if (allowPrivateNetworks) return undefined;
    const range = addr.range();
    return range === 'unicast' ? undefined : `${ip} is in a non-public range (${range})`;
  }
  const v6 = addr;
  const range = v6Range(v6);
  const inner = embeddedV4s(v6, range);
  if (isMetadata(v6) || inner.some(isMetadata)) return `${ip} is a cloud metadata address`;
  if (allowPrivateNetworks) return undefined;
  const [v] = inner;
  if (TRANSLATED.has(range) && v) {
    const p = addressProblem(v.toString(), false);
    return p ? `${ip} embeds ${v.toString()}: ${p}` : undefined;
  }
  return range === 'unicast' ? undefined : `${ip} is in a non-public range (${range})`;
}

/** Syntax and length only (no DNS): http or https, a host, no credentials, at most 200
 *  characters (Unicode code points, url-length.ts). */
export function urlSyntaxProblem(raw: string, maxLength = MAX_URL_LENGTH): string | undefined {
  if (urlChars(raw) > maxLength) return `URL is longer than ${maxLength} characters`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'not a valid absolute URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `scheme must be http or https, got '${u.protocol.replace(/:$/, '')}'`;
  if (!u.hostname) return 'URL has no host';
  if (u.username || u.password) return 'URL must not contain credentials';
  return undefined;
}

export type Resolver = (host: string) => Promise<string[]>;
const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

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
    try {
      addrs = await this.resolve(host);
    } catch (e) {
      return { kind: 'syntax', reason: `host '${host}' does not resolve (${errnoCode(e) ?? messageOf(e)})` };
    }
    for (const a of addrs) {
      const p = addressProblem(a, this.allowPrivateNetworks);
      if (p) return { kind: 'blocked', reason: `host '${host}' resolves to ${p}` };
    }
    return undefined;
  }
}
