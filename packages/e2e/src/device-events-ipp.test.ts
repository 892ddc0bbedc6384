// Device state from a real printer (CUPS' ippeveprinter): its print command runs out of paper
// after one side, the printer then says media-empty in printer-state-reasons. The Device resource
// shows it normalised, the application gets one signed device.printer_state event once the
// change has held for the settle time, and the print task's history has what the printer said
// while it printed (docs/printers-and-scanners.md, "Normalised state reasons"; docs/callbacks.md,
// "Device events"; docs/tasks.md, "History"). The server runs on a ManualClock.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument } from 'pdf-lib';
import { type BoxAgent, SimScanner, createPrinterDriver } from '@boxhub/agent';
import { CallbackReceiver } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { ManualClock } from '@boxhub/server/testing/manual-clock.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { startIppEvePrinter, type IppEvePrinter } from '../../agent/test/ippeveprinter.ts';
import { startRig, type Rig, peerBox } from './fixtures.ts';

const SETTLE = 2000;
const clock = new ManualClock(Date.now());
let rig: Rig;
let rx: Receiver;
let printer: IppEvePrinter;
let agent: BoxAgent | undefined;
before(async () => {
  // A long command timeout: the server's clock stands still while the create is worked on.
  rig = await startRig({
    clock,
    commandTimeoutMs: 60_000,
    env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_DEVICE_EVENT_SETTLE_MS: String(SETTLE) },
  });
  rx = await startReceiver();
  printer = await startIppEvePrinter({ name: 'Paper Out', script: { secondsPerSide: 0.1, paperOutAfter: 1 } });
});
after(async () => {
  await agent?.stop();
  await printer?.close();
  await rx?.close();
  await rig?.close();
});

async function settle(): Promise<void> {
  await clock.advance(SETTLE);
  await rig.t.server.jobRunner.quiet({ inFlight: true });
}

test("a real printer running out of paper: normalised reasons, one device.printer_state event, the printer's words in the task history", async () => {
  await rig.sdk.devices.setEventCallback({ callback_url: `${rx.url}/ipp` });
  const d = await rig.t.registerDevice();
  await rig.sdk.devices.bind({ uuid: d.uuid, name: 'ipp box' });
  agent = peerBox({
    link: { url: rig.t.mqttUrl, uuid: d.uuid, secret: d.secret, keepaliveSec: 30 },
    printer: await createPrinterDriver(printer.uri),
    scanner: new SimScanner('sim:'),
  });
  await agent.start();
  const ready = await eventually(async () => {
    const c = (await rig.sdk.devices.info({ uuid: d.uuid })).client!;
    return c.printer?.connected && c.printer.state === 'idle' ? c : undefined;
  }, 'the printer idle');
  assert.deepEqual([ready.printer?.state_reasons, ready.printer?.error_code], [[], 0]);
  await settle(); // baseline

  const doc = await PDFDocument.create();
  for (let i = 0; i < 3; i++) doc.addPage([595.28, 841.89]);
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const uuid = (
    await rig.sdk.print.create({
      client_uuid: d.uuid,
      file_type: 'pdf',
      file_content: Buffer.from(await doc.save()).toString('base64'),
    })
  ).uuid!;
  const done = await rig.sdk.print.waitForFinish(
    { client_uuid: d.uuid, print_uuid: uuid },
    { intervalMs: 100, timeoutMs: 60_000 },
  );
  assert.equal(done.error_code, 4305, 'the printer stopped the job: out of paper');

  const out = await eventually(async () => {
    const c = (await rig.sdk.devices.info({ uuid: d.uuid })).client!;
    return c.printer?.state_reasons?.includes('media_empty') ? c.printer : undefined;
  }, 'media_empty in the Device resource');
  assert.equal(out.error_code, 5);
  assert.ok(
    out.device_reasons?.some((r) => r.startsWith('media-empty')),
    `the printer's own words: ${out.device_reasons?.join()}`,
  );

  await settle();
  const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
  const got = await eventually(() => {
    const l = rx.received
      .filter((r) => r.path.endsWith('/ipp'))
      .map((r) => receiver.receive(r))
      .filter((e) => e.type === 'device.printer_state');
    return l.length > 0 ? l : undefined;
  }, 'device.printer_state');
  const body = got.at(-1)!.body as {
    state: { state_reasons: string[]; error_code: number };
    previous?: { state_reasons: string[] };
  };
  assert.ok(body.state.state_reasons.includes('media_empty'), body.state.state_reasons.join());
  assert.deepEqual(body.previous?.state_reasons, []);
  await settle();
  const all = rx.received.filter((r) => r.path.endsWith('/ipp')).map((r) => receiver.receive(r));
  assert.equal(
    all.filter(
      (e) =>
        e.type === 'device.printer_state' &&
        (e.body as { state: { state_reasons: string[] } }).state.state_reasons.includes('media_empty'),
    ).length,
    1,
    'one event for the change',
  );

  const h = await eventually(async () => {
    const r = await rig.sdk.tasks.history({ uuid });
    return r.entries.some(
      (e) => e.what === 'printer_state' && ((e.detail?.state_reasons ?? []) as string[]).includes('media_empty'),
    )
      ? r
      : undefined;
  }, 'the paper-out in the task history');
  const finished = h.entries.find((e) => e.what === 'finished')!;
  assert.deepEqual([finished.source, finished.detail?.error_code], ['printer', 4305]);
  assert.ok(h.entries.some((e) => e.source === 'printer' && e.what === 'accepted'));
});
