// EsclScannerDriver status against a small eSCL server on port 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EsclScannerDriver } from '../src/drivers/escl/scanner-driver.ts';
import { connectionTypeFor } from '../src/drivers/ipp/printer-status.ts';
import { CLOSED_PORT } from './timing.ts';
import { startEsclServer } from './escl-server.ts';

test('status() reads ScannerCapabilities and ScannerStatus', async () => {
  const server = await startEsclServer();
  const d = new EsclScannerDriver(server.uri);
  try {
    const port = new URL(server.uri.slice(5)).port;
    assert.deepEqual(await d.status(), {
      connected: true,
      supported: true,
      make: 'Boxhub',
      model: 'Mock Scanner 1',
      connection_type: connectionTypeFor(`ipp://127.0.0.1:${port}/`),
      duplex: true,
      resolutions: [150, 300, 600],
      state: 'idle',
      adf_loaded: true,
      state_reasons: ['Idle', 'ScannerAdfLoaded'],
    });
    server.adfState = 'ScannerAdfEmpty';
    assert.equal((await d.status()).adf_loaded, false);
    // A misfeed or an open door: stopped, with the scan error code and the device's words
    // (normalised by the server: docs/printers-and-scanners.md, "Normalised state reasons").
    server.adfState = 'ScannerAdfMispick';
    const misfeed = await d.status();
    assert.deepEqual(
      [misfeed.state, misfeed.error_code, misfeed.state_reasons],
      ['stopped', 2005, ['Idle', 'ScannerAdfMispick']],
    );
    server.adfState = 'ScannerAdfJam';
    assert.equal((await d.status()).error_code, 2001);
    server.adfState = 'ScannerAdfHatchOpen';
    const open = await d.status();
    assert.deepEqual([open.state, open.error_code], ['stopped', 2002]);
  } finally {
    await d.close();
    await server.close();
  }
});

test('an absent eSCL scanner is connected:false', async () => {
  const d = new EsclScannerDriver(`escl:http://127.0.0.1:${CLOSED_PORT}/eSCL`, { timeoutMs: 1000 });
  assert.equal((await d.status()).connected, false);
  assert.throws(() => new EsclScannerDriver('escl:ftp://x/eSCL'), TypeError);
});
