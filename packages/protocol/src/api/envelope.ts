import Type, { type TSchema } from 'typebox';

/**
 * The response envelope of every /api endpoint (docs/api.md, "Conventions"). `data` admits null in
 * every schema, or the serializer would print an error's `data: null` as `{}`.
 */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({
    code: Type.Integer({ description: '0 on success; see docs/errors.md' }),
    msg: Type.String(),
    data: Type.Union([data, Type.Null()]),
  });

export const NullEnvelope = Type.Object({
  code: Type.Integer({ description: '0 on success; see docs/errors.md' }),
  msg: Type.String(),
  data: Type.Null(),
});

/** Identifiers that the service issued: bounded so a hostile value is rejected early. */
export const Id = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });
