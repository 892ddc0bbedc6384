import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.ts';
import type { DeviceEventService } from './service.ts';

const tags = ['callback'];

// boxhub extension (docs/callbacks.md, "Device events").
export const deviceEventRoutes: FastifyPluginAsyncTypebox<{ deviceEvents: DeviceEventService }> = async (
  app,
  { deviceEvents },
) => {
  app.get(
    '/api/application/device_callback',
    {
      schema: {
        tags,
        summary:
          "The URL this application's device events go to (device.online, device.offline, device.printer_state, device.scanner_state)",
        response: { 200: api.DeviceCallbackResponse },
      },
    },
    async (req) => ok(await deviceEvents.setting(req.application.id)),
  );

  app.post(
    '/api/application/device_callback',
    {
      schema: {
        tags,
        summary: 'Set the URL this application\'s device events go to ("" stops them)',
        body: api.DeviceCallbackBody,
        response: { 200: api.DeviceCallbackResponse },
      },
    },
    async (req) => ok(await deviceEvents.setCallbackUrl(req.application.id, req.body.callback_url)),
  );
};
