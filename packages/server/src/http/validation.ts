// Request validation. Bodies are checked strictly: no type coercion ("2" is not 2), unknown
// fields rejected, every error reported (Fastify's defaults coerce and drop silently).
// Query strings are text by nature, so only they are converted, and only from exact forms:
// "2" → 2, never "2abc", "0x2", "2e0", "+2", "02" or " 2" (Ajv's own coercion takes anything
// Number() takes, so it is not used).
import { ApiError } from '@boxhub/protocol';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import type { Static, TSchema } from 'typebox';

const base = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: false,
  strict: true,
  strictRequired: false,
} as const;
const strictAjv = new Ajv({ ...base, coerceTypes: false });

const EXACT: Record<string, { form: RegExp; value: (s: string) => unknown }> = {
  integer: { form: /^-?(0|[1-9]\d{0,15})$/, value: Number },
  number: { form: /^-?(0|[1-9]\d{0,15})(\.\d{1,15})?$/, value: Number },
  boolean: { form: /^(true|false)$/, value: (s) => s === 'true' },
};

/** Converts the query fields the schema types as integer, number or boolean, when written exactly. */
function exactQueryForms(schema: {
  properties?: Record<string, { type?: unknown }>;
}): (q: Record<string, unknown>) => void {
  const fields = Object.entries(schema.properties ?? {}).flatMap(([name, p]) => {
    const t = typeof p.type === 'string' ? EXACT[p.type] : undefined;
    return t ? [[name, t] as const] : [];
  });
  return (q) => {
    for (const [name, t] of fields) {
      const v = q[name];
      if (typeof v === 'string' && t.form.test(v)) q[name] = t.value(v);
    }
  };
}

type SchemaNode = {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  allOf?: SchemaNode[];
};

/** Where else in `schema` a field of this name is accepted ("options", "options.media"), so an
 *  unknown field can name the place it belongs (callback_url at the top of a scan create). */
export function placesOf(schema: SchemaNode, name: string, at = '', depth = 0, out: string[] = []): string[] {
  if (!schema || typeof schema !== 'object' || depth > 6 || out.length >= 3) return out;
  if (at && schema.properties?.[name]) out.push(at);
  for (const [key, sub] of Object.entries(schema.properties ?? {}))
    placesOf(sub, name, at ? `${at}.${key}` : key, depth + 1, out);
  for (const alt of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    placesOf(alt, name, at, depth + 1, out);
  if (schema.items) placesOf(schema.items, name, at, depth + 1, out);
  return [...new Set(out)];
}

/** Adds `params.belongsIn` to unknown-field errors whose field the schema takes elsewhere. */
function withPlaces(validate: ValidateFunction, schema: SchemaNode): ValidateFunction {
  const wrapped = Object.assign(
    (data: unknown): data is unknown => {
      const ok = validate(data);
      wrapped.errors = validate.errors;
      for (const e of validate.errors ?? []) {
        if (e.keyword !== 'additionalProperties') continue;
        const params: Record<string, unknown> = e.params;
        const field = String(params.additionalProperty);
        const here = (e.instancePath ?? '').split('/').filter(Boolean).join('.');
        const places = placesOf(schema, field).filter((p) => p !== here);
        if (places.length) params.belongsIn = places;
      }
      return ok;
    },
    { schema: validate.schema, schemaEnv: validate.schemaEnv, errors: validate.errors },
  );
  return wrapped;
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const validate = withPlaces(strictAjv.compile(schema), schema);
  if (httpPart !== 'querystring' && httpPart !== 'params') return validate;
  const convert = exactQueryForms(schema);
  const wrapped = Object.assign(
    (data: Record<string, unknown>): boolean => {
      if (data && typeof data === 'object') convert(data);
      const ok = validate(data);
      wrapped.errors = validate.errors;
      return ok;
    },
    { errors: validate.errors },
  );
  return wrapped;
};

/** One readable sentence per problem: "body.uuid must be string; body has unknown field 'x'". */
export function describeValidation(part: string, errors: ErrorObject[] | Partial<ErrorObject>[]): string {
  const where = part === 'querystring' ? 'query' : part;
  const lines = errors.slice(0, 5).map((e) => {
    const path = (e.instancePath ?? '').split('/').filter(Boolean).join('.');
    const at = path ? `${where}.${path}` : where;
    const p: Record<string, unknown> = e.params ?? {};
    switch (e.keyword) {
      case 'additionalProperties': {
        const places = (Array.isArray(p.belongsIn) ? p.belongsIn.map(String) : []).map((x) => `${where}.${x}`);
        return `${at} has unknown field '${String(p.additionalProperty)}'${places.length ? ` (it belongs in ${places.join(' or ')})` : ''}`;
      }
      case 'required':
        return `${at} is missing required field '${String(p.missingProperty)}'`;
      case 'enum': {
        const allowed: unknown[] = Array.isArray(p.allowedValues) ? p.allowedValues : [];
        return `${at} must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
      }
      case 'pattern':
        return `${at} must not be blank`;
      default:
        return `${at} ${e.message ?? 'is invalid'}`;
    }
  });
  const more = errors.length > 5 ? `; and ${errors.length - 5} more` : '';
  return [...new Set(lines)].join('; ') + more;
}

const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Checks a body built elsewhere than the API's JSON parser (the web console's forms) against the
 * API's schema for it, with the same rules and the same message (10001) the API gives.
 */
export function checkBody<S extends TSchema>(schema: S, body: unknown): Static<S> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = withPlaces(strictAjv.compile(schema), schema);
    compiled.set(schema, validate);
  }
  if (!conforms(validate, schema, body))
    throw new ApiError('INVALID_PARAMETER', describeValidation('body', validate.errors ?? []));
  return body;
}

/** The check that `validate`, compiled from `schema`, passes `body`: so `body` is of the schema's type. */
function conforms<S extends TSchema>(validate: ValidateFunction, _schema: S, body: unknown): body is Static<S> {
  return validate(body);
}
