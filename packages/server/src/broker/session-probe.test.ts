// The broker check's session step (capabilities.ts): a CONNECT that fails on the network means
// the broker went away in the middle of the check (a restart), not that it lacks sessions; a
// node that read it as "no sessions" stopped itself in the chaos soak (docs/chaos.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerUnreachable, sessionRefusal } from './capabilities.ts';

const url = 'mqtt://server:secret@127.0.0.1:1883';

test('a connection refused in the middle of the session check is the broker unreachable, not unfit', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1883'), { code: 'ECONNREFUSED' });
  assert.throws(
    () => sessionRefusal({ url }, 'the reconnect to the session was not accepted', { kind: 'failed', error: refused }),
    (e: unknown) => e instanceof BrokerUnreachable && /ECONNREFUSED/.test(e.message) && !e.message.includes('secret'),
  );
});

test('a CONNACK refusal, a close without CONNACK or no answer still count against the broker', () => {
  const what = 'the reconnect to the session was not accepted';
  assert.match(
    sessionRefusal({ url }, what, { kind: 'refused', code: 0x82, message: 'Protocol error' }),
    /not accepted: Protocol error/,
  );
  assert.match(sessionRefusal({ url }, what, { kind: 'closed' }), /closed without a CONNACK/);
  assert.match(
    sessionRefusal({ url }, what, { kind: 'failed', error: new Error('no answer within 5000 ms'), timedOut: true }),
    /no answer within 5000 ms/,
  );
});
