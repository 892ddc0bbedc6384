// Recognition runs (docs/console.md "Pages"): the application's recognition tasks, starting one
// on a box (the ess create and the scan create the API does, with the API's validation), and
// each run's students from the callback log, live while it runs.
import { api } from '@boxhub/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkBody } from '../../http/validation.ts';
import { enc, formOf, fragment, idParam, pageNumber, sess, show, type ConsoleOptions } from './kit.ts';
import { recognitionListView, runLive, runView } from './recognition-views.ts';
import { reviewList } from './review-views.ts';

export function recognitionPages(app: FastifyInstance, o: ConsoleOptions): void {
  const { services: s } = o;
  app.get<{ Querystring: { page?: string; msg?: string } }>('/console/recognition', async (req, reply) => {
    const { appId, csrf } = sess(req);
    const [list, devices, templates] = await Promise.all([
      s.recognition.list(appId, pageNumber(req.query.page)),
      s.devices.list(appId, 1),
      s.templates.list(appId),
    ]);
    return show(
      reply,
      req,
      'Recognition runs',
      recognitionListView({
        list,
        devices: devices.clients,
        templates: templates.templates.length,
        ess: req.application.cap_ess === 1,
        csrf,
        ...(req.query.msg ? { msg: req.query.msg } : {}),
      }),
    );
  });

  app.post('/console/recognition/start', async (req, reply) => {
    const form = formOf(req);
    const appId = sess(req).appId;
    const device = idParam((form.device ?? '').trim() || '-');
    await s.devices.info(appId, device);
    const body = checkBody(api.EssCreateBody, { callback_url: (form.callback_url ?? '').trim() });
    const task = await s.recognition.create(req.application, body);
    const scan = checkBody(api.ScanCreateBody, {
      client_uuid: device,
      options: { direct_mode: 1, direct_addr: task.direct_addr, duplex: form.simplex !== '1', resolution: 200 },
    });
    await s.scan.create(appId, scan);
    return reply.redirect(`/console/recognition/${enc(task.uuid)}`, 303);
  });

  const livePart = async (req: FastifyRequest, uuid: string, page: number) => {
    const run = await s.recognition.run(sess(req).appId, uuid, page);
    return runLive(
      `/console/recognition/${enc(uuid)}/live`,
      run,
      reviewList(uuid, (await s.review.items(sess(req).appId, uuid, { links: false })).items),
    );
  };
  type RunRoute = { Params: { uuid: string }; Querystring: { page?: string } };
  app.get<RunRoute>('/console/recognition/:uuid', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const run = await s.recognition.run(sess(req).appId, uuid, pageNumber(req.query.page));
    return show(reply, req, 'Recognition run', runView(run, await livePart(req, uuid, pageNumber(req.query.page))));
  });
  app.get<RunRoute>('/console/recognition/:uuid/live', async (req, reply) =>
    fragment(reply, await livePart(req, idParam(req.params.uuid), pageNumber(req.query.page))),
  );
}
