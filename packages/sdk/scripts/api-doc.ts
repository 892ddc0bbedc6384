// Renders the field tables of docs/api.md from the OpenAPI document the server serves, so the
// doc cannot drift from the API. The prose of docs/api.md is written by hand; each table sits
// between markers that name its operation or callback event:
//
//   <!-- fields: POST /api/scan/create -->  …request and response tables…  <!-- /fields -->
//   <!-- fields: callback scan.finish -->   …body table…                    <!-- /fields -->
//
// Run from the repository root: `npm run docs:api` (starts a server of its own on free ports,
// embedded engines) or `npm run docs:api -- --url http://127.0.0.1:8080`.
// test/api-doc.test.ts fails while docs/api.md differs from what this renders, or while an
// operation or event of the document has no section.
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { openApiOf } from './generate.ts';

export const API_DOC = new URL('../../../docs/api.md', import.meta.url);

/** The parts of JSON Schema (as TypeBox writes it) that the tables show. */
export interface Schema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
}

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
export interface ApiDocument {
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
}

interface Row {
  field: string;
  type: string;
  required: boolean;
  description: string;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const isNull = (s: Schema) => s.type === 'null';

/** A schema's values, as the tables write them: `enum` and `const` lists, else type and bounds. */
function typeText(s: Schema): string {
  const variants = s.anyOf?.filter((v) => !isNull(v));
  const nullable = (s.anyOf?.length ?? 0) > (variants?.length ?? 0) ? ' or null' : '';
  if (variants?.every((v) => v.enum?.length === 1 || v.const !== undefined)) {
    return `${variants.map((v) => `\`${String(v.const ?? v.enum?.[0])}\``).join(', ')}${nullable}`;
  }
  if (variants) return `${[...new Set(variants.map(typeText))].join(' or ')}${nullable}`;
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(', ');
  if (s.const !== undefined) return `\`${String(s.const)}\``;
  const type = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  if (type === 'array') {
    const count = bounds(s.minItems, s.maxItems, ' items');
    return `array of ${s.items ? typeText(s.items) : 'any'}${count ? ` (${count})` : ''}`;
  }
  const range = type === 'string' ? bounds(s.minLength, s.maxLength, ' chars') : bounds(s.minimum, s.maximum, '');
  return range ? `${type}, ${range}` : type;
}

function bounds(min: number | undefined, max: number | undefined, unit: string): string {
  if (min !== undefined && max !== undefined) return `${min}-${max}${unit}`;
  if (max !== undefined) return `≤ ${max}${unit}`;
  if (min !== undefined && min > 0) return `≥ ${min}${unit}`;
  return '';
}

/** The object schema inside `s`, if any: itself, or its one non-null object variant. */
function objectOf(s: Schema): Schema | undefined {
  if (s.properties) return s;
  const objects = s.anyOf?.filter((v) => v.properties) ?? [];
  return objects.length === 1 ? objects[0] : undefined;
}

/** One row per field, nested objects as `a.b`, arrays of objects as `a[].b`. */
function rows(schema: Schema, prefix = ''): Row[] {
  const out: Row[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const field = `${prefix}${name}`;
    out.push({ field, type: typeText(prop), required: required.has(name), description: prop.description ?? '' });
    const nested = objectOf(prop);
    if (nested) out.push(...rows(nested, `${field}.`));
    const item = prop.items ? objectOf(prop.items) : undefined;
    if (item) out.push(...rows(item, `${field}[].`));
  }
  return out;
}

function table(list: Row[]): string {
  return [
    '| Field | Type | Required | Meaning |',
    '|---|---|---|---|',
    ...list.map((r) => `| \`${r.field}\` | ${cell(r.type)} | ${r.required ? 'yes' : 'no'} | ${cell(r.description)} |`),
  ].join('\n');
}

function requestText(op: Operation): string {
  const query = (op.parameters ?? []).filter((p) => p.in === 'query');
  const body = op.requestBody?.content?.['application/json']?.schema;
  if (query.length > 0) {
    return `Query:\n\n${table(
      query.map((p) => ({
        field: p.name,
        type: typeText(p.schema),
        required: p.required === true,
        description: p.description ?? p.schema.description ?? '',
      })),
    )}`;
  }
  const fields = body ? rows(body) : [];
  if (fields.length > 0) return `Body (JSON):\n\n${table(fields)}`;
  return body ? 'Body (JSON): `{}`, no fields.' : 'No parameters.';
}

function responseText(op: Operation): string {
  const envelope = op.responses?.['200']?.content?.['application/json']?.schema;
  const data = envelope?.properties?.data;
  const object = data ? objectOf(data) : undefined;
  if (!object) return 'Response `data`: null.';
  const fields = rows(object);
  return fields.length > 0 ? `Response \`data\`:\n\n${table(fields)}` : 'Response `data`: `{}`.';
}

/** The rendered block of every operation (`POST /api/scan/create`) and callback (`callback scan.finish`). */
export function renderSections(document: ApiDocument): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      out.set(`${method.toUpperCase()} ${path}`, `${requestText(op)}\n\n${responseText(op)}`);
    }
  }
  for (const [event, item] of Object.entries(document.webhooks ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      out.set(`callback ${event}`, `${method.toUpperCase()}, body (JSON):\n\n${table(body ? rows(body) : [])}`);
    }
  }
  return out;
}

const MARKER = /<!-- fields: ([^>]+?) -->\n[\s\S]*?<!-- \/fields -->/g;

/**
 * docs/api.md with every marked block rendered anew; `missing` names the operations and events
 * the doc has no block for, `unknown` the blocks naming none.
 */
export function renderDoc(text: string, document: ApiDocument): { text: string; missing: string[]; unknown: string[] } {
  const sections = renderSections(document);
  const seen = new Set<string>();
  const unknown: string[] = [];
  const rendered = text.replace(MARKER, (whole, key: string) => {
    const block = sections.get(key);
    if (block === undefined) {
      unknown.push(key);
      return whole;
    }
    seen.add(key);
    return `<!-- fields: ${key} -->\n${block}\n<!-- /fields -->`;
  });
  return { text: rendered, missing: [...sections.keys()].filter((k) => !seen.has(k)), unknown };
}

async function main(argv: string[]): Promise<void> {
  const document = await openApiOf<ApiDocument>(argv);
  const result = renderDoc(await readFile(API_DOC, 'utf8'), document);
  await writeFile(API_DOC, result.text);
  process.stdout.write('wrote docs/api.md\n');
  for (const k of result.missing) {
    process.stdout.write(`no section in docs/api.md for ${k}: add <!-- fields: ${k} --><!-- /fields -->\n`);
  }
  for (const k of result.unknown) process.stdout.write(`docs/api.md names ${k}, which /openapi.json does not have\n`);
  if (result.missing.length + result.unknown.length > 0) process.exitCode = 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(process.argv.slice(2));
