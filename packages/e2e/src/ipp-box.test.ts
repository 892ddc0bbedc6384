// A box whose printer is a real IPP Everywhere printer (ippeveprinter): the Device resource
// shows what the printer says about itself, and inkjet maintenance is refused with a reason,
// since IPP has no head-cleaning operation (docs/printers-and-scanners.md).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type BoxAgent, SimScanner, createPrinterDriver } from '@boxhub/agent';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startIppEvePrinter, type IppEvePrinter } from '../../agent/test/ippeveprinter.ts';
import { refusal, startRig, type Rig, peerBox } from './fixtures.ts';

let rig: Rig;
let printer: IppEvePrinter;
let agent: BoxAgent;
before(async () => {
  rig = await startRig();
  printer = await startIppEvePrinter({ name: 'Classroom Printer' });
});
after(async () => {
  await agent?.stop();
  await printer?.close();
  await rig?.close();
});

test('the Device resource carries the IPP printer status', async () => {
  const d = await rig.t.registerDevice();
  await rig.sdk.devices.bind({ uuid: d.uuid, name: 'ipp box' });
  agent = peerBox({
    link: { url: rig.t.mqttUrl, uuid: d.uuid, secret: d.secret, keepaliveSec: 30 },
    printer: await createPrinterDriver(printer.uri),
    scanner: new SimScanner('sim:'),
  });
  await agent.start();
  const p = await eventually(async () => {
    const c = (await rig.sdk.devices.info({ uuid: d.uuid })).client!;
    return c.online && c.printer?.connected ? c.printer : undefined;
  }, 'IPP printer status on the server');
  assert.equal(p.supported, true);
  assert.equal(p.connection_type, 'network');
  assert.equal(p.error_code, 0);
  assert.equal(typeof p.make, 'string');
  assert.ok(p.make!.length > 0 && typeof p.model === 'string');

  const r = await refusal(rig.sdk.control.headClean({ client_uuid: d.uuid }));
  assert.equal(r.code, 30006, r.msg);

  // The printer goes away: the box notices on its next poll and says so.
  await printer.close();
  await eventually(async () => {
    const c = (await rig.sdk.devices.info({ uuid: d.uuid })).client!;
    return c.printer?.connected === false;
  }, 'printer gone');
});
