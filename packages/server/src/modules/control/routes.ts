import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { okNull } from '../../http/envelope.ts';
import type { ControlService } from './service.ts';

const tags = ['control'];
const response = { 200: api.NullEnvelope };

export const controlRoutes: FastifyPluginAsyncTypebox<{ control: ControlService }> = async (app, { control }) => {
  app.post(
    '/api/control/buzz',
    {
      schema: { tags, summary: 'Sound the device buzzer', body: api.BuzzBody, response },
    },
    async (req) => {
      await control.buzz(req.application.id, req.body.client_uuid, req.body.buzz, req.body.gap);
      return okNull;
    },
  );

  app.post(
    '/api/control/reboot',
    {
      schema: { tags, summary: 'Reboot the device', body: api.ControlBody, response },
    },
    async (req) => {
      await control.reboot(req.application.id, req.body.client_uuid);
      return okNull;
    },
  );

  for (const op of ['head_clean', 'power_ink_flush', 'nozzle_check'] as const) {
    app.post(
      `/api/control/${op}`,
      {
        schema: {
          tags,
          body: api.ControlBody,
          response: op === 'power_ink_flush' ? { 200: api.InkFlushResponse } : response,
          summary: {
            head_clean: 'Clean the inkjet print head',
            power_ink_flush: 'Heavy ink flush (at most once per 24 h)',
            nozzle_check: 'Print a nozzle check page',
          }[op],
          description: 'Only for inkjet printers that support strict mode.',
        },
      },
      async (req) => {
        await control.inkjet(req.application.id, req.body.client_uuid, op);
        return okNull;
      },
    );
  }
};
