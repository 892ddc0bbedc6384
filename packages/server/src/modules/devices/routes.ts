import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okNull, sendOkOf } from '../../http/envelope.ts';
import type { ApiLimits } from '../../http/rate-limits.ts';
import type { DeviceService } from './service.ts';

const tags = ['device'];

export const deviceRoutes: FastifyPluginAsyncTypebox<{ devices: DeviceService; limits: ApiLimits }> = async (
  app,
  { devices, limits },
) => {
  app.get(
    '/api/client/get_uuid',
    {
      schema: {
        tags,
        summary: 'Exchange a device code for its UUID',
        querystring: api.GetUuidQuery,
        response: { 200: api.GetUuidResponse },
      },
    },
    async (req, reply) =>
      ok({ uuid: await limits.getUuidLookup(req, reply, () => devices.getUuid(req.application.id, req.query.code)) }),
  );

  app.post(
    '/api/client/bind',
    {
      schema: {
        tags,
        summary: 'Bind a device to this application',
        body: api.BindBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await devices.bind(req.application.id, req.body);
      return okNull;
    },
  );

  app.post(
    '/api/client/unbind',
    {
      schema: { tags, summary: 'Unbind a device', body: api.UnbindBody, response: { 200: api.NullEnvelope } },
    },
    async (req) => {
      await devices.unbind(req.application.id, req.body.uuid);
      return okNull;
    },
  );

  app.get(
    '/api/client/info',
    {
      schema: { tags, summary: 'Read a bound device', querystring: api.InfoQuery, response: { 200: api.InfoResponse } },
    },
    async (req, reply) => {
      const client = await devices.info(req.application.id, req.query.uuid);
      // A cached device's view is frozen and shared (devices/view.ts): its answer is sent as made the first time.
      return sendOkOf(reply, client, { client });
    },
  );

  app.get(
    '/api/client/list',
    {
      schema: {
        tags,
        summary: 'List bound devices, 100 per page',
        querystring: api.ListQuery,
        response: { 200: api.ListResponse },
      },
    },
    async (req) => ok(await devices.list(req.application.id, req.query.page)),
  );

  app.post(
    '/api/client/edit',
    {
      schema: {
        tags,
        summary: 'Edit name and remark of a bound device',
        body: api.EditBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await devices.edit(req.application.id, req.body);
      return okNull;
    },
  );
};
