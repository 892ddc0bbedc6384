// docs/api.md cannot drift from the API: its field tables must be exactly what the generator
// renders from the running server's /openapi.json, and every operation and callback event of
// that document must have its section (docs/api.md says how the tables are made).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startTestServer } from '@boxhub/server/testing/harness.ts';
import { API_DOC, renderDoc, renderSections, type ApiDocument } from '../scripts/api-doc.ts';
import { fetchOpenApi } from '../scripts/generate.ts';

test('docs/api.md has a section for every operation and callback, with the tables /openapi.json gives', async () => {
  const server = await startTestServer();
  try {
    const document = await fetchOpenApi<ApiDocument>(server.url);
    assert.ok(renderSections(document).size > 50, 'the document has its operations and callbacks');
    const committed = await readFile(API_DOC, 'utf8');
    const { text, missing, unknown } = renderDoc(committed, document);
    assert.deepEqual(missing, [], 'operations and callbacks without a `<!-- fields: … -->` section in docs/api.md');
    assert.deepEqual(unknown, [], 'sections of docs/api.md naming what /openapi.json does not have');
    assert.ok(text === committed, 'the tables of docs/api.md are out of date: run `npm run docs:api` and commit it');
  } finally {
    await server.close();
  }
});

const NULL_DATA = { anyOf: [{ type: 'null' }] };

test('a table is rendered from the schema: nested fields, bounds, enums, required', () => {
  const sections = renderSections({
    paths: {
      '/api/x': {
        post: {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['a'],
                  properties: {
                    a: { type: 'string', maxLength: 200, description: 'an | address' },
                    o: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 10 } } },
                    e: {
                      anyOf: [
                        { type: 'number', enum: [0] },
                        { type: 'number', enum: [1] },
                      ],
                    },
                  },
                },
              },
            },
          },
          responses: { 200: { content: { 'application/json': { schema: { properties: { data: NULL_DATA } } } } } },
        },
      },
    },
  });
  assert.equal(
    sections.get('POST /api/x'),
    [
      'Body (JSON):',
      '',
      '| Field | Type | Required | Meaning |',
      '|---|---|---|---|',
      '| `a` | string, ≤ 200 chars | yes | an \\| address |',
      '| `o` | object | no |  |',
      '| `o.n` | integer, 1-10 | no |  |',
      '| `e` | `0`, `1` | no |  |',
      '',
      'Response `data`: null.',
    ].join('\n'),
  );
});

test('a section naming an operation the document does not have is reported, and its text kept', () => {
  const doc = '<!-- fields: GET /api/gone -->\nold\n<!-- /fields -->\n';
  const result = renderDoc(doc, { paths: {} });
  assert.deepEqual(result.unknown, ['GET /api/gone']);
  assert.equal(result.text, doc);
});
