// The operator API of running a fleet (docs/updates.md, docs/fleet.md): agent releases, rollouts
// in waves, bulk registration with labels, the fleet's figures.
import Type, { type Static } from 'typebox';
import { ReleaseManifest } from '../release.ts';
import { Envelope, Id } from './envelope.ts';

export const ReleaseUploadBody = Type.Object(
  {
    manifest: ReleaseManifest,
    signature: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'base64 Ed25519 signature of the canonical manifest (boxhub release sign)',
    }),
    package: Type.String({ minLength: 1, contentEncoding: 'base64', description: 'the release tarball, base64' }),
  },
  { additionalProperties: false },
);
export type ReleaseUploadBody = Static<typeof ReleaseUploadBody>;

export const ReleaseView = Type.Object(
  {
    id: Type.String(),
    version: Type.String(),
    platform: Type.String(),
    size: Type.Integer(),
    sha256: Type.String(),
    entry: Type.String(),
    created_at: Type.Integer({ description: 'Unix ms' }),
  },
  { additionalProperties: false },
);
export type ReleaseView = Static<typeof ReleaseView>;
export const ReleaseResponse = Envelope(ReleaseView);
export const ReleaseListResponse = Envelope(
  Type.Object({ releases: Type.Array(ReleaseView) }, { additionalProperties: false }),
);

export const DeviceUpdateBody = Type.Object(
  {
    uuid: Id('device UUID'),
    release_id: Id('release id'),
    downgrade: Type.Optional(
      Type.Boolean({ description: 'install even when the release is older than the agent running' }),
    ),
  },
  { additionalProperties: false },
);

const Label = Type.String({
  pattern: '^[A-Za-z0-9_.:=-]{1,64}$',
  description: 'a label, e.g. school=north or floor-2',
});

export const RolloutCreateBody = Type.Object(
  {
    release_id: Id('release id'),
    /** Exactly one of uuids, label, percent chooses the boxes. */
    uuids: Type.Optional(Type.Array(Id('device UUID'), { minItems: 1, maxItems: 100_000 })),
    label: Type.Optional(Label),
    percent: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'this share of every registered box, chosen at random' }),
    ),
    waves: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'number of waves (default 3); the first is the smallest' }),
    ),
    wave_pause_s: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 7 * 86400, description: 'pause between waves, seconds (default 600)' }),
    ),
    wave_timeout_s: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 30 * 86400,
        description: 'how long a wave waits for its boxes, seconds (default 3600)',
      }),
    ),
    max_failed_pct: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 100,
        description: 'stop when more than this share of a wave fails (default 10)',
      }),
    ),
    downgrade: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type RolloutCreateBody = Static<typeof RolloutCreateBody>;

export const RolloutWave = Type.Object(
  {
    wave: Type.Integer(),
    boxes: Type.Integer(),
    pending: Type.Integer(),
    sent: Type.Integer(),
    updated: Type.Integer(),
    failed: Type.Integer(),
  },
  { additionalProperties: false },
);
export const RolloutView = Type.Object(
  {
    id: Type.String(),
    release_id: Type.String(),
    version: Type.String(),
    state: Type.Union([
      Type.Literal('running'),
      Type.Literal('done'),
      Type.Literal('stopped'),
      Type.Literal('canceled'),
    ]),
    wave: Type.Integer({ description: 'the wave under way, from 0' }),
    waves: Type.Array(RolloutWave),
    reason: Type.Optional(Type.String()),
    created_at: Type.Integer(),
    ended_at: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);
export type RolloutView = Static<typeof RolloutView>;
export const RolloutResponse = Envelope(RolloutView);
export const RolloutListResponse = Envelope(
  Type.Object({ rollouts: Type.Array(RolloutView) }, { additionalProperties: false }),
);
export const RolloutIdQuery = Type.Object({ id: Id('rollout id') }, { additionalProperties: false });
export const RolloutIdBody = Type.Object({ id: Id('rollout id') }, { additionalProperties: false });

export const BulkDevice = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 64 }),
    model: Type.String({ minLength: 1, maxLength: 64 }),
    labels: Type.Optional(Type.Array(Label, { maxItems: 20 })),
  },
  { additionalProperties: false },
);
export const BulkRegisterBody = Type.Object(
  {
    devices: Type.Array(BulkDevice, { minItems: 1, maxItems: 5000 }),
  },
  { additionalProperties: false },
);
export type BulkRegisterBody = Static<typeof BulkRegisterBody>;
export const BulkRegistered = Type.Object(
  {
    code: Type.String(),
    uuid: Type.String(),
    /** Shown once; absent when the code was registered before (a retried import). */
    secret: Type.Optional(Type.String()),
    status: Type.Union([Type.Literal('registered'), Type.Literal('exists')]),
  },
  { additionalProperties: false },
);
export type BulkRegistered = Static<typeof BulkRegistered>;
export const BulkRegisterResponse = Envelope(
  Type.Object({ devices: Type.Array(BulkRegistered) }, { additionalProperties: false }),
);

export const FleetSummary = Type.Object(
  {
    total: Type.Integer(),
    online: Type.Integer(),
    offline: Type.Integer(),
    printer_trouble: Type.Integer(),
    scanner_trouble: Type.Integer(),
    versions: Type.Array(
      Type.Object({ version: Type.String(), boxes: Type.Integer() }, { additionalProperties: false }),
    ),
    labels: Type.Array(
      Type.Object(
        { label: Type.String(), boxes: Type.Integer(), online: Type.Integer() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type FleetSummary = Static<typeof FleetSummary>;
export const FleetSummaryResponse = Envelope(FleetSummary);

export const DeviceHistoryEntry = Type.Object(
  {
    at: Type.Integer(),
    what: Type.String(),
    detail: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type DeviceHistoryEntry = Static<typeof DeviceHistoryEntry>;
export const DeviceHistoryQuery = Type.Object({ uuid: Id('device UUID') }, { additionalProperties: false });
export const DeviceHistoryResponse = Envelope(
  Type.Object({ history: Type.Array(DeviceHistoryEntry) }, { additionalProperties: false }),
);
