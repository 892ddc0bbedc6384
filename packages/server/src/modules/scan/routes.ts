import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okNull } from '../../http/envelope.ts';
import type { ScanService } from './service.ts';

const tags = ['scan'];

export const scanRoutes: FastifyPluginAsyncTypebox<{ scan: ScanService }> = async (app, { scan }) => {
  app.post(
    '/api/scan/create',
    {
      schema: {
        tags,
        summary: 'Create a scan task on a device (one at a time per device; 30204 with data.exist_uuid otherwise)',
        body: api.ScanCreateBody,
        response: { 200: api.ScanCreateResponse },
      },
    },
    async (req) => ok(await scan.create(req.application.id, req.body)),
  );

  app.post(
    '/api/scan/stop',
    {
      schema: {
        tags,
        summary: "Stop the device's scan now, whatever the box is doing",
        body: api.ScanDeviceBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await scan.stop(req.application.id, req.body.client_uuid);
      return okNull;
    },
  );

  app.post(
    '/api/scan/current',
    {
      schema: {
        tags,
        summary: 'Whether a scan task is in progress on the device, and which',
        body: api.ScanDeviceBody,
        response: { 200: api.ScanCurrentResponse },
      },
    },
    async (req) => ok(await scan.current(req.application.id, req.body.client_uuid)),
  );

  app.post(
    '/api/scan/info',
    {
      schema: {
        tags,
        summary: 'Status of a scan task',
        body: api.ScanInfoBody,
        response: { 200: api.ScanInfoResponse },
      },
    },
    async (req) => ok(await scan.info(req.application.id, req.body.client_uuid, req.body.scan_uuid)),
  );

  app.post(
    '/api/scan/item_data',
    {
      schema: {
        tags,
        summary: "A scan task's items (20 per page) with 1-hour download links",
        body: api.ItemDataBody,
        response: { 200: api.ItemDataResponse },
      },
    },
    async (req) => ok(await scan.itemData(req.application.id, req.body)),
  );
};
