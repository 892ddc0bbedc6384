// Device state from an eSCL scanner (the test eSCL server, which sane-airscan's scanimage
// checks speaks eSCL as devices do): its feeder door opens at rest, then a misfeed ends a scan.
// The Device resource shows each normalised, the application gets one signed
// device.scanner_state event per change once it has held for the settle time, and the scan
// task's history says the scanner ended it (docs/printers-and-scanners.md, "Normalised state
// reasons"; docs/callbacks.md, "Device events"; docs/tasks.md, "History"). The server runs on a
// ManualClock.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type BoxAgent, createPrinterDriver, createScannerDriver } from '@boxhub/agent';
import { ScanError } from '@boxhub/protocol';
import { CallbackReceiver, type CallbackEvent } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { ManualClock } from '@boxhub/server/testing/manual-clock.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { startEsclServer, type EsclServer } from '../../agent/test/escl-server.ts';
import { startRig, type Rig, peerBox } from './fixtures.ts';

const SETTLE = 2000;
const clock = new ManualClock(Date.now());
let rig: Rig;
let rx: Receiver;
let scanner: EsclServer;
let agent: BoxAgent | undefined;
before(async () => {
  // A long command timeout: the server's clock stands still while the create is worked on.
  rig = await startRig({
    clock,
    commandTimeoutMs: 60_000,
    env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_DEVICE_EVENT_SETTLE_MS: String(SETTLE) },
  });
  rx = await startReceiver();
  scanner = await startEsclServer({ sheets: 5 });
});
after(async () => {
  await agent?.stop();
  await scanner?.close();
  await rx?.close();
  await rig?.close();
});

async function settle(): Promise<void> {
  await clock.advance(SETTLE);
  await rig.t.server.jobRunner.quiet({ inFlight: true });
}

test("an eSCL scanner's door open and a misfeed: normalised reasons, one device.scanner_state event per change, the scanner named in the task history", async () => {
  await rig.sdk.devices.setEventCallback({ callback_url: `${rx.url}/escl` });
  const d = await rig.t.registerDevice();
  await rig.sdk.devices.bind({ uuid: d.uuid, name: 'escl box' });
  agent = peerBox({
    link: { url: rig.t.mqttUrl, uuid: d.uuid, secret: d.secret, keepaliveSec: 30 },
    printer: await createPrinterDriver('none'),
    scanner: await createScannerDriver(scanner.uri, { escl: { retryDelayMs: 50, paperPollMs: 50 } }),
  });
  await agent.start();
  const scannerOf = async () => (await rig.sdk.devices.info({ uuid: d.uuid })).client?.scanner;
  const ready = await eventually(async () => {
    const s = await scannerOf();
    return s?.connected && s.state === 'idle' ? s : undefined;
  }, 'the scanner idle');
  assert.deepEqual([ready.state_reasons, ready.error_code], [[], 0]);
  await settle(); // baseline

  const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
  const events = (): CallbackEvent[] =>
    rx.received
      .filter((r) => r.path.endsWith('/escl'))
      .map((r) => receiver.receive(r))
      .filter((e) => e.type === 'device.scanner_state');
  type Body = {
    state: { state_reasons: string[]; error_code: number; state?: string };
    previous?: { state_reasons: string[] };
  };

  // The feeder door is opened at rest.
  scanner.adfState = 'ScannerAdfDoorOpen';
  const open = await eventually(async () => {
    const s = await scannerOf();
    return s?.state_reasons?.includes('cover_open') ? s : undefined;
  }, 'cover_open in the Device resource');
  assert.deepEqual([open.state, open.error_code], ['stopped', ScanError.cover_open]);
  await settle();
  const first = await eventually(() => {
    const l = events();
    return l.length >= 1 ? l : undefined;
  }, 'device.scanner_state for the open door');
  const body = first[0]!.body as Body;
  assert.deepEqual(
    [body.state.state_reasons, body.state.error_code, body.state.state, body.previous?.state_reasons],
    [['cover_open'], ScanError.cover_open, 'stopped', []],
  );
  await settle();
  assert.equal(events().length, 1, 'one event for the change');

  // Closed again: one event back to no reason.
  scanner.adfState = null;
  await eventually(async () => (await scannerOf())?.state_reasons?.length === 0, 'door closed');
  await settle();
  const closed = await eventually(() => {
    const l = events();
    return l.length >= 2 ? l : undefined;
  }, 'device.scanner_state for the closed door');
  assert.deepEqual((closed[1]!.body as Body).state.state_reasons, []);

  // A misfeed after two sheets ends a scan with 2005; the history says the scanner said so.
  scanner.faultAfter(2, 'ScannerAdfMispick');
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const uuid = (await rig.sdk.scan.create({ client_uuid: d.uuid, options: { duplex: false, resolution: 150 } })).uuid!;
  const done = await rig.sdk.scan.waitForFinish(
    { client_uuid: d.uuid, scan_uuid: uuid },
    { intervalMs: 100, timeoutMs: 60_000 },
  );
  assert.deepEqual([done.error_code, done.total_pages], [ScanError.misfeed, 2]);
  const h = await eventually(async () => {
    const r = await rig.sdk.tasks.history({ uuid });
    return r.entries.some((e) => e.what === 'finished') ? r : undefined;
  }, 'the end in the task history');
  const finished = h.entries.find((e) => e.what === 'finished')!;
  assert.deepEqual([finished.source, finished.detail?.error_code], ['scanner', ScanError.misfeed]);

  const jam = await eventually(async () => {
    const s = await scannerOf();
    return s?.state_reasons?.includes('media_jam') ? s : undefined;
  }, 'the misfeed in the Device resource');
  assert.equal(jam.error_code, ScanError.misfeed);
  await settle();
  const third = await eventually(() => {
    const l = events();
    return l.length >= 3 ? l : undefined;
  }, 'device.scanner_state for the misfeed');
  assert.deepEqual(
    [(third[2]!.body as Body).state.state_reasons, (third[2]!.body as Body).state.error_code],
    [['media_jam'], ScanError.misfeed],
  );
  await settle();
  assert.equal(events().length, 3, 'at most one event per change');
});
