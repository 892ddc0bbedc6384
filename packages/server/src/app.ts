// Builds the HTTP application and never listens (conventions: build, then listen), so tests
// can use inject() and main.ts decides where to listen.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Db } from './db/connect.ts';
import { installAccess } from './http/auth.ts';
import { registerKindRoutes, TASK_KINDS } from './modules/kinds.ts';
import type { KindRouteContext } from './modules/kind-module.ts';
import {
  answersWithStatus,
  clientErrorHandler,
  MAX_HEADER_BYTES,
  refuseConnect,
  rememberPath,
  REQUEST_TIMEOUT_MS,
} from './http/edge.ts';
import { installErrorHandling, send } from './http/error-handler.ts';
import { installJsonParser } from './http/json-body.ts';
import { installMemoryRelease } from './http/release-memory.ts';
import { lazyChildLogger } from './http/lazy-child-logger.ts';
import { installObservability, type ObservabilityOptions } from './http/observability.ts';
import { installOpenApi } from './http/openapi.ts';
import { ApiLimits } from './http/rate-limits.ts';
import { fastifyTrustProxy, type TrustProxy } from './http/trust-proxy.ts';
import { validatorCompiler } from './http/validation.ts';
import type { Clock } from './clock.ts';
import type { RateLimits } from './config.ts';
import type { Metrics } from './metrics/registry.ts';
import { callbackRoutes } from './modules/callbacks/routes.ts';
import { deviceEventRoutes } from './modules/device-events/routes.ts';
import { taskHistoryRoutes } from './modules/task-history/routes.ts';
import { controlRoutes } from './modules/control/routes.ts';
import { deviceRoutes } from './modules/devices/routes.ts';
import { e2eKeyRoutes } from './modules/e2e-keys/routes.ts';
import { blobRoutes, type BlobRouteOptions } from './storage/routes.ts';
import type { CredentialHooks } from './modules/devices/service.ts';
import { operatorRoutes } from './modules/operator/routes.ts';
import { fleetRoutes } from './modules/operator/fleet-routes.ts';
import { consoleRoutes } from './modules/console/routes.ts';
import { ConsoleSignouts } from './modules/console/repository.ts';
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
  /** Largest release upload body, bytes (128 MiB). */
  releaseBodyLimit?: number;
  /** The local blob store's signed-URL routes (absent with an external store). */
  blobs?: BlobRouteOptions;
  brokerClients?: () => number | undefined;
  /** Where /metrics is served and whether it wants a token (default: here, open). */
  observability?: ObservabilityOptions;
  clock: Clock;
  rateLimits: RateLimits;
  /** BOXHUB_TRUST_PROXY: whose X-Forwarded-* to believe (http/trust-proxy.ts). */
  trustProxy?: TrustProxy;
  /** BOXHUB_OPERATOR_TOKEN; unset turns the operator API off. */
  operatorToken?: string | undefined;
  /** What the broker does when the operator API changes a box's credentials. */
  credentialHooks?: CredentialHooks;
  /** The server's secret key: seals web console sessions (absent: no console). */
  secretBox?: SecretBox;
  /** Largest page image of a direct transfer to a recognition address (default 16 MiB). */
  directMaxPageBytes?: number;
  /** BOXHUB_PUBLIC_URL or the listen address (the console's Origin check). */
  publicUrl?: () => string;
}

export interface BuiltApp {
  app: FastifyInstance;
  limits: ApiLimits;
}

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
    // The client address from the right end of X-Forwarded-For (docs/configuration.md).
    trustProxy: fastifyTrustProxy(deps.trustProxy),
    // The HTTP edge (http/edge.ts): whatever Node's parser or the router refuses is answered
    // with the envelope too. A request without Host reaches the routes (answered like any
    // other) instead of getting Node's bare 400.
    // The documented 30 s for a whole request (docs/errors.md 10009) needs two more settings:
    // Node swaps the two deadlines when headersTimeout (60 s by default) is the longer one, so
    // the body got 60 s; and it checks them only every connectionsCheckingInterval (30 s by
    // default), so a slow body was cut after 62-84 s. Both deadlines 30 s, checked every second.
    http: {
      requireHostHeader: false,
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
    },
    requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler: clientErrorHandler(deps.logger as FastifyBaseLogger, (code) => malformed(code)),
    frameworkErrors: (err, req, reply) => {
      const msg = err.code === 'FST_ERR_BAD_URL' ? 'the URL is not valid percent-encoding' : err.message;
      if (answersWithStatus(req.url.split('?')[0]))
        return (reply as FastifyReply)
          .code(400)
          .header('connection', 'close')
          .type('text/plain; charset=utf-8')
          .send(`${msg}\n`);
      return send(req, reply, 'MALFORMED_REQUEST', msg);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  refuseConnect(app.server, (code) => malformed(code));
  malformed = (code) => deps.metrics.requests.labels('(malformed)', String(code)).inc();

  // Which surface each connection serves, for answers to requests whose head never parsed (edge.ts).
  app.addHook('onRequest', (req, _reply, done) => {
    rememberPath(req.raw.socket, req.url);
    done();
  });
  app.setValidatorCompiler(validatorCompiler);
  installJsonParser(app);
  installErrorHandling(app, deps.bodyLimit);
  installMemoryRelease(app, deps.logger as FastifyBaseLogger);
  await installOpenApi(app);
  installObservability(app, deps.metrics, deps.db, deps.brokerClients ?? (() => undefined), deps.observability);

  const limits = await ApiLimits.install(app, deps.rateLimits, deps.clock, deps.db.kysely);
  installAccess(app, { applications: deps.services.applications, limits, operatorToken: deps.operatorToken });

  const kindRoutes: KindRouteContext = {
    work: deps.services.work,
    printBodyLimit: deps.printBodyLimit ?? 64 * 1024 * 1024,
    templates: deps.services.templates,
    review: deps.services.review,
    directMaxPageBytes: deps.directMaxPageBytes ?? 16 * 1024 * 1024,
    kinds: deps.services.kinds.context,
  };
  await app.register(async (api) => {
    await api.register(deviceRoutes, { devices: deps.services.devices, limits });
    await api.register(controlRoutes, { control: deps.services.control });
    await api.register(callbackRoutes, { callbacks: deps.services.callbacks });
    await api.register(deviceEventRoutes, { deviceEvents: deps.services.deviceEvents });
    await api.register(taskHistoryRoutes, { history: deps.services.history });
    await api.register(e2eKeyRoutes, { keys: deps.services.e2eKeys });
    // Each task kind's routes, in the order modules/kinds.ts lists the kinds.
    for (const kind of TASK_KINDS) await registerKindRoutes(kind, 'routes', api, deps.services, kindRoutes);
    await api.register(operatorRoutes, {
      applications: deps.services.applications,
      devices: deps.services.devices,
      hooks: deps.credentialHooks ?? {},
    });
    await api.register(fleetRoutes, {
      releases: deps.services.releases,
      rollouts: deps.services.rollouts,
      fleet: deps.services.fleet,
      hooks: deps.credentialHooks ?? {},
      releaseBodyLimit: deps.releaseBodyLimit ?? 128 * 1024 * 1024,
    });
  });
  // The web console: its own scope (form bodies, HTML errors), the same services (docs/console.md).
  if (deps.secretBox) {
    await app.register(consoleRoutes, {
      services: deps.services,
      box: deps.secretBox,
      limits,
      clock: deps.clock,
      printBodyLimit: deps.printBodyLimit ?? 64 * 1024 * 1024,
      operatorToken: deps.operatorToken,
      credentialHooks: deps.credentialHooks ?? {},
      signouts: new ConsoleSignouts(deps.db.kysely),
      ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
    });
  }
  // Signed URLs are their own credential: outside API-key auth and the envelope.
  if (deps.blobs) await app.register(blobRoutes, deps.blobs);
  // A kind's routes with credentials of their own (recognition: annotated page links, direct
  // transfers signed by the scan's direct secret, docs/direct-transfer.md).
  for (const kind of TASK_KINDS) await registerKindRoutes(kind, 'publicRoutes', app, deps.services, kindRoutes);

  return { app, limits };
}
