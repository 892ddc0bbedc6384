// The parsed-state cache of devices/view.ts: one entry per box, its last report; a new report is
// parsed anew, the same report is not parsed again, and an older report read late is still read
// right (bench/README.md, "reconnect-storm": kept by report, a storm held two states a box).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsedStatesKept, parseState } from './view.ts';

const row = (uuid: string, at: number, model: string) => ({
  uuid,
  state_at: at,
  state: JSON.stringify({ printer: { connected: true, model }, scanner: { connected: false } }),
});

test('one parsed state per box: a new report replaces the old one, the same report is served as parsed, an old one read late is right', () => {
  const before = parsedStatesKept();
  const first = parseState(row('parsed-box-1', 1, 'first'));
  assert.equal(first?.printer.model, 'first');
  assert.equal(parseState(row('parsed-box-1', 1, 'first')), first, 'the same report: the object already parsed');
  const second = parseState(row('parsed-box-1', 2, 'second'));
  assert.equal(second?.printer.model, 'second');
  parseState(row('parsed-box-2', 1, 'other'));
  assert.equal(parsedStatesKept() - before, 2, 'two boxes, three reports: two kept');
  // A request that read the row before the new report was written still gets its own state.
  assert.equal(parseState(row('parsed-box-1', 1, 'first'))?.printer.model, 'first');
  assert.equal(parsedStatesKept() - before, 2);
  assert.equal(parseState({ uuid: 'parsed-box-3', state_at: 1, state: '{not json' }), undefined);
});
