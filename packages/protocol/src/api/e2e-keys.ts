// The application's public keys for end-to-end encrypted scans (docs/encryption.md, "Keys").
// boxhub's own endpoints (docs/api.md, "End-to-end keys").
import Type, { type Static } from 'typebox';
import { Envelope } from './envelope.ts';

export const E2eKeyRegisterBody = Type.Object(
  {
    public_key: Type.String({
      minLength: 43,
      maxLength: 64,
      description: 'raw X25519 public key: 64 hex digits or 43 base64url characters',
    }),
  },
  { additionalProperties: false },
);
export type E2eKeyRegisterBody = Static<typeof E2eKeyRegisterBody>;

export const E2eKeyView = Type.Object(
  {
    kid: Type.String({ description: 'key id: first 8 bytes of SHA-256 of the raw public key, hex' }),
    public_key: Type.String({ description: 'raw X25519 public key, hex' }),
    created_at: Type.Integer({ description: 'Unix ms' }),
    current: Type.Boolean({ description: 'scans created now are encrypted to this key' }),
    retired_at: Type.Optional(
      Type.Integer({ description: 'Unix ms when a newer key replaced it; tasks created before still use it' }),
    ),
  },
  { additionalProperties: false },
);
export type E2eKeyView = Static<typeof E2eKeyView>;
export const E2eKeyResponse = Envelope(E2eKeyView);

export const E2eKeyList = Type.Object({ keys: Type.Array(E2eKeyView) }, { additionalProperties: false });
export type E2eKeyList = Static<typeof E2eKeyList>;
export const E2eKeyListResponse = Envelope(E2eKeyList);
