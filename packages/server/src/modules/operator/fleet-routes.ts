// The operator API of running a fleet (docs/updates.md, docs/fleet.md): releases, updates of one
// box, rollouts in waves, bulk registration with labels, the fleet's figures and a box's
// history. Under /api/operator/, so the operator token guards it (http/auth.ts).
import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okNull } from '../../http/envelope.ts';
import type { CredentialHooks } from '../devices/service.ts';
import type { FleetService } from '../fleet/service.ts';
import type { ReleaseService } from '../releases/service.ts';
import type { RolloutService } from '../rollouts/service.ts';

const tags = ['operator'];
const security = [{ operatorToken: [] }];

export interface FleetRouteOptions {
  releases: ReleaseService;
  rollouts: RolloutService;
  fleet: FleetService;
  hooks: CredentialHooks;
  /** Largest release upload (the tarball, base64, in JSON). */
  releaseBodyLimit: number;
}

export const fleetRoutes: FastifyPluginAsyncTypebox<FleetRouteOptions> = async (
  app,
  { releases, rollouts, fleet, hooks, releaseBodyLimit },
) => {
  app.post(
    '/api/operator/release/upload',
    {
      bodyLimit: releaseBodyLimit,
      schema: {
        tags,
        security,
        summary: `Upload a signed agent release: its manifest, signature and tarball (base64; a body of at most ${Math.floor(releaseBodyLimit / 1048576)} MiB)`,
        body: api.ReleaseUploadBody,
        response: { 200: api.ReleaseResponse },
      },
    },
    async (req) => ok(await releases.upload(req.body)),
  );

  app.get(
    '/api/operator/release/list',
    {
      schema: { tags, security, summary: 'Agent releases, newest first', response: { 200: api.ReleaseListResponse } },
    },
    async () => ok({ releases: await releases.list() }),
  );

  app.post(
    '/api/operator/device/update',
    {
      schema: {
        tags,
        security,
        summary: 'Send one online box a release now (outside any rollout); answered once the box has checked it',
        body: api.DeviceUpdateBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await releases.updateDevice(req.body);
      return okNull;
    },
  );

  app.post(
    '/api/operator/rollout/create',
    {
      schema: {
        tags,
        security,
        summary: 'Roll a release out to boxes chosen by list, label or percentage, in waves',
        body: api.RolloutCreateBody,
        response: { 200: api.RolloutResponse },
      },
    },
    async (req) => ok(await rollouts.create(req.body)),
  );

  app.get(
    '/api/operator/rollout/list',
    {
      schema: {
        tags,
        security,
        summary: 'Rollouts, newest first, with their progress wave by wave',
        response: { 200: api.RolloutListResponse },
      },
    },
    async () => ok({ rollouts: await rollouts.list() }),
  );

  app.get(
    '/api/operator/rollout/info',
    {
      schema: {
        tags,
        security,
        summary: "A rollout's progress wave by wave",
        querystring: api.RolloutIdQuery,
        response: { 200: api.RolloutResponse },
      },
    },
    async (req) => ok(await rollouts.view(req.query.id)),
  );

  app.post(
    '/api/operator/rollout/cancel',
    {
      schema: {
        tags,
        security,
        summary: 'End a running rollout: no box is sent the release any more',
        body: api.RolloutIdBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await rollouts.cancel(req.body.id);
      return okNull;
    },
  );

  app.post(
    '/api/operator/device/bulk_register',
    {
      schema: {
        tags,
        security,
        summary:
          'Register boxes by the hundred with labels; a code registered before is listed as exists (idempotent); secrets are shown once',
        body: api.BulkRegisterBody,
        response: { 200: api.BulkRegisterResponse },
      },
    },
    async (req) => ok(await fleet.bulkRegister(req.body, hooks.provision)),
  );

  app.get(
    '/api/operator/fleet/summary',
    {
      schema: {
        tags,
        security,
        summary: 'The fleet at a glance: boxes by state, agent version and label',
        response: { 200: api.FleetSummaryResponse },
      },
    },
    async () => ok(fleet.summary(await fleet.boxes())),
  );

  app.get(
    '/api/operator/device/history',
    {
      schema: {
        tags,
        security,
        summary: "A box's recent history: connects, disconnects, updates, errors (newest first)",
        querystring: api.DeviceHistoryQuery,
        response: { 200: api.DeviceHistoryResponse },
      },
    },
    async (req) => ok({ history: await fleet.history(req.query.uuid) }),
  );
};
