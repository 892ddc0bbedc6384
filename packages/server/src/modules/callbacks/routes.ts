import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okNull } from '../../http/envelope.ts';
import type { CallbackService } from './service.ts';

const tags = ['callback'];

export const callbackRoutes: FastifyPluginAsyncTypebox<{ callbacks: CallbackService }> = async (app, { callbacks }) => {
  app.post(
    '/api/application/callback/test',
    {
      schema: {
        tags,
        summary: 'Send a callback.test event to an address through the delivery machinery',
        body: api.CallbackTestBody,
        response: { 200: api.CallbackTestResponse },
      },
    },
    async (req) => ok(await callbacks.sendTest(req.application.id, req.body.callback_url)),
  );

  app.get(
    '/api/application/callback/list',
    {
      schema: {
        tags,
        summary: "Delivery log: this application's callbacks with their attempts, 20 per page, newest first",
        querystring: api.CallbackListQuery,
        response: { 200: api.CallbackListResponse },
      },
    },
    async (req) => ok(await callbacks.list(req.application.id, req.query)),
  );

  app.post(
    '/api/application/callback/replay',
    {
      schema: {
        tags,
        summary: 'Send a delivered or failed callback again (same id and body, a new round of attempts)',
        body: api.CallbackReplayBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await callbacks.replay(req.application.id, req.body.id);
      return okNull;
    },
  );

  app.post(
    '/api/application/callback/rotate_secret',
    {
      schema: {
        tags,
        summary: 'Replace the callback signing secret; the previous one keeps signing for a grace period',
        body: api.RotateSecretBody,
        response: { 200: api.RotateSecretResponse },
      },
    },
    async (req) => ok(await callbacks.rotateSecret(req.application.id)),
  );
};
