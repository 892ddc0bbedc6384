// Every task kind is one declaration (docs/tasks.md, "Adding a task kind"), and what it declares
// is what runs: on a started server, every declared box event, box request and job of every
// kind has its handler registered (the job runner refuses a second handler for a declared job);
// between them the kinds declare every box event, request and job command of the protocol and
// every row of the transition table, each once; a declaration whose handlers do not match is
// refused when the server builds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, BoxRequestParams, JobCommandParams, JobEventData, TaskKind, TRANSITIONS } from '@boxhub/protocol';
import { startTestServer } from '../testing/harness.ts';
import { checkWiring, TASK_KINDS } from './kinds.ts';

test('a started server has a handler for every event, request and job every kind declares', async () => {
  const t = await startTestServer();
  try {
    const { kinds, lifecycle } = t.server.services;
    assert.deepEqual(
      [...kinds.wiring.keys()],
      TASK_KINDS.map((k) => k.kind),
    );
    for (const k of TASK_KINDS) {
      const w = kinds.wiring.get(k.kind)!;
      assert.doesNotThrow(() => checkWiring(k, w));
      for (const e of k.events) assert.equal(typeof w.events[e], 'function', `${k.kind}: ${e}`);
      for (const q of k.requests) assert.equal(typeof w.requests[q], 'function', `${k.kind}: ${q}`);
      for (const job of k.jobs) {
        assert.ok(
          kinds.jobs.some((h) => h.kind === job),
          `${k.kind}: ${job} handed to the runner`,
        );
        assert.throws(
          () =>
            t.server.jobRunner.register({ kind: job, concurrency: 1, leaseMs: 1, run: async () => ({ next: 'done' }) }),
          /registered already/,
          `${k.kind}: the runner has ${job}`,
        );
      }
      assert.equal(typeof w.hooks.end, 'function');
    }
    assert.ok(lifecycle, 'the lifecycle holds the hooks');
  } finally {
    await t.close();
  }
});

test("the kinds between them declare the protocol's box events, requests, job commands and transition rows, each once", () => {
  const all = <T extends string>(pick: (k: (typeof TASK_KINDS)[number]) => readonly T[]) =>
    TASK_KINDS.flatMap((k) => [...pick(k)]).sort();
  assert.deepEqual(TASK_KINDS.map((k) => k.kind).sort(), [...TaskKind].sort(), 'one declaration per task kind');
  assert.deepEqual(
    all((k) => k.events),
    Object.keys(JobEventData).sort(),
  );
  assert.deepEqual(
    all((k) => k.requests),
    Object.keys(BoxRequestParams).sort(),
  );
  // events.ack and reply belong to the box link itself, not to a kind.
  assert.deepEqual(
    all((k) => k.commands),
    Object.keys(JobCommandParams)
      .filter((c) => c !== 'events.ack' && c !== 'reply')
      .sort(),
  );
  for (const k of TASK_KINDS) {
    assert.deepEqual(
      k.transitions,
      TRANSITIONS.filter((t) => t.kinds.includes(k.kind)),
      `${k.kind}: its rows of the table`,
    );
    for (const e of k.events) assert.ok(e.startsWith(`${k.kind}.`), `${k.kind} declares ${e}`);
    for (const c of k.callbacks) assert.ok(c.startsWith(`${k.kind}.`), `${k.kind} sends ${c}`);
  }
  // Every callback event of a task kind is declared by its kind.
  for (const name of Object.keys(api.callbackEvents)) {
    const kind = TASK_KINDS.find((k) => name.startsWith(`${k.kind}.`));
    if (kind) assert.ok(kind.callbacks.includes(name), `${kind.kind} declares its callback ${name}`);
  }
  assert.equal(new Set(all((k) => k.jobs)).size, all((k) => k.jobs).length, 'no job kind declared twice');
});

test('a declaration whose handlers do not match it is refused', () => {
  const [scan] = TASK_KINDS;
  const hooks = { end: async () => undefined, dropOnBox: async () => undefined };
  assert.throws(
    () => checkWiring(scan, { hooks, events: { 'scan.item': async () => undefined }, requests: {}, jobs: [] }),
    /task kind scan: box events declared without a handler: scan.finished/,
  );
  assert.throws(
    () =>
      checkWiring(
        { ...scan, events: [], requests: [] },
        { hooks, events: { 'scan.item': async () => undefined }, requests: {}, jobs: [] },
      ),
    /task kind scan: box events handled but not declared: scan.item/,
  );
  assert.throws(
    () =>
      checkWiring(
        { ...scan, events: [], requests: [], jobs: ['scan.tidy'] },
        { hooks, events: {}, requests: {}, jobs: [] },
      ),
    /task kind scan: jobs declared without a handler: scan.tidy/,
  );
  assert.throws(
    () =>
      checkWiring(
        { ...scan, events: [], requests: [], jobs: [] },
        { hooks, events: {}, checks: { 'scan.item': async () => undefined }, requests: {}, jobs: [] },
      ),
    /task kind scan: checks of box events not declared: scan.item/,
  );
});
