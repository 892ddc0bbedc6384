// An undici dispatcher that can only reach addresses the URL guard allows, checked at connect
// time (after DNS), so a name that resolved to a public address a moment ago and now points
// at 10.0.0.1 (DNS rebinding) is still refused. IP-literal hosts never reach the lookup hook,
// so the connector checks them itself. undici 7 follows no redirects without its redirect
// interceptor, which this agent does not install: a 3xx is just a non-200 answer.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { addressProblem, BlockedAddressError } from './url-guard.ts';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net.connect that fails when any DNS answer is refused by the policy. */
export function guardedLookup(allowPrivateNetworks: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      for (const a of addresses) {
        const p = addressProblem(a.address, allowPrivateNetworks);
        if (p) return callback(new BlockedAddressError(`host '${hostname}' resolves to ${p}`), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

export interface GuardedAgentOptions {
  allowPrivateNetworks: boolean;
  /** TCP/TLS connect timeout, ms. */
  connectTimeoutMs: number;
  connections?: number;
}

export function createGuardedAgent(o: GuardedAgentOptions): Agent {
  const base = buildConnector({ timeout: o.connectTimeoutMs, lookup: guardedLookup(o.allowPrivateNetworks) });
  const connect: buildConnector.connector = (opts, cb) => {
    const host = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
    if (isIP(host)) {
      const p = addressProblem(host, o.allowPrivateNetworks);
      if (p) return cb(new BlockedAddressError(p), null);
    }
    base(opts, cb);
  };
  return new Agent({
    connect,
    keepAliveTimeout: 4000,
    // One slow receiver must not starve the others: bounded sockets per origin.
    connections: o.connections ?? 64,
    pipelining: 1,
  });
}
