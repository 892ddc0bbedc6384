// The box link end to end: what the box reports fills the Device resource, changes arrive on
// their own, and a box that loses the network comes back by itself (issue: "The box link",
// "The agent").
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startTcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';
import { startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => {
  rig = await startRig();
});
after(() => rig.close());

const device = async (uuid: string) => (await rig.sdk.devices.info({ uuid })).client!;

test('every Device field is filled from what the box reports', async () => {
  const box = await rig.box({ printer: 'sim:?make=Epson&model=ET-2850', scanner: 'sim:?make=Fujitsu&model=fi-800R' });
  await eventually(async () => (await device(box.uuid)).version, 'state applied');
  const c = await device(box.uuid);
  for (const f of [
    'uuid',
    'code',
    'name',
    'model',
    'active_at',
    'online',
    'last_connect_at',
    'version',
    'firmware',
    'mac',
    'wlan_mac',
    'network_type',
    'local_ip',
    'gateway_ip',
    'printer',
    'scanner',
  ]) {
    assert.ok((c as Record<string, unknown>)[f] !== undefined, `field ${f}`);
  }
  assert.equal(c.model, 'BX-SIM');
  assert.equal(c.network_type, 'ethernet');
  assert.match(c.mac!, /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
  // The API's fields (docs/api.md), then boxhub's state extension (docs/printers-and-scanners.md,
  // "Normalised state reasons").
  assert.deepEqual(c.printer, {
    connected: true,
    supported: true,
    make: 'Epson',
    model: 'ET-2850',
    connection_type: 'virtual',
    error_code: 0,
    state: 'idle',
    state_reasons: [],
    device_reasons: [],
  });
  assert.deepEqual(c.scanner, {
    connected: true,
    supported: true,
    make: 'Fujitsu',
    model: 'fi-800R',
    connection_type: 'virtual',
    error_code: 0,
    state: 'idle',
    state_reasons: [],
    device_reasons: [],
  });
});

test('printer and scanner changes reach the server without being asked', async () => {
  const box = await rig.box();
  const info = () => device(box.uuid);
  box.printer.setFault('media-empty');
  await eventually(async () => (await info()).printer?.error_code === 5, 'paper-out reported');
  box.printer.setFault(null);
  box.scanner.setConnected(false);
  await eventually(async () => {
    const c = await info();
    return c.printer?.error_code === 0 && c.scanner?.connected === false;
  }, 'scanner unplugged reported');
  box.printer.setConnected(false);
  await eventually(async () => (await info()).printer?.connected === false, 'printer unplugged reported');
});

test('a box that loses the network reconnects by itself, with backoff', async () => {
  const broker = new URL(rig.t.mqttUrl);
  const proxy = await startTcpProxy(broker.hostname, Number(broker.port));
  try {
    const box = await rig.box({ url: proxy.url, keepaliveSec: 5 });
    const first = (await device(box.uuid)).last_connect_at!;
    const reconnected: number[] = [];
    box.agent.link.on('connected', () => reconnected.push(Date.now()));
    proxy.cut();
    await eventually(() => reconnected.length >= 1, 'agent reconnected');
    await eventually(async () => {
      const c = await device(box.uuid);
      return c.online === true && c.last_connect_at! > first;
    }, 'server sees the new connection');
    // Commands work over the new connection.
    await rig.sdk.control.buzz({ client_uuid: box.uuid, buzz: [10] }); // resolves only on code 0
  } finally {
    await proxy.close();
  }
});
