// What `--printer auto` and `--scanner auto` find (docs/printers-and-scanners.md, "Plug and
// play"): a real private cupsd's queues, SANE's device list with the test backend, avahi-browse
// lines as avahi prints them. Announcements over DNS-SD and devices coming and going under a
// running agent are in packages/e2e/src/plug-and-play.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cupsQueues, esclUri, ippUri, parseAvahiLine, saneDevices } from '../src/drivers/auto/discover.ts';
import { findPrinter } from '../src/drivers/auto/printer.ts';
import { findScanner } from '../src/drivers/auto/scanner.ts';
import { CupsQueueDriver } from '../src/drivers/cups/printer-driver.ts';
import { SaneScannerDriver } from '../src/drivers/sane/scanner-driver.ts';
import { startCupsd, type Cupsd } from './cupsd.ts';
import { startIppEvePrinter, type IppEvePrinter } from './ippeveprinter.ts';
import { saneTestConfig, type SaneTestConfig } from './sane.ts';

describe('the local CUPS', () => {
  let cups: Cupsd;
  let printer: IppEvePrinter;
  before(async () => {
    cups = await startCupsd();
    printer = await startIppEvePrinter({ name: 'Auto Eve' });
  });
  after(async () => {
    await cups?.close();
    await printer?.close();
  });

  test('no default queue: the first queue by name, and it says so; then the default queue first', async () => {
    await cups.addQueue('zeta', printer.uri, 'everywhere');
    await cups.addQueue('alpha', printer.uri, 'everywhere');
    const env = { ...process.env, CUPS_SERVER: cups.server };
    let found = await findPrinter({ env });
    assert.equal(found?.uri, cups.queueUri('alpha'));
    assert.match(found!.why, /the queue 'alpha' of the local CUPS \(it has no default queue; 2 accept jobs\)/);
    await cups.setDefault('zeta');
    const queues = await cupsQueues(cups.server);
    assert.deepEqual(
      queues.map((q) => [q.name, q.isDefault, q.accepting]),
      [
        ['zeta', true, true],
        ['alpha', false, true],
      ],
    );
    found = await findPrinter({ env });
    assert.equal(found?.uri, cups.queueUri('zeta'));
    assert.match(found!.why, /the default queue 'zeta' of the local CUPS/);
    const d = found!.make();
    try {
      assert.ok(d instanceof CupsQueueDriver);
      assert.equal((await d.status()).connected, true);
    } finally {
      await d.close();
    }
  });

  test('a CUPS that is not there: no queues, no error', async () => {
    const port = cups.port;
    await cups.stop();
    try {
      assert.deepEqual(await cupsQueues(`127.0.0.1:${port}`, 1000), []);
    } finally {
      await cups.start();
    }
  });
});

describe("SANE's device list", () => {
  let sane: SaneTestConfig;
  before(() => {
    sane = saneTestConfig();
  });
  after(() => sane.close());

  test("scanimage -L as the box's SANE configuration finds it; the first device is chosen when nothing eSCL is announced on loopback", async () => {
    const devices = await saneDevices(sane.env);
    assert.deepEqual(
      devices.map((d) => d.name),
      ['test:0', 'test:1'],
    );
    const found = await findScanner({ env: sane.env });
    // A loopback eSCL announcement (ipp-usb) would come first; none is made by this test.
    if (found?.uri.startsWith('escl:')) return;
    assert.equal(found?.uri, 'sane:test:0');
    assert.match(found!.why, /'Noname frontend-tester', first in SANE's device list/);
    const d = found!.make();
    try {
      assert.ok(d instanceof SaneScannerDriver);
      assert.equal((await d.status()).connected, true);
    } finally {
      await d.close();
    }
  });
});

test('avahi-browse -p lines: IPv4 records, names unescaped, TXT keys, the URIs made from rp and rs', () => {
  const ipp = parseAvahiLine(
    '=;lo;IPv4;HP\\032LaserJet\\032M15w;_ipp._tcp;local;localhost;127.0.0.1;60000;"rp=ipp/print" "pdl=application/pdf,image/urf" "ty=HP LaserJet M15w"',
  );
  assert.deepEqual(ipp, {
    iface: 'lo',
    name: 'HP LaserJet M15w',
    address: '127.0.0.1',
    port: 60000,
    txt: { rp: 'ipp/print', pdl: 'application/pdf,image/urf', ty: 'HP LaserJet M15w' },
  });
  assert.equal(ippUri(ipp!), 'ipp://127.0.0.1:60000/ipp/print');
  const escl = parseAvahiLine(
    '=;lo;IPv4;HP\\032LaserJet\\032M15w;_uscan._tcp;local;localhost;127.0.0.1;60000;"rs=eSCL" "duplex=F"',
  );
  assert.equal(esclUri(escl!), 'escl:http://127.0.0.1:60000/eSCL');
  assert.equal(esclUri({ ...escl!, txt: { rs: '/eSCL/' } }, true), 'escl:https://127.0.0.1:60000/eSCL');
  assert.equal(parseAvahiLine('=;eth0;IPv6;x;_ipp._tcp;local;h;fd00::2;631;'), undefined);
  assert.equal(parseAvahiLine('+;lo;IPv4;x;_ipp._tcp;local'), undefined);
});
