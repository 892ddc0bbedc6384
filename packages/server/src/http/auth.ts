// Access to /api (docs/api.md, "Authentication"): `Authorization: Bearer <api key>` for the
// application API, `Authorization: Bearer <BOXHUB_OPERATOR_TOKEN>` for the operator API under
// /api/operator/. One hook at the root, so it runs for every /api path, those without an
// endpoint included: a caller without a valid credential gets the same answer whatever the
// path, and learns neither which endpoints exist nor anything about validation (it runs before
// the body is parsed). Rate limits (rate-limits.ts) run here too: per address first, then the
// refused-key limit, then per application.
import { ApiError } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerMatches } from './observability.ts';
import type { ApiLimits } from './rate-limits.ts';

declare module 'fastify' {
  interface FastifyRequest {
    application: AuthenticatedApp;
    /** The /api route pattern this request matched (undefined for other routes and for 404s). */
    apiRoute: string | undefined;
  }
}

/** The application a request's API key belongs to. */
export interface AuthenticatedApp {
  id: string;
  name: string;
  cap_ess: number;
  created_at: number;
  key_id: string;
}

/** Finds the application of an API key: at once when the key is known on this node, else from
 *  the database (the applications service is one; the edge sits below the modules). */
export interface KeyAuthenticator {
  authenticateKnown(apiKey: string): AuthenticatedApp | undefined;
  authenticate(apiKey: string): Promise<AuthenticatedApp | undefined>;
}

export const OPERATOR_PREFIX = '/api/operator/';

/** The path of a request that matched no route, when it is under /api. Absolute-form targets count too. */
export function apiPath(req: FastifyRequest): string | undefined {
  let path = req.url;
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      return undefined;
    }
  }
  const q = path.indexOf('?');
  if (q >= 0) path = path.slice(0, q);
  return isApi(path) ? path : undefined;
}

export interface AccessOptions {
  applications: KeyAuthenticator;
  limits: ApiLimits;
  /** Unset: the operator API answers 20003 to everyone. */
  operatorToken: string | undefined;
}

const isApi = (path: string): boolean => path === '/api' || path.startsWith('/api/');

/**
 * Installs the check on every /api route (added to each route as it is registered, so routes
 * outside /api pay nothing and no request has to work out its path) and, through one root
 * hook, on every request that matched no route. Call before the routes are registered.
 */
export function installAccess(app: FastifyInstance, o: AccessOptions): void {
  app.decorateRequest('application', null as unknown as AuthenticatedApp);
  app.decorateRequest('apiRoute', undefined);
  const check = (req: FastifyRequest, reply: FastifyReply, path: string) => access(o, req, reply, path);
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (!isApi(url)) return;
    const hook = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
      req.apiRoute = url;
      await check(req, reply, url);
    };
    const existing =
      route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [hook, ...existing] as typeof route.onRequest;
  });
  // A path with no endpoint: checked the same way, so without a credential it answers exactly
  // what an existing endpoint answers.
  app.addHook('onRequest', (req, reply, done) => {
    if (!req.is404) {
      done();
      return;
    }
    const path = apiPath(req);
    if (path === undefined) {
      done();
      return;
    }
    check(req, reply, path).then(() => done(), done);
  });
}

async function access(o: AccessOptions, req: FastifyRequest, reply: FastifyReply, path: string): Promise<void> {
  await o.limits.checkAddress(req, reply);
  const header = req.headers.authorization;
  if (path.startsWith(OPERATOR_PREFIX)) {
    if (o.operatorToken === undefined)
      throw new ApiError('NOT_OPERATOR', 'the operator API is off; set BOXHUB_OPERATOR_TOKEN to use it');
    o.limits.checkAuthBlocked(req, reply);
    if (!bearerMatches(header, o.operatorToken)) {
      await o.limits.authFailed(req);
      throw new ApiError('NOT_OPERATOR', 'send "Authorization: Bearer <BOXHUB_OPERATOR_TOKEN>"');
    }
    return;
  }
  o.limits.checkAuthBlocked(req, reply);
  const lookup = authenticate(o.applications, header);
  const found = lookup instanceof Promise ? await lookup : lookup;
  if (typeof found === 'string') {
    await o.limits.authFailed(req);
    throw new ApiError('UNAUTHENTICATED', found);
  }
  req.application = found;
  await o.limits.checkApp(req, reply);
}

/**
 * The application of a bearer API key, or why there is none; a key this node knows is answered
 * without a promise (the common case on SQLite: one microtask less per request).
 */
function authenticate(
  applications: KeyAuthenticator,
  header: string | undefined,
): AuthenticatedApp | string | Promise<AuthenticatedApp | string> {
  if (!header) return 'missing Authorization header; send "Authorization: Bearer <api key>"';
  const m = /^Bearer\s+(\S{1,200})\s*$/i.exec(header);
  if (!m?.[1]) return 'Authorization header must be "Bearer <api key>"';
  const key = m[1];
  return applications.authenticateKnown(key) ?? applications.authenticate(key).then((a) => a ?? 'invalid API key');
}
