// /healthz and /metrics live outside the envelope: load balancers read the HTTP status and
// Prometheus reads its text format (architecture notes, "HTTP").
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import type { Metrics } from '../metrics/registry.ts';

export interface ObservabilityOptions {
  /** Where /metrics is answered: on this listener (default), or not here (its own listener). */
  metricsOnMain: boolean;
  /** BOXHUB_METRICS_TOKEN: /metrics wants `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
}

/**
 * The log level of a finished request, by its envelope code: server faults (105xx) are errors;
 * refused credentials and rate limits are warnings (someone may be probing); every other
 * refusal is the client's or its device's business (1xxxx, 2xxxx, 3xxxx) and is info; success
 * is debug.
 */
export function levelFor(code: number): 'debug' | 'info' | 'warn' | 'error' {
  if (code === 0) return 'debug';
  if (code >= 10500 && code < 10600) return 'error';
  if (code === 20001 || code === 10007) return 'warn';
  return 'info';
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Compares a presented bearer token with the configured one in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S{1,512})\s*$/i.exec(header ?? '');
  return !!m?.[1] && timingSafeEqual(digest(m[1]), digest(token));
}

/** The /metrics answer, shared by the main listener and the metrics listener (metrics-listener.ts). */
export async function metricsText(metrics: Metrics, brokerClients: () => number | undefined): Promise<string> {
  const n = brokerClients();
  if (n !== undefined) metrics.boxesOnline.set(n);
  return metrics.registry.metrics();
}

export function installObservability(
  app: FastifyInstance,
  metrics: Metrics,
  db: Db,
  brokerClients: () => number | undefined,
  opts: ObservabilityOptions = { metricsOnMain: true, metricsToken: undefined },
): void {
  // Routes and codes are finite (the route table and the error catalog), so these stay small.
  const root = app.log as unknown as Logger;
  const counters = new Map<string, ReturnType<Metrics['requests']['labels']>>();
  const histograms = new Map<string, ReturnType<Metrics['latency']['labels']>>();
  // One hook for the access log line and the metrics: each request is logged at debug with its
  // envelope code (failures the service caused at error), and counted by route and code.
  app.addHook('onResponse', (req, reply, done) => {
    const code = req.envelopeCode;
    const level = levelFor(code);
    if (level !== 'debug')
      req.log[level](
        { code, url: req.url, ip: req.ip, ms: reply.elapsedTime },
        code >= 10500 && code < 10600 ? 'request failed' : 'request refused',
      );
    // Checked first: the line's fields would be built for nothing at the default level.
    else if (root.isLevelEnabled('debug')) req.log.debug({ code, url: req.url, ms: reply.elapsedTime }, 'request');
    const route = req.apiRoute;
    if (route !== undefined) {
      // Label children are looked up once per route and code: prom-client hashes the label
      // object on every call otherwise.
      const key = `${route} ${code}`;
      let c = counters.get(key);
      if (!c) {
        c = metrics.requests.labels(route, String(code));
        counters.set(key, c);
      }
      c.inc();
      let h = histograms.get(route);
      if (!h) {
        h = metrics.latency.labels(route);
        histograms.set(route, h);
      }
      h.observe(reply.elapsedTime / 1000);
    }
    done();
  });

  // Public (load balancers), so it names no internals: the reason goes to the log.
  app.get('/healthz', { schema: { hide: true } }, async (req, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      return { status: 'ok' };
    } catch (err) {
      req.log.error({ err }, 'health check: database unreachable');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });

  if (!opts.metricsOnMain) return;
  const token = opts.metricsToken;
  app.get('/metrics', { schema: { hide: true } }, async (req: FastifyRequest, reply: FastifyReply) => {
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="metrics"')
        .type('text/plain; charset=utf-8')
        .send('metrics need "Authorization: Bearer <BOXHUB_METRICS_TOKEN>"\n');
    }
    return reply.type(metrics.registry.contentType).send(await metricsText(metrics, brokerClients));
  });
}
