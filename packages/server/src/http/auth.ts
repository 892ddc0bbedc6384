// Application authentication (the spec shows none): every /api call carries
// `Authorization: Bearer <api key>`. Runs before the body is parsed, so an unauthenticated
// caller learns nothing about validation.
import { ApiError } from '@boxhub/protocol';
import type { FastifyInstance } from 'fastify';
import type { Application } from '../db/schema.ts';
import type { ApplicationService } from '../modules/applications/service.ts';

declare module 'fastify' {
  interface FastifyRequest { application: Application }
}

export function installAuth(app: FastifyInstance, applications: ApplicationService): void {
  app.decorateRequest('application', null as unknown as Application);
  app.addHook('onRequest', async (req) => {
    const header = req.headers.authorization;
    if (!header) throw new ApiError('UNAUTHENTICATED', 'missing Authorization header; send "Authorization: Bearer <api key>"');
    const m = /^Bearer\s+(\S{1,200})\s*$/i.exec(header);
    if (!m?.[1]) throw new ApiError('UNAUTHENTICATED', 'Authorization header must be "Bearer <api key>"');
    const found = await applications.authenticate(m[1]);
    if (!found) throw new ApiError('UNAUTHENTICATED', 'invalid API key');
    req.application = found;
  });
}
