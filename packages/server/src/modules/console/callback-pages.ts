// The callback log, replay, a test callback and the signing secret's rotation (docs/console.md).
import { ApiError, MAX_URL_CHARS, urlChars, type api } from '@boxhub/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { deviceEventsCard } from './history-views.ts';
import { html } from './html.ts';
import { dangers } from './dangers.ts';
import { askFirst, confirmed, formOf, idParam, pageNumber, sess, show, type ConsoleOptions } from './kit.ts';
import { callbackSettingsView, callbacksView } from './views.ts';

export function callbackPages(app: FastifyInstance, o: ConsoleOptions): void {
  const { services: s } = o;
  app.get<{ Querystring: { page?: string; msg?: string } }>('/console/callbacks', async (req, reply) => {
    const { appId, csrf } = sess(req);
    const list = await s.callbacks.list(appId, { page: pageNumber(req.query.page) });
    return show(reply, req, 'Callbacks', callbacksView(list, csrf, req.query.msg));
  });
  const settings = async (req: FastifyRequest, rotated?: api.RotateSecretResult) =>
    html`${callbackSettingsView(sess(req).csrf, rotated)}${deviceEventsCard(await s.deviceEvents.setting(sess(req).appId), sess(req).csrf)}`;
  app.get('/console/callbacks/settings', async (req, reply) =>
    show(reply, req, 'Callback settings', await settings(req)),
  );
  // Device events (docs/callbacks.md "Device events"): the same service and checks as the API.
  app.post('/console/callbacks/device_events', async (req, reply) => {
    const url = (formOf(req).callback_url ?? '').trim();
    if (urlChars(url) > MAX_URL_CHARS)
      throw new ApiError('INVALID_PARAMETER', `the device events URL is at most ${MAX_URL_CHARS} characters`);
    await s.deviceEvents.setCallbackUrl(sess(req).appId, url);
    return reply.redirect('/console/callbacks/settings', 303);
  });
  app.post('/console/callbacks/test', async (req, reply) => {
    const url = (formOf(req).callback_url ?? '').trim();
    if (!url || url.length > 2000) throw new ApiError('INVALID_PARAMETER', 'give the URL to send the test callback to');
    await s.callbacks.sendTest(sess(req).appId, url);
    return reply.redirect('/console/callbacks?msg=tested', 303);
  });
  // The new secret is shown in this answer only (never in a URL; pages are not cached).
  app.post('/console/callbacks/rotate_secret', async (req, reply) => {
    if (!confirmed(req))
      return askFirst(reply, req, dangers.rotateCallbackSecret('rotate-secret', '/console/callbacks/settings'));
    return show(reply, req, 'Callback settings', await settings(req, await s.callbacks.rotateSecret(sess(req).appId)));
  });
  app.post<{ Params: { id: string } }>('/console/callbacks/:id/replay', async (req, reply) => {
    await s.callbacks.replay(sess(req).appId, idParam(req.params.id));
    return reply.redirect('/console/callbacks?msg=replayed', 303);
  });
}
