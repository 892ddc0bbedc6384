// The SDK cannot drift from the API: its generated sources must be exactly what the generator
// makes from a running server's /openapi.json (and the error catalogs), every operation of that
// document must have an SDK method, and every callback event a parser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startTestServer } from '@boxhub/server/testing/harness.ts';
import { Boxhub, operations, SDK_VERSION } from '@boxhub/sdk';
import { fetchOpenApi, generateFiles, GENERATED_DIR } from '../scripts/generate.ts';

test("the committed generated sources are what the running server's /openapi.json gives", async () => {
  const server = await startTestServer();
  try {
    const document = await fetchOpenApi(server.url);
    const files = await generateFiles(document);
    assert.deepEqual(Object.keys(files).sort(), ['callback-schemas.ts', 'error-codes.ts', 'openapi.ts']);
    for (const [name, expected] of Object.entries(files)) {
      const committed = await readFile(new URL(name, GENERATED_DIR), 'utf8');
      assert.ok(
        committed === expected,
        `packages/sdk/src/generated/${name} is out of date: run \`npm run sdk:generate\` and commit the result`,
      );
    }

    // Every operation the server documents has its SDK method, and no method names a gone one.
    const live = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    assert.deepEqual(Object.keys(operations).sort(), live);
    const sdk = new Boxhub({ baseUrl: server.url, apiKey: 'unused' }) as unknown as Record<
      string,
      Record<string, unknown>
    >;
    for (const [op, method] of Object.entries(operations)) {
      const [resource, name] = method.split('.') as [string, string];
      assert.equal(typeof sdk[resource]?.[name], 'function', `${op}: boxhub.${method} is missing`);
    }
  } finally {
    await server.close();
  }
});

test('the User-Agent names the package version', async () => {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(SDK_VERSION, pkg.version);
});
