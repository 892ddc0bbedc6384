// A node that has just started meets a whole fleet reconnecting at once (bench/README.md,
// "reconnect-storm"): what its first answers and first box messages would compile lazily is
// compiled while it starts, before it listens (app.ts serializerOpts, gateway.ts compileAhead).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { Ack, BoxRequest, BoxState, compileAhead, isCompiled, JobEvent, parseJson, Presence } from '@boxhub/protocol';
import { startTestServer, type TestServer } from '../testing/harness.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

/** Counts the schemas Ajv compiles while `run` runs (every Ajv instance: Fastify's validators
 *  and fast-json-stringify's, which checks the branches of a response's unions with Ajv). */
async function ajvCompilesDuring(run: () => Promise<void>): Promise<number> {
  const proto = Ajv.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const own = Object.hasOwn(proto, '_compileSchemaEnv');
  const original = proto._compileSchemaEnv!;
  let n = 0;
  proto._compileSchemaEnv = function (this: unknown, ...a: unknown[]) {
    n++;
    return original.apply(this, a);
  };
  try {
    await run();
  } finally {
    if (own) proto._compileSchemaEnv = original;
    else delete proto._compileSchemaEnv;
  }
  return n;
}

test("a node's first answers compile no schema: a response's union validators are compiled with its route", async () => {
  const { api } = await t.createApp();
  const d = await t.registerDevice();
  assert.equal((await api.post('/api/client/bind', { uuid: d.uuid, name: 'Room 1' })).code, 0);
  // The first `info` of this node, and the first device list.
  const compiles = await ajvCompilesDuring(async () => {
    assert.equal((await api.get('/api/client/info', { uuid: d.uuid })).code, 0);
    assert.equal((await api.get('/api/client/list', { page: 1 })).code, 0);
  });
  assert.equal(compiles, 0);
});

test("a node's box-link compiles the validators of every kind of box message as it starts", () => {
  for (const schema of [Presence, BoxState, JobEvent, BoxRequest, Ack]) assert.ok(isCompiled(schema));
});

test('compileAhead compiles a schema before its first message, and parseJson uses that validator', () => {
  const schema = { ...BoxState };
  assert.equal(isCompiled(schema), false);
  compileAhead(schema);
  assert.equal(isCompiled(schema), true);
  assert.equal(parseJson(schema, '{"nope":1}').ok, false);
});
