// Builds the HTTP application and never listens (conventions: build, then listen), so tests
// can use inject() and main.ts decides where to listen.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Db } from './db/connect.ts';
import { installAccess } from './http/auth.ts';
import { clientErrorHandler, MAX_HEADER_BYTES, refuseConnect, REQUEST_TIMEOUT_MS } from './http/edge.ts';
import { installErrorHandling, send } from './http/error-handler.ts';
import { installJsonParser } from './http/json-body.ts';
import { lazyChildLogger } from './http/lazy-child-logger.ts';
import { installObservability, type ObservabilityOptions } from './http/observability.ts';
import { installOpenApi } from './http/openapi.ts';
import { ApiLimits } from './http/rate-limits.ts';
import { validatorCompiler } from './http/validation.ts';
import type { Clock } from './clock.ts';
import type { RateLimits } from './config.ts';
import type { Metrics } from './metrics/registry.ts';
import { callbackRoutes } from './modules/callbacks/routes.ts';
import { deviceEventRoutes } from './modules/device-events/routes.ts';
import { taskHistoryRoutes } from './modules/task-history/routes.ts';
import { controlRoutes } from './modules/control/routes.ts';
import { deviceRoutes } from './modules/devices/routes.ts';
import { scanRoutes } from './modules/scan/routes.ts';
import { e2eKeyRoutes } from './modules/e2e-keys/routes.ts';
import { printRoutes } from './modules/print/routes.ts';
import { recognitionRoutes } from './modules/recognition/routes.ts';
import { directReceiverRoutes } from './modules/recognition/receiver.ts';
import { blobRoutes, type BlobRouteOptions } from './storage/routes.ts';
import type { CredentialHooks } from './modules/devices/service.ts';
import { operatorRoutes } from './modules/operator/routes.ts';
import { consoleRoutes } from './modules/console/routes.ts';
import type { SecretBox } from './secret-box.ts';
import type { Services } from './services.ts';

export interface AppDeps {
  db: Db;
  services: Services;
  metrics: Metrics;
  logger: Logger;
  bodyLimit: number;
  /** Body limit of POST /api/print/create (files may come inline). */
  printBodyLimit?: number;
  /** The local blob store's signed-URL routes (absent with an external store). */
  blobs?: BlobRouteOptions;
  brokerClients?: () => number | undefined;
  /** Where /metrics is served and whether it wants a token (default: here, open). */
  observability?: ObservabilityOptions;
  clock: Clock;
  rateLimits: RateLimits;
  /** Fastify trustProxy (BOXHUB_TRUST_PROXY): whose X-Forwarded-For names the client. */
  trustProxy?: boolean | string | number;
  /** BOXHUB_OPERATOR_TOKEN; unset turns the operator API off. */
  operatorToken?: string | undefined;
  /** What the broker does when the operator API changes a box's credentials. */
  credentialHooks?: CredentialHooks;
  /** The server's secret key: seals web console sessions (absent: no console). */
  secretBox?: SecretBox;
  /** Largest page image of a direct transfer to a recognition address (default 16 MiB). */
  directMaxPageBytes?: number;
}

export interface BuiltApp { app: FastifyInstance; limits: ApiLimits }

export async function buildApp(deps: AppDeps): Promise<BuiltApp> {
  let malformed: (code: number) => void = () => undefined;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    childLoggerFactory: lazyChildLogger,
    // One line per request is written by our own hook, with the envelope code in it.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimit,
    // Reject __proto__ and constructor.prototype keys outright (prototype poisoning).
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    requestIdHeader: 'x-request-id',
    return503OnClosing: false,
    // A number of hops is accepted by Fastify (proxy-addr) though its types omit it.
    trustProxy: (deps.trustProxy ?? false) as boolean | string,
    // The HTTP edge (http/edge.ts): whatever Node's parser or the router refuses is answered
    // with the envelope too. A request without Host reaches the routes (answered like any
    // other) instead of getting Node's bare 400.
    http: { requireHostHeader: false, maxHeaderSize: MAX_HEADER_BYTES },
    requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler: clientErrorHandler(deps.logger as FastifyBaseLogger, (code) => malformed(code)),
    frameworkErrors: (err, req, reply) => {
      if (err.code === 'FST_ERR_BAD_URL') return send(req, reply, 'MALFORMED_REQUEST', 'the URL is not valid percent-encoding');
      return send(req, reply, 'MALFORMED_REQUEST', err.message);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  refuseConnect(app.server, (code) => malformed(code));
  malformed = (code) => deps.metrics.requests.labels('(malformed)', String(code)).inc();

  app.setValidatorCompiler(validatorCompiler);
  installJsonParser(app);
  installErrorHandling(app, deps.bodyLimit);
  await installOpenApi(app);
  installObservability(app, deps.metrics, deps.db, deps.brokerClients ?? (() => undefined), deps.observability);

  const limits = await ApiLimits.install(app, deps.rateLimits, deps.clock, deps.db.kysely);
  installAccess(app, { applications: deps.services.applications, limits, operatorToken: deps.operatorToken });

  await app.register(async (api) => {
    await api.register(deviceRoutes, { devices: deps.services.devices, limits });
    await api.register(controlRoutes, { control: deps.services.control });
    await api.register(callbackRoutes, { callbacks: deps.services.callbacks });
    await api.register(deviceEventRoutes, { deviceEvents: deps.services.deviceEvents });
    await api.register(taskHistoryRoutes, { history: deps.services.history });
    await api.register(e2eKeyRoutes, { keys: deps.services.e2eKeys });
    await api.register(scanRoutes, { scan: deps.services.scan });
    await api.register(printRoutes, { print: deps.services.print, createBodyLimit: deps.printBodyLimit ?? 64 * 1024 * 1024 });
    await api.register(recognitionRoutes, { recognition: deps.services.recognition, templates: deps.services.templates });
    await api.register(operatorRoutes, { applications: deps.services.applications, devices: deps.services.devices, hooks: deps.credentialHooks ?? {} });
  });
  // The web console: its own scope (form bodies, HTML errors), the same services (docs/console.md).
  if (deps.secretBox) {
    await app.register(consoleRoutes, {
      services: deps.services, box: deps.secretBox, limits, clock: deps.clock, printBodyLimit: deps.printBodyLimit ?? 64 * 1024 * 1024,
      operatorToken: deps.operatorToken, credentialHooks: deps.credentialHooks ?? {},
    });
  }
  // Signed URLs are their own credential: outside API-key auth and the envelope.
  if (deps.blobs) await app.register(blobRoutes, deps.blobs);
  // Direct transfers to recognition tasks: signed by the scan's direct secret, outside API-key
  // auth and the envelope, with their own body limit (docs/direct-transfer.md).
  await app.register(directReceiverRoutes, { recognition: deps.services.recognition, maxPageBytes: deps.directMaxPageBytes ?? 16 * 1024 * 1024 });

  return { app, limits };
}
