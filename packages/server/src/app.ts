// Builds the HTTP application and never listens (conventions: build, then listen), so tests
// can use inject() and main.ts decides where to listen.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Db } from './db/connect.ts';
import { installAuth } from './http/auth.ts';
import { installErrorHandling } from './http/error-handler.ts';
import { installJsonParser } from './http/json-body.ts';
import { lazyChildLogger } from './http/lazy-child-logger.ts';
import { installObservability } from './http/observability.ts';
import { installOpenApi } from './http/openapi.ts';
import { validatorCompiler } from './http/validation.ts';
import type { Metrics } from './metrics/registry.ts';
import { callbackRoutes } from './modules/callbacks/routes.ts';
import { controlRoutes } from './modules/control/routes.ts';
import { deviceRoutes } from './modules/devices/routes.ts';
import type { Services } from './services.ts';

export interface AppDeps {
  db: Db;
  services: Services;
  metrics: Metrics;
  logger: Logger;
  bodyLimit: number;
  brokerClients?: () => number | undefined;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
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
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  installJsonParser(app);
  installErrorHandling(app, deps.bodyLimit);
  await installOpenApi(app);
  installObservability(app, deps.metrics, deps.db, deps.brokerClients ?? (() => undefined));

  await app.register(async (api) => {
    installAuth(api, deps.services.applications);
    await api.register(deviceRoutes, { devices: deps.services.devices });
    await api.register(controlRoutes, { control: deps.services.control });
    await api.register(callbackRoutes, { callbacks: deps.services.callbacks });
  });

  return app;
}
