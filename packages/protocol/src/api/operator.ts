// The operator API (boxhub's own; docs/api.md, "Operator API"): what `boxhub app` and `boxhub device` do,
// over HTTP, for operators who run the service remotely. Authenticated with
// `Authorization: Bearer <BOXHUB_OPERATOR_TOKEN>` (docs/configuration.md "Credentials").
import Type, { type Static } from 'typebox';
import { Client } from './devices.ts';
import { Envelope, Id } from './envelope.ts';

const KeyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  description: 'operator\'s name for the key, e.g. "production" or "ci"',
});

export const OperatorAppCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    ess: Type.Optional(Type.Boolean({ description: 'allow feedback-card recognition (20005 otherwise)' })),
  },
  { additionalProperties: false },
);
export const OperatorAppCreated = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    api_key: Type.String({ description: 'shown once' }),
    key_id: Type.String(),
    callback_secret: Type.String({ description: 'shown once' }),
    ess: Type.Boolean(),
  },
  { additionalProperties: false },
);
export const OperatorAppCreateResponse = Envelope(OperatorAppCreated);

export const ApiKeyView = Type.Object(
  {
    id: Type.String(),
    app_id: Type.String(),
    name: Type.String(),
    prefix: Type.String({ description: 'first characters of the key, to tell keys apart' }),
    created_at: Type.Integer({ description: 'Unix ms' }),
    last_used_at: Type.Optional(
      Type.Integer({ description: 'Unix ms of the last authenticated request, to the minute' }),
    ),
    revoked_at: Type.Optional(Type.Integer({ description: 'Unix ms; a revoked key never works again' })),
  },
  { additionalProperties: false },
);
export const KeyListQuery = Type.Object({ app_id: Id('application id') }, { additionalProperties: false });
export const KeyListResponse = Envelope(Type.Object({ keys: Type.Array(ApiKeyView) }, { additionalProperties: false }));

export const KeyCreateBody = Type.Object(
  { app_id: Id('application id'), name: KeyName },
  { additionalProperties: false },
);
export const KeyIdBody = Type.Object({ key_id: Id('API key id (from key/list)') }, { additionalProperties: false });
export type KeyIdBody = Static<typeof KeyIdBody>;
export const CreatedApiKey = Type.Object(
  {
    id: Type.String(),
    app_id: Type.String(),
    name: Type.String(),
    api_key: Type.String({ description: 'shown once' }),
  },
  { additionalProperties: false },
);
export const CreatedApiKeyResponse = Envelope(CreatedApiKey);

export const DeviceRegisterBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 64, description: 'the code on the box label' }),
    model: Type.String({ minLength: 1, maxLength: 64 }),
  },
  { additionalProperties: false },
);
export const DeviceUuidBody = Type.Object({ uuid: Id('device UUID') }, { additionalProperties: false });
export const DeviceCredentials = Type.Object(
  {
    uuid: Type.String(),
    code: Type.String(),
    secret: Type.String({ description: 'shown once; the box agent logs in with it' }),
  },
  { additionalProperties: false },
);
export const DeviceCredentialsResponse = Envelope(DeviceCredentials);

const OperatorPage = Type.Integer({ minimum: 1, maximum: 100_000, description: 'page number from 1' });
export const OperatorListQuery = Type.Object({ page: OperatorPage }, { additionalProperties: false });

export const OperatorAppSummary = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    ess: Type.Boolean({ description: 'may use feedback-card recognition' }),
    created_at: Type.Integer({ description: 'Unix ms' }),
    active_keys: Type.Integer({ description: 'API keys not revoked' }),
    devices: Type.Integer({ description: 'boxes bound to it' }),
  },
  { additionalProperties: false },
);
export const OperatorAppListResponse = Envelope(
  Type.Object(
    {
      page: Type.Integer(),
      page_size: Type.Integer(),
      total: Type.Integer(),
      applications: Type.Array(OperatorAppSummary),
    },
    { additionalProperties: false },
  ),
);

export const OperatorDeviceView = Type.Object(
  {
    client: Client,
    model: Type.String({ description: 'the model it was registered with' }),
    app_id: Type.Union([Type.String(), Type.Null()], { description: 'the application it is bound to, or null' }),
    app_name: Type.Union([Type.String(), Type.Null()]),
    registered_at: Type.Integer({ description: 'Unix ms' }),
    secret_revoked: Type.Boolean({
      description: 'its secret was revoked: it cannot log in until the secret is rotated',
    }),
  },
  { additionalProperties: false },
);
export const OperatorDeviceListResponse = Envelope(
  Type.Object(
    {
      page: Type.Integer(),
      page_size: Type.Integer(),
      total: Type.Integer(),
      devices: Type.Array(OperatorDeviceView),
    },
    { additionalProperties: false },
  ),
);
