// Request validation. Bodies are checked strictly: no type coercion ("2" is not 2), unknown
// fields rejected, every error reported (Fastify's defaults coerce and drop silently).
// Query strings are text by nature, so only they are coerced, and only from exact forms
// ("2" → 2, never "2abc").
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const base = { allErrors: true, removeAdditional: false, useDefaults: false, strict: true, strictRequired: false } as const;
const strictAjv = new Ajv({ ...base, coerceTypes: false });
const queryAjv = new Ajv({ ...base, coerceTypes: true });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'querystring' || httpPart === 'params' ? queryAjv : strictAjv;
  return ajv.compile(schema) as ReturnType<FastifySchemaCompiler<object>>;
};

/** One readable sentence per problem: "body.uuid must be string; body has unknown field 'x'". */
export function describeValidation(part: string, errors: ErrorObject[] | Partial<ErrorObject>[]): string {
  const where = part === 'querystring' ? 'query' : part;
  const lines = errors.slice(0, 5).map((e) => {
    const path = (e.instancePath ?? '').split('/').filter(Boolean).join('.');
    const at = path ? `${where}.${path}` : where;
    const p = (e.params ?? {}) as Record<string, unknown>;
    switch (e.keyword) {
      case 'additionalProperties': return `${at} has unknown field '${String(p.additionalProperty)}'`;
      case 'required': return `${at} is missing required field '${String(p.missingProperty)}'`;
      case 'enum': return `${at} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      case 'pattern': return `${at} must not be blank`;
      default: return `${at} ${e.message ?? 'is invalid'}`;
    }
  });
  const more = errors.length > 5 ? `; and ${errors.length - 5} more` : '';
  return [...new Set(lines)].join('; ') + more;
}
