// Device control endpoints (docs/api.md, "Device control"). Buzz bounds are boxhub's own: at
// most 10 beeps of 1-5000 ms with a 0-5000 ms gap (default 200), documented in
// docs/control.md.
import Type, { type Static } from 'typebox';
import { Envelope, Id } from './envelope.ts';

export const BUZZ_LIMITS = { maxBeeps: 10, maxBeepMs: 5000, maxGapMs: 5000, defaultGapMs: 200 } as const;

export const ControlBody = Type.Object({ client_uuid: Id('device UUID') }, { additionalProperties: false });
export type ControlBody = Static<typeof ControlBody>;

export const BuzzBody = Type.Object(
  {
    client_uuid: Id('device UUID'),
    buzz: Type.Array(Type.Integer({ minimum: 1, maximum: BUZZ_LIMITS.maxBeepMs }), {
      minItems: 1,
      maxItems: BUZZ_LIMITS.maxBeeps,
      description: 'duration of each beep, ms (1-5000), at most 10 beeps',
    }),
    gap: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: BUZZ_LIMITS.maxGapMs,
        description: 'interval between beeps, ms (0-5000, default 200)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BuzzBody = Static<typeof BuzzBody>;

/** power_ink_flush: `data` is null on success; with 30007 it says when the next flush is allowed. */
export const InkFlushResponse = Envelope(
  Type.Object({
    next_allowed_at: Type.Integer({
      description: 'with code 30007: Unix ms from which the next power ink flush is allowed',
    }),
  }),
);
