// /healthz and /metrics live outside the envelope: load balancers read the HTTP status and
// Prometheus reads its text format (architecture notes, "HTTP").
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import type { Metrics } from '../metrics/registry.ts';

export function installObservability(app: FastifyInstance, metrics: Metrics, db: Db, brokerClients: () => number | undefined): void {
  // Routes and codes are finite (the route table and the error catalog), so these stay small.
  const counters = new Map<string, ReturnType<Metrics['requests']['labels']>>();
  const histograms = new Map<string, ReturnType<Metrics['latency']['labels']>>();
  // One hook for the access log line and the metrics: each request is logged at debug with its
  // envelope code (failures the service caused at error), and counted by route and code.
  app.addHook('onResponse', (req, reply, done) => {
    const code = req.envelopeCode;
    if (code >= 10500) req.log.error({ code, url: req.url }, 'request failed');
    else req.log.debug({ code, url: req.url, ms: reply.elapsedTime }, 'request');
    const route = req.routeOptions.url;
    if (route?.startsWith('/api/')) {
      // Label children are looked up once per route and code: prom-client hashes the label
      // object on every call otherwise.
      const key = `${route} ${code}`;
      let c = counters.get(key);
      if (!c) { c = metrics.requests.labels(route, String(code)); counters.set(key, c); }
      c.inc();
      let h = histograms.get(route);
      if (!h) { h = metrics.latency.labels(route); histograms.set(route, h); }
      h.observe(reply.elapsedTime / 1000);
    }
    done();
  });

  app.get('/healthz', { schema: { hide: true } }, async (_req, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      return { status: 'ok' };
    } catch (e) {
      return reply.code(503).send({ status: 'unavailable', reason: (e as Error).message });
    }
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const n = brokerClients();
    if (n !== undefined) metrics.boxesOnline.set(n);
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
