// A node that has just started meets a whole fleet reconnecting at once (bench/README.md,
// "reconnect-storm"): the validators of its first box messages are compiled while it starts,
// before it listens (gateway.ts compileAhead; docs/box-protocol.md, "A node starting").
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ack, BoxRequest, BoxState, compileAhead, isCompiled, JobEvent, parseJson, Presence } from '@boxhub/protocol';
import { startTestServer, type TestServer } from '../testing/harness.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

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
