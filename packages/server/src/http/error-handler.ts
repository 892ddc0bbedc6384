// The one place where failures become the envelope (conventions: errors mapped once at the
// edge). Every answer is HTTP 200 (docs/api.md, "Conventions"); the outcome is in `code`.
import { ApiError, errorCatalog, type ErrorKey, errnoCode } from '@boxhub/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeValidation } from './validation.ts';
import { answersWithStatus } from './edge.ts';

declare module 'fastify' {
  interface FastifyRequest {
    envelopeCode: number;
  }
}

export function send(
  req: FastifyRequest,
  reply: FastifyReply,
  key: ErrorKey,
  msg?: string,
  data: Record<string, unknown> | null = null,
) {
  const { code } = errorCatalog[key];
  req.envelopeCode = code;
  // Serialised as it is, not through the route's response schema: that schema describes the
  // success answer, and would turn an error's data (30007 next_allowed_at, 30204 exist_uuid)
  // into null.
  return reply
    .code(200)
    .type('application/json; charset=utf-8')
    .serializer(JSON.stringify)
    .send({ code, msg: msg ?? errorCatalog[key].msg, data });
}

/** Maps Fastify's own error codes to the catalog. */
const fastifyCodes: Record<string, ErrorKey> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_PARAMETER',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

/** Codes of a dependency out of reach for now (storage, the database): the network's errors and
 *  PostgreSQL's connection classes (08…, 57P01-57P03: shut down, starting up). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  '57P03',
]);

/** The code of an error raised because a dependency is unreachable, or undefined. */
export function unreachableCode(err: unknown): string | undefined {
  for (
    let e: unknown = err, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = 'cause' in e ? e.cause : undefined, depth++
  ) {
    const code = errnoCode(e);
    if (typeof code === 'string' && (UNREACHABLE.has(code) || /^08/.test(code))) return code;
    if (e instanceof Error && /^Connection terminated|^Client has encountered a connection error/.test(e.message))
      return 'connection-lost';
  }
  return undefined;
}

export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.decorateRequest('envelopeCode', 0);

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) {
      // A refusal that says when to come back says it in the header too (10007, 10429).
      const after = (err.data as { retry_after?: unknown } | null)?.retry_after;
      if (typeof after === 'number') reply.header('retry-after', String(after));
      return send(req, reply, err.key, err.message, err.data);
    }
    if (err.validation) {
      return send(req, reply, 'INVALID_PARAMETER', describeValidation(err.validationContext ?? 'body', err.validation));
    }
    const key = err.code ? fastifyCodes[err.code] : undefined;
    if (key === 'PAYLOAD_TOO_LARGE') {
      // Routes may take more than the default (print create takes files inline).
      const limit = req.routeOptions?.bodyLimit ?? bodyLimit;
      return send(
        req,
        reply,
        key,
        `request body is larger than the ${limit} bytes ${req.routeOptions?.url ?? 'this endpoint'} accepts`,
      );
    }
    if (key === 'MALFORMED_JSON')
      return send(
        req,
        reply,
        key,
        err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
          ? 'request body is empty; send a JSON object'
          : `request body is not valid JSON: ${err.message}`,
      );
    if (key === 'UNSUPPORTED_MEDIA_TYPE')
      return send(
        req,
        reply,
        key,
        `unsupported Content-Type '${req.headers['content-type'] ?? ''}'; send application/json`,
      );
    if (key) return send(req, reply, key, err.message);
    if (err.statusCode === 400) return send(req, reply, 'INVALID_PARAMETER', err.message);
    if (err.statusCode === 413) return send(req, reply, 'PAYLOAD_TOO_LARGE');
    if (err.statusCode === 415) return send(req, reply, 'UNSUPPORTED_MEDIA_TYPE');
    // A dependency out of reach (storage, the database restarting): the caller may retry
    // (docs/errors.md 10503), and it is no fault of ours to log as one.
    const unreachable = unreachableCode(err);
    if (unreachable) {
      req.log.warn({ err: err.message, code: unreachable }, 'a dependency is unreachable');
      return send(
        req,
        reply,
        'SERVICE_UNAVAILABLE',
        `a dependency of this request is unreachable for now (${unreachable}); try again (request id ${req.id})`,
      );
    }
    // Anything else is our fault: log it with the request id, answer without internals.
    req.log.error({ err }, 'unhandled error');
    return send(req, reply, 'INTERNAL_ERROR', `internal error (request id ${req.id})`);
  });

  // Reached only with a valid credential for /api paths (auth.ts runs first): a caller without
  // one never learns which paths exist.
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    // The receiver and the signed blob URLs answer with statuses, never an envelope in a 200.
    if (answersWithStatus(path)) {
      const allowed = (['GET', 'PUT', 'POST'] as const).filter((m) =>
        app.hasRoute({ url: path.startsWith('/direct') ? '/direct/:token' : '/blobs/*', method: m }),
      );
      const wrongMethod = allowed.length > 0 && /^\/(direct|blobs)\/./.test(path);
      if (wrongMethod) reply.header('allow', allowed.join(', '));
      return reply
        .code(wrongMethod ? 405 : 404)
        .type('text/plain; charset=utf-8')
        .send(wrongMethod ? `${req.method} is not allowed here; use ${allowed.join(' or ')}\n` : 'not found\n');
    }
    const other = (['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const).filter(
      (m) => m !== req.method && app.hasRoute({ url: path, method: m }),
    );
    if (other.length)
      return send(
        req,
        reply,
        'METHOD_NOT_ALLOWED',
        `${req.method} is not allowed on ${path}; use ${other.join(' or ')}`,
      );
    return send(req, reply, 'ROUTE_NOT_FOUND', `no endpoint ${req.method} ${path}`);
  });
}
