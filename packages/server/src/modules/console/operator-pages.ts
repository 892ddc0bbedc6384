// The operator's console (docs/console.md "Operators"): its own sign-in with the operator token
// (as the operator API's bearer), its own sealed session cookie sent to /console/operator only,
// CSRF like every form; pages over the services the operator API uses.
import { api } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkBody } from '../../http/validation.ts';
import type { CreatedApplication, CreatedKey } from '../applications/service.ts';
import type { RegisteredDevice } from '../devices/service.ts';
import { dangers } from './dangers.ts';
import {
  askFirst,
  confirmed,
  enc,
  formOf,
  idParam,
  operatorOf,
  pageNumber,
  Refused,
  show,
  type ConsoleOptions,
} from './kit.ts';
import { page } from './layout.ts';
import { applicationsView, applicationView, operatorDevicesView, operatorLoginView } from './operator-views.ts';
import {
  newCsrf,
  OPERATOR_COOKIE,
  OPERATOR_LOGIN_COOKIE,
  OPERATOR_PATH,
  operatorTokenDigest,
  readCookie,
  sameToken,
  sealOperatorSession,
  SESSION_TTL_MS,
  setCookie,
} from './session.ts';

export function operatorPages(app: FastifyInstance, o: ConsoleOptions): void {
  const { applications, devices } = o.services;
  const hooks = o.credentialHooks ?? {};
  const csrfOf = (req: FastifyRequest) => operatorOf(req).csrf;
  // Every operator page (sign-in and sign-out aside) checks the operator's session first, before
  // it reads or changes anything.
  app.addHook('preHandler', async (req) => {
    const url = req.routeOptions.url ?? '';
    if (url.startsWith(`${OPERATOR_PATH}/`) && url !== `${OPERATOR_PATH}/login`) operatorOf(req);
  });

  const loginPage = (req: FastifyRequest, reply: FastifyReply, error?: string, status = 200) => {
    const csrf = newCsrf();
    setCookie(req, reply, OPERATOR_LOGIN_COOKIE, csrf, 3600, OPERATOR_PATH);
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(page('Operator sign-in', {}, operatorLoginView(csrf, o.operatorToken !== undefined, error)));
  };
  app.get(`${OPERATOR_PATH}/login`, async (req, reply) => loginPage(req, reply));
  app.post(`${OPERATOR_PATH}/login`, async (req, reply) => {
    const form = formOf(req);
    if (!sameToken(form._csrf, readCookie(req, OPERATOR_LOGIN_COOKIE)))
      throw new Refused(403, 'the sign-in form expired or came from another site; reload it and try again');
    if (o.operatorToken === undefined)
      throw new Refused(403, 'the operator console is off; set BOXHUB_OPERATOR_TOKEN to use it');
    // The refused-credential limit of the API's sign-ins applies here too.
    o.limits.checkAuthBlocked(req, reply);
    const given = (form.operator_token ?? '').trim();
    // Compared as digests: constant time whatever the lengths.
    if (!given || given.length > 512 || !sameToken(operatorTokenDigest(given), operatorTokenDigest(o.operatorToken))) {
      await o.limits.authFailed(req);
      return loginPage(req, reply, 'That is not the operator token.', 401);
    }
    const token = sealOperatorSession(o.box, {
      token: operatorTokenDigest(o.operatorToken),
      exp: o.clock.now() + SESSION_TTL_MS,
      csrf: newCsrf(),
    });
    setCookie(req, reply, OPERATOR_COOKIE, token, SESSION_TTL_MS / 1000, OPERATOR_PATH);
    setCookie(req, reply, OPERATOR_LOGIN_COOKIE, '', 0, OPERATOR_PATH);
    return reply.redirect(`${OPERATOR_PATH}/applications`, 303);
  });
  app.post(`${OPERATOR_PATH}/logout`, async (req, reply) => {
    if (req.operatorSession)
      await o.signouts.signOut(req.operatorSession.csrf, o.clock.now() + SESSION_TTL_MS, o.clock.now());
    setCookie(req, reply, OPERATOR_COOKIE, '', 0, OPERATOR_PATH);
    return reply.redirect(`${OPERATOR_PATH}/login`, 303);
  });
  app.get(OPERATOR_PATH, async (_req, reply) => reply.redirect(`${OPERATOR_PATH}/applications`, 303));

  // Applications.
  const appsPage = async (req: FastifyRequest, reply: FastifyReply, page: number, created?: CreatedApplication) =>
    show(reply, req, 'Applications', applicationsView(await applications.list(page), csrfOf(req), created));
  app.get<{ Querystring: { page?: string } }>(`${OPERATOR_PATH}/applications`, async (req, reply) =>
    appsPage(req, reply, pageNumber(req.query.page)),
  );
  // The new application's key and secret are shown in this answer only.
  app.post(`${OPERATOR_PATH}/applications/create`, async (req, reply) => {
    const form = formOf(req);
    const body = checkBody(api.OperatorAppCreateBody, { name: form.name ?? '', ess: form.ess === '1' });
    return appsPage(req, reply, 1, await applications.create({ name: body.name, ess: body.ess ?? false }));
  });

  const appPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    appId: string,
    created?: CreatedKey & { rotated: boolean },
    msg?: string,
  ) => {
    const [a, keys] = await Promise.all([applications.info(appId), applications.listKeys(appId)]);
    return show(reply, req, a.name, applicationView(a, keys, csrfOf(req), created, msg));
  };
  app.get<{ Params: { id: string }; Querystring: { msg?: string } }>(
    `${OPERATOR_PATH}/applications/:id`,
    async (req, reply) => appPage(req, reply, idParam(req.params.id), undefined, req.query.msg),
  );
  app.post<{ Params: { id: string } }>(`${OPERATOR_PATH}/applications/:id/keys/create`, async (req, reply) => {
    const appId = idParam(req.params.id);
    const body = checkBody(api.KeyCreateBody, { app_id: appId, name: formOf(req).name ?? '' });
    return appPage(req, reply, appId, { ...(await applications.createKey(body.app_id, body.name)), rotated: false });
  });
  app.post<{ Params: { key: string } }>(`${OPERATOR_PATH}/keys/:key/rotate`, async (req, reply) => {
    const keyId = idParam(req.params.key);
    if (!confirmed(req)) return askFirst(reply, req, dangers.rotateKey(await applications.key(keyId), true));
    const created = await applications.rotateKey(keyId);
    return appPage(req, reply, created.app_id, { ...created, rotated: true });
  });
  app.post<{ Params: { key: string } }>(`${OPERATOR_PATH}/keys/:key/revoke`, async (req, reply) => {
    const keyId = idParam(req.params.key);
    if (!confirmed(req)) return askFirst(reply, req, dangers.revokeKey(await applications.key(keyId), true));
    const appId = await applications.keyOwner(keyId);
    await applications.revokeKey(keyId);
    return reply.redirect(`${OPERATOR_PATH}/applications/${enc(appId)}?msg=key_revoked`, 303);
  });

  // Devices of the deployment.
  const devicesPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    page: number,
    registered?: RegisteredDevice & { rotated?: boolean },
    msg?: string,
  ) =>
    show(
      reply,
      req,
      'Devices of the deployment',
      operatorDevicesView(await devices.listAll(page), csrfOf(req), registered, msg),
    );
  app.get<{ Querystring: { page?: string; msg?: string } }>(`${OPERATOR_PATH}/devices`, async (req, reply) =>
    devicesPage(req, reply, pageNumber(req.query.page), undefined, req.query.msg),
  );
  // The box's secret is shown in this answer only.
  app.post(`${OPERATOR_PATH}/devices/register`, async (req, reply) => {
    const form = formOf(req);
    const body = checkBody(api.DeviceRegisterBody, { code: form.code ?? '', model: form.model ?? '' });
    return devicesPage(req, reply, 1, await devices.register(body, hooks.provision));
  });
  app.post<{ Params: { uuid: string } }>(`${OPERATOR_PATH}/devices/:uuid/rotate_secret`, async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    if (!confirmed(req)) return askFirst(reply, req, dangers.newDeviceSecret(await devices.registered(uuid)));
    return devicesPage(req, reply, 1, { ...(await devices.rotateSecret(uuid, hooks)), rotated: true });
  });
  app.post<{ Params: { uuid: string } }>(`${OPERATOR_PATH}/devices/:uuid/revoke`, async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    if (!confirmed(req)) return askFirst(reply, req, dangers.revokeDevice(await devices.registered(uuid)));
    await devices.revokeSecret(uuid, hooks);
    return reply.redirect(`${OPERATOR_PATH}/devices?msg=device_revoked`, 303);
  });
}
