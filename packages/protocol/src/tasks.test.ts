// The transition table is data: tested row by row, and docs/tasks.md says the same thing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  ACTIVE_STATES,
  NoTransition,
  sourcesOf,
  targetOf,
  TaskKind,
  TaskState,
  TaskTrigger,
  transition,
  TRANSITIONS,
} from './tasks.ts';

test('docs/tasks.md lists every transition as the code has it, and nothing else', () => {
  const doc = readFileSync(new URL('../../../docs/tasks.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z.]+)` \| ([a-z, ]+) \| ([a-z, ]+) \| \(?([a-z]+)\)? \| (.+) \|$/gm)].map(
    (m) => `${m[1]} | ${m[2]} | ${m[3]} | ${m[4]}`,
  );
  const code = TRANSITIONS.map(
    (t) =>
      `${t.trigger} | ${t.kinds.join(', ')} | ${t.trigger === 'expire' ? 'any' : t.from.join(', ')} | ${t.trigger === 'expire' ? 'destroyed' : t.to}`,
  );
  assert.deepEqual(rows, code);
});

test('each (kind, state, trigger) has at most one row', () => {
  for (const kind of TaskKind)
    for (const from of TaskState) {
      for (const t of new Set(TRANSITIONS.map((x) => x.trigger))) {
        const n = TRANSITIONS.filter((x) => x.trigger === t && x.kinds.includes(kind) && x.from.includes(from)).length;
        assert.ok(n <= 1, `${kind} ${from} ${t}: ${n} rows`);
      }
    }
});

test('nothing leaves ended but expiry; a scan is never started; a print ends by cancel or its end', () => {
  for (const t of TRANSITIONS) if (t.trigger !== 'expire') assert.ok(!t.from.includes('ended'), t.trigger);
  assert.equal(transition('scan', 'received', 'print.started'), undefined);
  assert.equal(transition('print', 'received', 'scan.stop'), undefined);
  assert.equal(transition('print', 'started', 'print.cancel')?.to, 'ended');
  assert.equal(transition('scan', 'created', 'box.ack')?.to, 'received');
  assert.equal(transition('scan', 'ended', 'scan.stop'), undefined, 'a second stop changes nothing');
  assert.deepEqual(sourcesOf('scan', 'scan.stop').sort(), ['created', 'received']);
  assert.deepEqual([...ACTIVE_STATES], ['created', 'received', 'started']);
});

test('a trigger has one target state per kind, and a trigger without a row for the kind throws', () => {
  for (const kind of TaskKind)
    for (const trigger of TaskTrigger) {
      const targets = new Set(
        TRANSITIONS.filter((t) => t.trigger === trigger && t.kinds.includes(kind)).map((t) => t.to),
      );
      assert.ok(targets.size <= 1, `${kind} ${trigger}: ${[...targets].join(', ')}`);
      if (targets.size === 1) assert.equal(targetOf(kind, trigger), [...targets][0]);
      else assert.throws(() => targetOf(kind, trigger), NoTransition, `${kind} ${trigger}`);
    }
  assert.equal(targetOf('print', 'print.started'), 'started');
  assert.equal(targetOf('recognition', 'recognition.bound'), 'received');
  assert.throws(() => targetOf('scan', 'print.started'), /no row for trigger 'print.started' of a scan task/);
  assert.throws(() => targetOf('recognition', 'box.ack'), NoTransition);
});
