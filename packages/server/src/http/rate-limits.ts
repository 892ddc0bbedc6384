// API rate limits (docs/configuration.md "Rate limits"), with @fastify/rate-limit
// doing the counting (its createRateLimit) over stores on the injected clock
// (rate-limit-stores.ts). Every refusal is the envelope with 10007, `Retry-After` (seconds)
// and `data.retry_after`.
//
// - per client address, every /api request, before authentication (this node);
// - per application, every authenticated request (this node);
// - refused API keys per client address: past the limit, requests from that address are
//   refused before their key is looked at until the window ends (this node);
// - get_uuid lookups that find no device of the caller, per application, in the database so
//   that every node counts them (device codes are short and printed on labels; without this
//   an application could walk the code space). A lookup reserves its count before it runs and
//   gives it back when it found the device, so concurrent guesses cannot slip past the limit.
//
// Per-node limits multiply with the number of nodes behind a load balancer (documented).
import rateLimit from '@fastify/rate-limit';
import { ApiError } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Limit, RateLimits } from '../config.ts';
import type { Database } from '../db/schema.ts';
import { DbWindows, MemoryWindows, type WindowStore } from './rate-limit-stores.ts';

type Check = (
  req: FastifyRequest,
) => Promise<{ isAllowed: true } | { isAllowed: false; isExceeded: boolean; ttl: number }>;

/**
 * The client address a limit counts: IPv4 as it is, IPv6 by its /64 (one customer's LAN or
 * one host's whole allocation: limiting single IPv6 addresses limits nothing).
 */
export function addressKey(ip: string): string {
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice(7);
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t] : h;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':')}::/64`;
}

function refuse(reply: FastifyReply, ttlMs: number, what: string): never {
  const s = Math.max(1, Math.ceil(ttlMs / 1000));
  reply.header('retry-after', String(s));
  throw new ApiError('RATE_LIMITED', `${what}; retry after ${s} s`, { retry_after: s });
}

const describe = (l: Limit): string =>
  `${l.max} per ${l.windowMs % 60_000 === 0 ? `${l.windowMs / 60_000} min` : `${l.windowMs / 1000} s`}`;

export class ApiLimits {
  private readonly cfg: RateLimits;
  private readonly address: Check | undefined;
  private readonly app: Check | undefined;
  private readonly authFail: { check: Check; store: MemoryWindows } | undefined;
  private readonly getUuid: { check: Check; store: WindowStore } | undefined;
  /** Sweeps ended windows out of the shared table. */
  readonly shared: DbWindows;

  private constructor(
    cfg: RateLimits,
    checks: {
      address?: Check;
      app?: Check;
      authFail?: { check: Check; store: MemoryWindows };
      getUuid?: { check: Check; store: WindowStore };
    },
    shared: DbWindows,
  ) {
    this.cfg = cfg;
    this.address = checks.address;
    this.app = checks.app;
    this.authFail = checks.authFail;
    this.getUuid = checks.getUuid;
    this.shared = shared;
  }

  static async install(app: FastifyInstance, cfg: RateLimits, clock: Clock, db: Kysely<Database>): Promise<ApiLimits> {
    // Each limiter brings its own store (`backing`); the plugin asks the root store for a child
    // per limiter, which hands that one out.
    class Root extends MemoryWindows {
      constructor() {
        super(clock);
      }
      override child(params: unknown): WindowStore {
        return (params as { backing?: WindowStore }).backing ?? new MemoryWindows(clock);
      }
    }
    await app.register(rateLimit, { global: false, store: Root as never });
    const make = (l: Limit, key: (req: FastifyRequest) => string, backing: WindowStore): Check | undefined =>
      l.max === 0
        ? undefined
        : (app.createRateLimit({ max: l.max, timeWindow: l.windowMs, keyGenerator: key, backing } as Parameters<
            FastifyInstance['createRateLimit']
          >[0]) as Check);
    const shared = new DbWindows(db, clock);
    const authStore = new MemoryWindows(clock);
    const authFail = make(cfg.authFailures, (req) => `f:${addressKey(req.ip)}`, authStore);
    const getUuid = make(cfg.getUuidMisses, (req) => `get_uuid:${req.application.id}`, shared);
    return new ApiLimits(
      cfg,
      {
        ...spread(
          'address',
          make(cfg.address, (req) => `a:${addressKey(req.ip)}`, new MemoryWindows(clock)),
        ),
        ...spread(
          'app',
          make(cfg.app, (req) => `p:${req.application.id}`, new MemoryWindows(clock)),
        ),
        ...(authFail ? { authFail: { check: authFail, store: authStore } } : {}),
        ...(getUuid ? { getUuid: { check: getUuid, store: shared } } : {}),
      },
      shared,
    );
  }

  /** Every /api request, before authentication. */
  async checkAddress(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!this.address) return;
    const r = await this.address(req);
    if (!r.isAllowed && r.isExceeded)
      refuse(reply, r.ttl, `too many requests from this address (limit ${describe(this.cfg.address)})`);
  }

  /** Before a key is looked at: an address past its refused-key limit waits out the window. */
  checkAuthBlocked(req: FastifyRequest, reply: FastifyReply): void {
    if (!this.authFail) return;
    const w = this.authFail.store.peek(`f:${addressKey(req.ip)}`, this.cfg.authFailures.windowMs);
    if (w && w.current >= this.cfg.authFailures.max)
      refuse(reply, w.ttl, `too many refused API keys from this address (limit ${describe(this.cfg.authFailures)})`);
  }

  /** A key was refused: counted for its address. */
  async authFailed(req: FastifyRequest): Promise<void> {
    if (this.authFail) await this.authFail.check(req);
  }

  /** Every authenticated request. */
  async checkApp(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!this.app) return;
    const r = await this.app(req);
    if (!r.isAllowed && r.isExceeded)
      refuse(reply, r.ttl, `too many requests from this application (limit ${describe(this.cfg.app)})`);
  }

  /**
   * Runs a get_uuid lookup under the per-application miss limit: counted before it runs, given
   * back when it found a device the caller may have.
   */
  async getUuidLookup<T>(req: FastifyRequest, reply: FastifyReply, lookup: () => Promise<T>): Promise<T> {
    if (!this.getUuid) return lookup();
    const r = await this.getUuid.check(req);
    if (!r.isAllowed && r.isExceeded)
      refuse(
        reply,
        r.ttl,
        `too many get_uuid lookups without a result (limit ${describe(this.cfg.getUuidMisses)} per application)`,
      );
    const refund = () => this.getUuid!.store.refund(`get_uuid:${req.application.id}`, this.cfg.getUuidMisses.windowMs);
    try {
      const v = await lookup();
      await refund();
      return v;
    } catch (e) {
      // Only answers that found nothing of the caller's stay counted: 30002, and 30003 (a
      // device of another application). A fault of the service is given back.
      if (!(e instanceof ApiError && (e.key === 'DEVICE_NOT_FOUND' || e.key === 'DEVICE_ALREADY_BOUND')))
        await refund();
      throw e;
    }
  }
}

function spread<K extends string>(k: K, v: Check | undefined): Partial<Record<K, Check>> {
  return v ? ({ [k]: v } as Record<K, Check>) : {};
}
