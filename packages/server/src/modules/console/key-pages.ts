// Keys (docs/console.md "Pages"): the application's own API keys (rotate, revoke), the callback
// secret, and its end-to-end encryption public keys, through the services the API uses.
import { api, ApiError } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkBody } from '../../http/validation.ts';
import type { CreatedKey } from '../applications/service.ts';
import { dangers } from './dangers.ts';
import { askFirst, confirmed, formOf, idParam, sess, show, type ConsoleOptions } from './kit.ts';
import { keysView } from './key-views.ts';
import { newCsrf, sealSession, SESSION_COOKIE, SESSION_TTL_MS, setCookie } from './session.ts';

export function keyPages(app: FastifyInstance, o: ConsoleOptions): void {
  const { services: s } = o;
  const keysPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    extra: { created?: CreatedKey; msg?: string } = {},
  ) => {
    const { appId, keyId, csrf } = sess(req);
    const [keys, e2e] = await Promise.all([s.applications.listKeys(appId), s.e2eKeys.list(appId)]);
    return show(reply, req, 'Keys', keysView({ keys, sessionKey: keyId, e2e, csrf, ...extra }));
  };
  app.get<{ Querystring: { msg?: string } }>('/console/keys', async (req, reply) =>
    keysPage(req, reply, req.query.msg ? { msg: req.query.msg } : {}),
  );

  // The new key is shown in this answer only. Rotating the key this session signed in with ends
  // the session (it names the key); the one who rotated it gets a session with the new key.
  app.post<{ Params: { id: string } }>('/console/keys/:id/rotate', async (req, reply) => {
    const session = sess(req);
    const id = idParam(req.params.id);
    if (!confirmed(req))
      return askFirst(reply, req, dangers.rotateKey(await s.applications.key(id, session.appId), false));
    const created = await s.applications.rotateOwnKey(session.appId, id);
    if (id === session.keyId) {
      const csrf = newCsrf();
      setCookie(
        req,
        reply,
        SESSION_COOKIE,
        sealSession(o.box, { app: session.appId, key: created.id, exp: o.clock.now() + SESSION_TTL_MS, csrf }),
        SESSION_TTL_MS / 1000,
      );
      req.consoleSession = { ...session, keyId: created.id, csrf };
    }
    return keysPage(req, reply, { created });
  });

  app.post<{ Params: { id: string } }>('/console/keys/:id/revoke', async (req, reply) => {
    const { appId, keyId } = sess(req);
    const id = idParam(req.params.id);
    // Revoking it would sign this session out, and could leave the application with no key.
    if (id === keyId)
      throw new ApiError(
        'INVALID_PARAMETER',
        'this session signed in with that key: rotate it, or sign in with another key to revoke it',
      );
    if (!confirmed(req)) return askFirst(reply, req, dangers.revokeKey(await s.applications.key(id, appId), false));
    await s.applications.revokeOwnKey(appId, id);
    return reply.redirect('/console/keys?msg=key_revoked', 303);
  });

  app.post('/console/keys/e2e', async (req, reply) => {
    const body = checkBody(api.E2eKeyRegisterBody, { public_key: (formOf(req).public_key ?? '').trim() });
    await s.e2eKeys.register(sess(req).appId, body);
    return reply.redirect('/console/keys?msg=e2e_registered', 303);
  });
}
