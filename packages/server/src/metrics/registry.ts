// Prometheus metrics, one registry per server instance (tests run several in one process).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    /** Status is always 200, so requests are counted by envelope code. */
    requests: new Counter({
      name: 'boxhub_api_requests_total',
      help: 'API requests by route and envelope code',
      labelNames: ['route', 'code'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'boxhub_api_request_duration_seconds',
      help: 'API request duration',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [registry],
    }),
    commands: new Counter({
      name: 'boxhub_box_commands_total',
      help: 'Commands sent to boxes by type and outcome',
      labelNames: ['type', 'outcome'] as const,
      registers: [registry],
    }),
    callbackAttempts: new Counter({
      name: 'boxhub_callback_attempts_total',
      help: 'Callback delivery attempts by result (ok, http_error, timeout, network, blocked)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    callbackDeliveries: new Counter({
      name: 'boxhub_callback_deliveries_total',
      help: 'Callbacks finished, by outcome (delivered, failed after the last retry)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    callbackAttemptDuration: new Histogram({
      name: 'boxhub_callback_attempt_duration_seconds',
      help: 'Callback attempt latency, request to answer or failure',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    brokerRefused: new Counter({
      name: 'boxhub_broker_refused_total',
      help: 'Embedded broker connections closed by a limit: connect_rate (attempts per address), packet_size (BOXHUB_MQTT_MAX_PACKET_BYTES), admission_busy, admission_rate and admission_lag (logins refused with CONNACK 3: BOXHUB_MQTT_ADMIT_*)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    boxesOnline: new Gauge({
      name: 'boxhub_broker_clients',
      help: 'Clients connected to the embedded broker',
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
