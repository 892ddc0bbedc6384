// The OpenAPI document is generated from the route schemas (one source of truth), served at
// /openapi.json with a browsable page at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export async function installOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'boxhub API',
        version: '1.0.0',
        description: 'Remote scanning, printing and control of box devices. Every response is HTTP 200 with a {code, msg, data} envelope; codes are listed in docs/errors.md.',
      },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <api key>' } } },
      security: [{ apiKey: [] }],
      tags: [
        { name: 'device', description: 'Device binding and management' },
        { name: 'control', description: 'Remote device control' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
