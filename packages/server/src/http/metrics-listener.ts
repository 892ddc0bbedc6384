// /metrics on a listener of its own (BOXHUB_METRICS_PORT, BOXHUB_METRICS_HOST), so Prometheus
// can scrape an address the API's clients cannot reach. node:http is enough for one route.
import { createServer, type Server } from 'node:http';
import type { Metrics } from '../metrics/registry.ts';
import { bearerMatches, metricsText } from './observability.ts';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsListener(o: {
  host: string;
  port: number;
  token: string | undefined;
  metrics: Metrics;
  brokerClients: () => number | undefined;
}): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics here\n');
      return;
    }
    if (o.token !== undefined && !bearerMatches(req.headers.authorization, o.token)) {
      res
        .writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer realm="metrics"' })
        .end('metrics need "Authorization: Bearer <BOXHUB_METRICS_TOKEN>"\n');
      return;
    }
    metricsText(o.metrics, o.brokerClients).then(
      (text) => res.writeHead(200, { 'content-type': o.metrics.registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port;
  return {
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
