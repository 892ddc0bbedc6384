// The OpenAPI document is generated from the route schemas (one source of truth), served at
// /openapi.json with a browsable page at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { api } from '@boxhub/protocol';

export async function installOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'boxhub API',
        version: '1.0.0',
        description:
          'Remote scanning, printing and control of box devices. Every response is HTTP 200 with a {code, msg, data} envelope; codes are listed in docs/errors.md.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <api key>' },
          operatorToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'Authorization: Bearer <BOXHUB_OPERATOR_TOKEN> (operator API only)',
          },
        },
      },
      security: [{ apiKey: [] }],
      tags: [
        { name: 'device', description: 'Device binding and management' },
        { name: 'control', description: 'Remote device control' },
        {
          name: 'operator',
          description: 'Operator API: applications, API keys, box registration and secrets (BOXHUB_OPERATOR_TOKEN)',
        },
      ],
      webhooks: callbackWebhooks(),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** The callbacks the service sends (docs/api.md, "Callbacks"), as OpenAPI 3.1 webhooks keyed by event name. */
function callbackWebhooks() {
  return Object.fromEntries(
    Object.entries(api.callbackEvents).map(([name, e]) => [
      name,
      {
        [e.method.toLowerCase()]: {
          summary: e.summary,
          description:
            'Sent to the callback_url with User-Agent SVC, X-SVC-Callback-ID and Standard Webhooks signature headers (webhook-id, webhook-timestamp, webhook-signature); docs/callbacks.md.',
          requestBody: { required: true, content: { 'application/json': { schema: e.body } } },
          responses: {
            200: {
              description:
                'Received. Anything but HTTP 200 within 5 s is a failed attempt, retried after 8, 13 and 21 s.',
            },
          },
        },
      },
    ]),
  );
}
