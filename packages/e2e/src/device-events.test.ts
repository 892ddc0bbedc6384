// Device events end to end (docs/callbacks.md, "Device events"): a real server on a ManualClock,
// the real broker, simulated boxes whose printer and scanner change state, and a real callback
// receiver that verifies every signature. A change is reported once it has held for the settle
// time (5 s here), once; a flap within the window sends nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CallbackReceiver, type CallbackEvent } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { ManualClock } from '@boxhub/server/testing/manual-clock.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { refusal, runBoxhub, startRig, type Rig, type RigBox } from './fixtures.ts';

const SETTLE = 5000;
const clock = new ManualClock(Date.now());
let rig: Rig;
let rx: Receiver;
before(async () => {
  rig = await startRig({
    clock,
    env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_DEVICE_EVENT_SETTLE_MS: String(SETTLE) },
  });
  rx = await startReceiver();
});
after(async () => {
  await rig.close();
  await rx.close();
});

/** Moves the server's clock past the settle window and waits until every job due is done. */
async function settle(): Promise<void> {
  await clock.advance(SETTLE);
  await rig.t.server.jobRunner.quiet({ inFlight: true });
}

/** Device events that reached `path` so far, verified (signature, timestamp) and typed. */
function events(path: string, box: RigBox): CallbackEvent[] {
  const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
  return rx.received
    .filter((r) => r.path.endsWith(path))
    .map((r) => receiver.receive(r))
    .filter((e) => e.type.startsWith('device.') && (e.body as { client_uuid?: string }).client_uuid === box.uuid);
}

const client = async (box: RigBox) => (await rig.sdk.devices.info({ uuid: box.uuid })).client!;

test('the device callback URL: set, read, cleared; bad URLs refused', async () => {
  assert.deepEqual(await rig.sdk.devices.eventCallback(), { settle_ms: SETTLE });
  assert.deepEqual(await rig.sdk.devices.setEventCallback({ callback_url: `${rx.url}/devices` }), {
    callback_url: `${rx.url}/devices`,
    settle_ms: SETTLE,
  });
  assert.equal((await rig.sdk.devices.eventCallback()).callback_url, `${rx.url}/devices`);
  assert.equal((await refusal(rig.sdk.devices.setEventCallback({ callback_url: 'ftp://example.org/x' }))).code, 10001);
  assert.equal(
    (await refusal(rig.sdk.devices.setEventCallback({ callback_url: 'http://169.254.169.254/latest' }))).code,
    10008,
    'metadata addresses are refused even with private networks allowed',
  );
  assert.equal(
    (await rig.sdk.devices.eventCallback()).callback_url,
    `${rx.url}/devices`,
    'a refused URL changes nothing',
  );
  assert.deepEqual(await rig.sdk.devices.setEventCallback({ callback_url: '' }), { settle_ms: SETTLE });
});

test('printer and scanner state changes: normalised reasons in the Device resource, one signed event per change, flaps damped', async () => {
  await rig.sdk.devices.setEventCallback({ callback_url: `${rx.url}/states` });
  const box = await rig.box();
  await settle(); // the first state the server sees is the baseline: no event
  assert.deepEqual(events('/states', box), []);
  const first = await client(box);
  assert.deepEqual(
    [first.printer?.state_reasons, first.scanner?.state_reasons, first.printer?.error_code],
    [[], [], 0],
  );

  box.printer.setFault('media-empty');
  const empty = await eventually(async () => {
    const c = await client(box);
    return c.printer?.state_reasons?.includes('media_empty') ? c : undefined;
  }, 'the server sees the paper out');
  assert.deepEqual(
    [empty.printer?.state, empty.printer?.state_reasons, empty.printer?.error_code, empty.printer?.device_reasons],
    ['stopped', ['media_empty'], 5, ['media-empty-error']],
  );
  await settle();
  const got = await eventually(() => {
    const l = events('/states', box);
    return l.length >= 1 ? l : undefined;
  }, 'device.printer_state');
  assert.equal(got.length, 1);
  const e = got[0]!;
  assert.equal(e.type, 'device.printer_state');
  const body = e.body as {
    state: { state_reasons: string[]; error_code: number; state?: string };
    previous?: { state_reasons: string[] };
    occurred_at: number;
    changed_at: number;
  };
  assert.deepEqual(
    [body.state.state_reasons, body.state.error_code, body.state.state, body.previous?.state_reasons],
    [['media_empty'], 5, 'stopped', []],
  );
  assert.ok(body.occurred_at - body.changed_at >= SETTLE, 'reported once the change had held for the settle time');

  // A flap: the paper comes back and runs out again within one window. Nothing is sent.
  box.printer.setFault(null);
  await eventually(async () => (await client(box)).printer?.state_reasons?.length === 0, 'paper back');
  box.printer.setFault('media-empty');
  await eventually(async () => (await client(box)).printer?.state_reasons?.includes('media_empty'), 'paper out again');
  await settle();
  await settle();
  assert.equal(events('/states', box).length, 1, 'a flap back to the reported state within the window sends nothing');

  // Two changes at once (printer fixed, scanner jammed): one event each, never repeated.
  box.printer.setFault(null);
  box.scanner.setFault('jammed');
  await eventually(async () => {
    const c = await client(box);
    return c.printer?.state_reasons?.length === 0 && c.scanner?.state_reasons?.includes('media_jam');
  }, 'printer fixed, scanner jammed');
  await settle();
  const more = await eventually(() => {
    const l = events('/states', box);
    return l.length >= 3 ? l : undefined;
  }, 'two more events');
  const scanner = more.find((x) => x.type === 'device.scanner_state')!;
  assert.deepEqual((scanner.body as { state: unknown }).state, {
    connected: true,
    state: 'stopped',
    state_reasons: ['media_jam'],
    error_code: 2001,
  });
  const fixed = more.filter((x) => x.type === 'device.printer_state').at(-1)!;
  assert.deepEqual((fixed.body as { state: { state_reasons: string[] } }).state.state_reasons, []);
  await settle();
  assert.equal(events('/states', box).length, 3, 'at most one event per change');
  box.scanner.setFault(null);
});

test('the box going offline and online: device.offline, device.online; a reconnect within the window sends nothing', async () => {
  await rig.sdk.devices.setEventCallback({ callback_url: `${rx.url}/presence` });
  const box = await rig.box();
  await settle();
  await box.agent.stop();
  await rig.online(box.uuid, false);
  await settle();
  const off = await eventually(() => {
    const l = events('/presence', box);
    return l.length >= 1 ? l : undefined;
  }, 'device.offline');
  assert.deepEqual(
    off.map((x) => [x.type, (x.body as { online: boolean }).online]),
    [['device.offline', false]],
  );

  const again = await rig.box({ device: { uuid: box.uuid, secret: box.secret }, stateDir: box.stateDir });
  await settle();
  const on = await eventually(() => {
    const l = events('/presence', again);
    return l.length >= 2 ? l : undefined;
  }, 'device.online');
  assert.deepEqual(
    on.map((x) => x.type),
    ['device.offline', 'device.online'],
  );

  // Gone and back within one window: nothing.
  await again.agent.stop();
  await rig.online(box.uuid, false);
  const back = await rig.box({ device: { uuid: box.uuid, secret: box.secret }, stateDir: box.stateDir });
  await settle();
  await settle();
  assert.equal(events('/presence', back).length, 2, 'a reconnect within the settle window is no event');
});

test('boxhub device-events: set, show, --off; a refused URL exits 1 with its code', async () => {
  const set = await runBoxhub(rig, ['device-events', `${rx.url}/cli`]);
  assert.equal(set.code, 0, set.stderr);
  assert.equal(set.stdout, `device events go to ${rx.url}/cli (a change is reported once it has held 5 s)\n`);
  const shown = await runBoxhub(rig, ['device-events', '--json']);
  assert.deepEqual(JSON.parse(shown.stdout), { callback_url: `${rx.url}/cli`, settle_ms: SETTLE });
  const bad = await runBoxhub(rig, ['device-events', 'http://169.254.169.254/x']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /10008/);
  const both = await runBoxhub(rig, ['device-events', `${rx.url}/cli`, '--off']);
  assert.equal(both.code, 2);
  const off = await runBoxhub(rig, ['device-events', '--off']);
  assert.equal(off.code, 0, off.stderr);
  assert.match(off.stdout, /no device events are sent/);
  assert.deepEqual(await rig.sdk.devices.eventCallback(), { settle_ms: SETTLE });
});
