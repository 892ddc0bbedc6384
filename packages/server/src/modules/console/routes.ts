// The web console at /console (docs/console.md): server-rendered pages over the same services
// the API uses, always with the signed-in application's id (or, under /console/operator, as
// the operator API with the operator's sign-in). Its own scope: a form-body parser, multipart
// for print uploads, HTML error pages; the API (/api, bearer only) is untouched.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import multipart from '@fastify/multipart';
import { isApiError, messageOf, statusOf } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callbackPages } from './callback-pages.ts';
import { devicePages, PRINT_FIELDS, PRINT_ROUTE } from './device-pages.ts';
import { keyPages } from './key-pages.ts';
import { CSRF_REFUSED, ctx, formOf, Refused, type ConsoleOptions, type Form } from './kit.ts';
import { page } from './layout.ts';
import { operatorPages } from './operator-pages.ts';
import { fleetPages } from './fleet-pages.ts';
import { recognitionPages } from './recognition-pages.ts';
import { reviewPages } from './review-pages.ts';
import {
  LOGIN_COOKIE,
  newCsrf,
  OPERATOR_COOKIE,
  OPERATOR_PATH,
  openOperatorSession,
  openSession,
  readCookie,
  sameToken,
  sealSession,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  setCookie,
} from './session.ts';
import { CONSOLE_JS } from './script.ts';
import { CONSOLE_CSS } from './style.ts';
import { taskPages } from './task-pages.ts';
import { templatePages } from './template-pages.ts';
import { errorView, loginView } from './views.ts';

export type { ConsoleOptions } from './kit.ts';

const HTMX = readFileSync(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'));
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PUBLIC = new Set([
  '/console/login',
  '/console/assets/console.css',
  '/console/assets/console.js',
  '/console/assets/htmx.min.js',
  `${OPERATOR_PATH}/login`,
]);
const isOperatorPath = (path: string) => path === OPERATOR_PATH || path.startsWith(`${OPERATOR_PATH}/`);

export async function consoleRoutes(app: FastifyInstance, o: ConsoleOptions): Promise<void> {
  const { services: s } = o;
  app.decorateRequest('consoleSession', null);
  app.decorateRequest('operatorSession', null);
  // Pages, not API: kept out of /openapi.json (and so out of the SDK).
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_req, body, done) => {
      // parseAs: 'string' hands a string (toString() is for the type's Buffer branch).
      const form: Form = Object.create(null) as Form;
      for (const [k, v] of new URLSearchParams(body.toString())) form[k] = v;
      done(null, form);
    },
  );
  // The print upload: its fields (the token first), one file.
  await app.register(multipart, {
    limits: {
      fileSize: o.printBodyLimit,
      files: 1,
      fields: PRINT_FIELDS.length,
      parts: PRINT_FIELDS.length + 1,
      fieldSize: 4096,
    },
  });

  app.addHook('onRequest', async (req, reply) => {
    reply
      .header('content-security-policy', CSP)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'same-origin')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store');
    // Cross-site requests are refused before anything else (the CSRF token is checked too).
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (req.headers['sec-fetch-site'] === 'cross-site') throw new Refused(403, 'cross-site request refused');
      // The whole origin, scheme included: http://host is another origin than https://host.
      const origin = req.headers.origin;
      if (origin !== undefined && !sameOrigin(origin, req, o.publicUrl?.()))
        throw new Refused(403, 'cross-origin request refused');
    }
    // The API's rate limits apply here too: per address, then per application.
    await o.limits.checkAddress(req, reply);
    // Which page this is comes from the route that matched, not from the URL as written: the
    // router decodes percent-escapes, so `/console/%6Fperator/…` reaches an operator page.
    const written = req.url.split('?')[0]!;
    const path =
      req.routeOptions.url === undefined || req.routeOptions.url === '/console/*' ? written : req.routeOptions.url;
    if (PUBLIC.has(path)) return;
    const away = (to: string) => {
      if (req.headers['hx-request']) {
        reply.header('hx-redirect', to);
        return reply.code(204).send();
      }
      return reply.redirect(to, 303);
    };
    // Operator pages take the operator's session only (its own cookie, sent to these paths
    // only); an application's session is no credential here, whatever its key.
    if (isOperatorPath(path)) {
      const op = openOperatorSession(o.box, readCookie(req, OPERATOR_COOKIE), o.clock.now(), o.operatorToken);
      if (!op || (await o.signouts.isSignedOut(op.csrf))) return away(`${OPERATOR_PATH}/login`);
      req.operatorSession = { csrf: op.csrf };
      return;
    }
    const opened = openSession(o.box, readCookie(req, SESSION_COOKIE), o.clock.now());
    // Signed out (on this node or another): the cookie opens nothing any more.
    const token = opened && !(await o.signouts.isSignedOut(opened.csrf)) ? opened : undefined;
    const who = token ? await s.applications.activeKey(token.key) : undefined;
    if (!token || !who || who.id !== token.app) return away('/console/login');
    req.consoleSession = { appId: who.id, appName: who.name, keyId: who.key_id, csrf: token.csrf };
    req.application = who;
    await o.limits.checkApp(req, reply);
  });
  // Every form but the print upload (checked as its first part) carries the session's token.
  app.addHook('preHandler', async (req) => {
    const session = req.consoleSession ?? req.operatorSession;
    if (req.method !== 'POST' || !session) return;
    if (req.routeOptions.url === PRINT_ROUTE && req.isMultipart()) return;
    const sent = formOf(req)._csrf ?? headerValue(req.headers['x-csrf-token']);
    if (!sameToken(sent, session.csrf)) throw new Refused(403, CSRF_REFUSED);
  });

  app.setErrorHandler((err, req, reply) => {
    let status = 500;
    let message = `internal error (request id ${req.id})`;
    const errStatus = statusOf(err);
    if (err instanceof Refused) {
      status = err.status;
      message = err.message;
    } else if (isApiError(err)) {
      status =
        err.key === 'NOT_FOUND' || err.key === 'DEVICE_NOT_FOUND'
          ? 404
          : err.key === 'RATE_LIMITED'
            ? 429
            : err.key === 'SERVER_BUSY'
              ? 503
              : 400;
      const after = err.data?.retry_after;
      if (typeof after === 'number') reply.header('retry-after', String(after));
      message = `${err.message} (code ${err.code})`;
    } else if (errStatus && errStatus < 500) {
      status = errStatus;
      message = messageOf(err);
    } else req.log.error({ err }, 'console: unhandled error');
    const home = req.operatorSession
      ? `${OPERATOR_PATH}/applications`
      : req.consoleSession
        ? '/console/devices'
        : '/console/login';
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(page('Error', ctx(req), errorView(status, message, home)));
  });

  app.get('/console/assets/console.css', async (_req, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_CSS),
  );
  app.get('/console/assets/console.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_JS),
  );
  app.get('/console/assets/htmx.min.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(HTMX),
  );

  // Sign in: the login form is protected by a double-submit token (a cookie and a field).
  const loginPage = (req: FastifyRequest, reply: FastifyReply, error?: string, status = 200) => {
    const csrf = newCsrf();
    setCookie(req, reply, LOGIN_COOKIE, csrf, 3600);
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(page('Sign in', {}, loginView(csrf, error)));
  };
  app.get('/console/login', async (req, reply) => loginPage(req, reply));
  app.post('/console/login', async (req, reply) => {
    const form = formOf(req);
    if (!sameToken(form._csrf, readCookie(req, LOGIN_COOKIE)))
      throw new Refused(403, 'the sign-in form expired or came from another site; reload it and try again');
    o.limits.checkAuthBlocked(req, reply);
    const key = (form.api_key ?? '').trim();
    const who = key && key.length <= 200 ? await s.applications.authenticate(key) : undefined;
    if (!who) {
      await o.limits.authFailed(req);
      return loginPage(req, reply, 'That API key is not valid.', 401);
    }
    const token = sealSession(o.box, {
      app: who.id,
      key: who.key_id,
      exp: o.clock.now() + SESSION_TTL_MS,
      csrf: newCsrf(),
    });
    setCookie(req, reply, SESSION_COOKIE, token, SESSION_TTL_MS / 1000);
    setCookie(req, reply, LOGIN_COOKIE, '', 0);
    return reply.redirect('/console/devices', 303);
  });
  app.post('/console/logout', async (req, reply) => {
    // Recorded for every node, until the session would have expired anyway.
    if (req.consoleSession)
      await o.signouts.signOut(req.consoleSession.csrf, o.clock.now() + SESSION_TTL_MS, o.clock.now());
    setCookie(req, reply, SESSION_COOKIE, '', 0);
    return reply.redirect('/console/login', 303);
  });
  app.get('/console', async (_req, reply) => reply.redirect('/console/devices', 303));

  devicePages(app, o);
  taskPages(app, o);
  recognitionPages(app, o);
  reviewPages(app, o);
  templatePages(app, o);
  keyPages(app, o);
  callbackPages(app, o);
  operatorPages(app, o);
  fleetPages(app, o);

  // Any other console path: an HTML 404 (the API's envelope is for /api).
  app.get('/console/*', async () => {
    throw new Refused(404, 'no such page');
  });
}

/**
 * Whether a request's Origin is this server: the scheme and host the request came by (through a
 * trusted proxy, as it reports them: docs/configuration.md "Behind a proxy"), or the origin of
 * BOXHUB_PUBLIC_URL. `null` and anything unparsable are other origins.
 */
function sameOrigin(origin: string, req: FastifyRequest, publicUrl: string | undefined): boolean {
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  if (o.origin === 'null') return false;
  const own = [`${req.protocol}://${req.host}`];
  if (publicUrl) {
    try {
      own.push(new URL(publicUrl).origin);
    } catch {
      /* no public URL */
    }
  }
  return own.some((x) => {
    try {
      return new URL(x).origin === o.origin;
    } catch {
      return false;
    }
  });
}
const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
