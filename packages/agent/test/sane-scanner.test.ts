// SaneScannerDriver against SANE's real `test` backend through scanimage.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SaneScannerDriver, listSaneDevices, saneConnectionType } from '../src/drivers/sane/scanner-driver.ts';
import { parseOptions, resolutionsOf } from '../src/drivers/sane/options.ts';
import { runScanimage } from '../src/drivers/sane/run-scanimage.ts';
import { saneTestConfig, type SaneTestConfig } from './sane.ts';
import { beforeHang } from './timing.ts';

describe('SaneScannerDriver on the test backend', () => {
  let sane: SaneTestConfig;
  before(() => {
    sane = saneTestConfig();
  });
  after(() => sane.close());

  test('scanimage -L lists the test devices', async () => {
    const list = await listSaneDevices({ env: sane.env });
    assert.deepEqual(
      list.map((d) => d.name),
      ['test:0', 'test:1'],
    );
    assert.deepEqual(list[0], { name: 'test:0', vendor: 'Noname', model: 'frontend-tester', type: 'virtual device' });
  });

  test('status() of sane:test', async () => {
    const d = new SaneScannerDriver('sane:test', { env: sane.env });
    const s = await d.status();
    assert.deepEqual(s, {
      connected: true,
      supported: true,
      make: 'Noname',
      model: 'frontend-tester',
      connection_type: 'virtual',
      state: 'idle',
      error_code: 0,
      duplex: false,
      resolutions: [100, 150, 200, 240, 300, 400, 600, 1200],
    });
    await d.close();
  });

  test('the private config gives an A4 scan area', async () => {
    const r = await runScanimage(['-d', 'test', '-A'], { env: sane.env });
    const o = parseOptions(r.stdout);
    assert.equal(o.get('x')?.value, '210');
    assert.equal(o.get('y')?.value, '297');
    assert.equal(o.get('source')?.constraint, 'Flatbed|Automatic Document Feeder');
    assert.deepEqual(o.get('hand-scanner'), { name: 'hand-scanner', constraint: 'yes|no', value: 'no' });
  });

  test('a device that does not exist is connected:false, never a throw', async () => {
    const d = new SaneScannerDriver('sane:test:9', { env: sane.env });
    assert.deepEqual(await d.status(), { connected: false, supported: false, connection_type: 'virtual' });
    const missing = new SaneScannerDriver('sane:epson2:libusb:001:004', { env: sane.env });
    assert.deepEqual(await missing.status(), { connected: false, supported: false, connection_type: 'usb' });
  });

  test('a missing scanimage binary or a timeout is connected:false', async () => {
    const nobin = new SaneScannerDriver('sane:test', { env: sane.env, bin: '/nonexistent/scanimage' });
    assert.equal((await nobin.status()).connected, false);
    // A scanimage that never answers, like a wedged USB backend (exec: no orphaned child).
    const bin = join(sane.dir, 'hung-scanimage');
    writeFileSync(bin, '#!/bin/sh\nexec sleep 300\n', { mode: 0o755 });
    const hung = new SaneScannerDriver('sane:test', { env: sane.env, bin, timeoutMs: 200 });
    const t0 = performance.now();
    // Answered at the timeout, not when scanimage ends (300 s): the guard only catches a hang.
    assert.equal((await beforeHang(hung.status(), 20_000, 'status of a hung scanimage')).connected, false);
    const ms = performance.now() - t0;
    // Not before the timeout (10% for Node's timers, which count from the loop's cached time).
    assert.ok(ms >= 180, `answered after ${ms} ms, before the 200 ms timeout`);
  });
});

test('resolution constraints: ranges give the spec values inside, lists give their values', () => {
  assert.deepEqual(
    resolutionsOf({ name: 'resolution', constraint: '1..1200dpi (in steps of 1)' }),
    [100, 150, 200, 240, 300, 400, 600, 1200],
  );
  assert.deepEqual(resolutionsOf({ name: 'resolution', constraint: '75..600dpi (in steps of 75)' }), [150, 300, 600]);
  assert.deepEqual(resolutionsOf({ name: 'resolution', constraint: '75|150|300|600dpi' }), [75, 150, 300, 600]);
  assert.deepEqual(resolutionsOf(undefined), []);
});

test('duplex from a real-style option list', () => {
  const o = parseOptions(
    '  Scan Mode:\n    --source Flatbed|ADF Front|ADF Duplex [Flatbed]\n        Selects the source.\n    --resolution 50|100|150|200|300|600dpi [150]\n',
  );
  assert.deepEqual(o.get('source'), { name: 'source', constraint: 'Flatbed|ADF Front|ADF Duplex', value: 'Flatbed' });
  assert.deepEqual(resolutionsOf(o.get('resolution')), [50, 100, 150, 200, 300, 600]);
});

test('SANE connection type rule', () => {
  assert.equal(saneConnectionType('test'), 'virtual');
  assert.equal(saneConnectionType('epson2:libusb:001:004'), 'usb');
  assert.equal(saneConnectionType('epson2:net:192.168.1.5'), 'network');
  assert.equal(saneConnectionType('hpaio:/net/hp_laserjet?ip=10.0.0.3'), 'network');
  assert.equal(saneConnectionType('hpaio:/usb/Deskjet?serial=X'), 'usb');
  assert.equal(saneConnectionType('airscan:e0:Kyocera'), 'network');
  assert.equal(saneConnectionType('pixma:04A91912_123'), 'usb');
});
