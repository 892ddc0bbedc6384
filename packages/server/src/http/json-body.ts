// Our own JSON body parser, so each failure says what is wrong: Fastify's default folds a
// syntax error, a duplicate-free parse failure and prototype poisoning into one message.
// secure-json-parse is what Fastify itself uses; `__proto__` / `constructor.prototype` keys
// are refused outright rather than silently stripped.
import sjson from 'secure-json-parse';
import { ApiError, messageOf } from '@boxhub/protocol';
import type { FastifyInstance } from 'fastify';

export function installJsonParser(app: FastifyInstance): void {
  // Fastify parses text/plain by default; the API takes JSON only (docs/errors.md 10004), and
  // a text body would otherwise reach validation and answer "body must be object".
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonText(body as string));
    } catch (e) {
      done(e as ApiError, undefined);
    }
  });
}

/** The API's JSON content types (application/json, application/*+json). */
export const JSON_TYPE = /^application\/([\w.+-]+\+)?json$/i;

/** A JSON request body parsed, or the ApiError saying what is wrong with it. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') throw new ApiError('MALFORMED_JSON', 'request body is empty; send a JSON object');
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (e) {
    const msg = messageOf(e);
    if (/forbidden (prototype|constructor) property/i.test(msg)) {
      throw new ApiError(
        'INVALID_PARAMETER',
        'request body contains a forbidden property (__proto__ or constructor.prototype)',
      );
    }
    throw new ApiError('MALFORMED_JSON', `request body is not valid JSON: ${msg}`);
  }
}
