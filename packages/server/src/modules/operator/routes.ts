// The operator API under /api/operator/ (docs/configuration.md "Credentials"): applications and
// their API keys, box registration and box secrets, as the CLI does them on the database. Its
// bearer token is checked in http/auth.ts, before anything here runs.
import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okNull } from '../../http/envelope.ts';
import type { ApplicationService } from '../applications/service.ts';
import type { CredentialHooks, DeviceService } from '../devices/service.ts';

const tags = ['operator'];
const security = [{ operatorToken: [] }];

export const operatorRoutes: FastifyPluginAsyncTypebox<{
  applications: ApplicationService;
  devices: DeviceService;
  hooks: CredentialHooks;
}> = async (app, { applications, devices, hooks }) => {
  app.post(
    '/api/operator/app/create',
    {
      schema: {
        tags,
        security,
        summary: 'Create an application with one API key named "default"',
        body: api.OperatorAppCreateBody,
        response: { 200: api.OperatorAppCreateResponse },
      },
    },
    async (req) => ok(await applications.create({ name: req.body.name, ess: req.body.ess ?? false })),
  );

  app.get(
    '/api/operator/app/list',
    {
      schema: {
        tags,
        security,
        summary: 'Every application of the deployment, newest first, 50 per page: keys in use and boxes bound',
        querystring: api.OperatorListQuery,
        response: { 200: api.OperatorAppListResponse },
      },
    },
    async (req) => ok(await applications.list(req.query.page)),
  );

  app.get(
    '/api/operator/app/key/list',
    {
      schema: {
        tags,
        security,
        summary: 'API keys of an application, with their last use',
        querystring: api.KeyListQuery,
        response: { 200: api.KeyListResponse },
      },
    },
    async (req) => ok({ keys: await applications.listKeys(req.query.app_id) }),
  );

  app.post(
    '/api/operator/app/key/create',
    {
      schema: {
        tags,
        security,
        summary: 'Another API key for an application (shown once)',
        body: api.KeyCreateBody,
        response: { 200: api.CreatedApiKeyResponse },
      },
    },
    async (req) => ok(await applications.createKey(req.body.app_id, req.body.name)),
  );

  app.post(
    '/api/operator/app/key/rotate',
    {
      schema: {
        tags,
        security,
        summary: 'Replace an API key by a new one with the same name; the old one stops working at once',
        body: api.KeyIdBody,
        response: { 200: api.CreatedApiKeyResponse },
      },
    },
    async (req) => ok(await applications.rotateKey(req.body.key_id)),
  );

  app.post(
    '/api/operator/app/key/revoke',
    {
      schema: {
        tags,
        security,
        summary: 'Revoke an API key; it stops working at once on every node',
        body: api.KeyIdBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await applications.revokeKey(req.body.key_id);
      return okNull;
    },
  );

  app.get(
    '/api/operator/device/list',
    {
      schema: {
        tags,
        security,
        summary:
          'Every box of the deployment, 100 per page: state, the application it is bound to, whether its secret is revoked',
        querystring: api.OperatorListQuery,
        response: { 200: api.OperatorDeviceListResponse },
      },
    },
    async (req) => ok(await devices.listAll(req.query.page)),
  );

  app.post(
    '/api/operator/device/register',
    {
      schema: {
        tags,
        security,
        summary: 'Register a box (its secret is shown once)',
        body: api.DeviceRegisterBody,
        response: { 200: api.DeviceCredentialsResponse },
      },
    },
    async (req) => {
      const d = await devices.register(req.body, hooks.provision);
      return ok({ uuid: d.uuid, code: d.code, secret: d.secret });
    },
  );

  app.post(
    '/api/operator/device/rotate_secret',
    {
      schema: {
        tags,
        security,
        summary: 'A new secret for a box (shown once); the old one stops working and its session is dropped',
        body: api.DeviceUuidBody,
        response: { 200: api.DeviceCredentialsResponse },
      },
    },
    async (req) => {
      const d = await devices.rotateSecret(req.body.uuid, hooks);
      return ok({ uuid: d.uuid, code: d.code, secret: d.secret });
    },
  );

  app.post(
    '/api/operator/device/revoke',
    {
      schema: {
        tags,
        security,
        summary: "Revoke a box's secret: no login works until it is rotated; its session is dropped",
        body: api.DeviceUuidBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await devices.revokeSecret(req.body.uuid, hooks);
      return okNull;
    },
  );
};
