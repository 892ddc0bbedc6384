import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.ts';
import type { E2eKeyService } from './service.ts';

const tags = ['encryption'];

export const e2eKeyRoutes: FastifyPluginAsyncTypebox<{ keys: E2eKeyService }> = async (app, { keys }) => {
  app.post(
    '/api/application/e2e_key/register',
    {
      schema: {
        tags,
        summary:
          "Register the application's X25519 public key for end-to-end encrypted scans; it becomes the current key (rotation: register a new one)",
        body: api.E2eKeyRegisterBody,
        response: { 200: api.E2eKeyResponse },
      },
    },
    async (req) => ok(await keys.register(req.application.id, req.body)),
  );

  app.get(
    '/api/application/e2e_key/list',
    {
      schema: {
        tags,
        summary: "The application's registered public keys, newest first, with their key ids",
        response: { 200: api.E2eKeyListResponse },
      },
    },
    async (req) => ok(await keys.list(req.application.id)),
  );
};
