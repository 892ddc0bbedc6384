// Callback delivery log, test, replay and secret rotation (docs/callbacks.md). The callbacks
// themselves are in docs/api.md, "Callbacks"; these endpoints are boxhub's own.
import Type, { type Static } from 'typebox';
import { Envelope, Id, NullEnvelope } from './envelope.ts';
import { MAX_URL_CHARS } from '../url-length.ts';

export const CallbackUrl = Type.String({
  minLength: 1,
  maxLength: MAX_URL_CHARS,
  description:
    'http or https URL, at most 200 characters (Unicode code points); public addresses only unless the operator allows private networks',
});

export const CallbackTestBody = Type.Object({ callback_url: CallbackUrl }, { additionalProperties: false });
export type CallbackTestBody = Static<typeof CallbackTestBody>;
export const CallbackTestResponse = Envelope(
  Type.Object({ id: Type.String({ description: 'callback id (X-SVC-Callback-ID) of the test event' }) }),
);

export const CallbackStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);

export const CallbackListQuery = Type.Object(
  {
    page: Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: 'page number, 1-1000; 20 callbacks per page, newest first',
    }),
    status: Type.Optional(CallbackStatus),
    task_uuid: Type.Optional(Id('only callbacks of this task')),
  },
  { additionalProperties: false },
);
export type CallbackListQuery = Static<typeof CallbackListQuery>;

export const CallbackAttempt = Type.Object(
  {
    at: Type.Integer({ description: 'attempt start, Unix ms' }),
    latency_ms: Type.Integer(),
    status_code: Type.Optional(Type.Integer({ description: 'HTTP status of the answer, if one arrived in time' })),
    error: Type.Optional(Type.String({ description: 'why the attempt failed' })),
  },
  { additionalProperties: false },
);

export const CallbackView = Type.Object(
  {
    id: Type.String(),
    event: Type.String(),
    url: Type.String(),
    method: Type.Union([Type.Literal('POST'), Type.Literal('PUT')]),
    task_uuid: Type.Optional(Type.String()),
    status: CallbackStatus,
    waiting_for: Type.Optional(Type.String({ description: 'group of callbacks this one waits for' })),
    created_at: Type.Integer({ description: 'Unix ms' }),
    next_attempt_at: Type.Optional(Type.Integer({ description: 'Unix ms, while pending' })),
    completed_at: Type.Optional(Type.Integer({ description: 'Unix ms, once delivered or failed' })),
    attempts: Type.Array(CallbackAttempt),
  },
  { additionalProperties: false },
);
export type CallbackView = Static<typeof CallbackView>;

export const CallbackList = Type.Object(
  {
    page: Type.Integer(),
    page_size: Type.Integer(),
    total: Type.Integer(),
    callbacks: Type.Array(CallbackView),
  },
  { additionalProperties: false },
);
export type CallbackList = Static<typeof CallbackList>;
export const CallbackListResponse = Envelope(CallbackList);

export const CallbackReplayBody = Type.Object({ id: Id('callback id') }, { additionalProperties: false });

export const RotateSecretBody = Type.Object({}, { additionalProperties: false });
export const RotateSecretResult = Type.Object(
  {
    callback_secret: Type.String({ description: 'the new whsec_ secret; shown once' }),
    previous_secret_expires_at: Type.Integer({ description: 'Unix ms until which the previous secret also signs' }),
  },
  { additionalProperties: false },
);
export type RotateSecretResult = Static<typeof RotateSecretResult>;
export const RotateSecretResponse = Envelope(RotateSecretResult);

export { NullEnvelope as CallbackNullEnvelope };
