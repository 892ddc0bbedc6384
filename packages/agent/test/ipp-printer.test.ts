// IppPrinterDriver and the IPP operations against a real ippeveprinter (CUPS 2.4).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { PDFDocument } from 'pdf-lib';
import { PrinterError } from '@boxhub/protocol/printer-errors.ts';
import { IppPrinterDriver } from '../src/drivers/ipp/printer-driver.ts';
import { IppClient } from '../src/drivers/ipp/client.ts';
import { IppHttpError, IppStatusError } from '../src/drivers/ipp/errors.ts';
import { connectionTypeFor } from '../src/drivers/ipp/printer-status.ts';
import { getPrinterAttributes, identifyPrinter } from '../src/drivers/ipp/operations.ts';
import { NotSupportedError } from '../src/drivers/types.ts';
import { startIppEvePrinter, type IppEvePrinter } from './ippeveprinter.ts';
import { beforeHang, CLOSED_PORT } from './timing.ts';

async function pdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700 });
  return doc.save();
}

describe('IppPrinterDriver on ippeveprinter', () => {
  let printer: IppEvePrinter;
  let driver: IppPrinterDriver;
  before(async () => {
    printer = await startIppEvePrinter({ script: { secondsPerSide: 0.05 } });
    driver = new IppPrinterDriver(printer.uri);
  });
  after(async () => {
    await driver?.close();
    await printer?.close();
  });

  test('status() maps Get-Printer-Attributes to PrinterStatus', async () => {
    const s = await driver.status();
    assert.deepEqual(s, {
      connected: true,
      supported: true,
      make: 'Example',
      model: 'Printer',
      connection_type: connectionTypeFor(printer.uri),
      error_code: 0,
      state: 'idle',
      state_reasons: ['none'],
      kind: 'inkjet',
      strict: true,
      maintenance: [],
    });
  });

  test('maintenance() is not supported over IPP, with a clear message', async () => {
    await assert.rejects(
      driver.maintenance('head_clean'),
      (e: unknown) => e instanceof NotSupportedError && /head_clean.*IPP has no maintenance operation/.test(e.message),
    );
  });

  test('capability() maps media-col-database, sides, colour, quality and sources', async () => {
    const c = await driver.capability();
    assert.ok(c, 'ippeveprinter takes PDF: the box can drive it');
    assert.equal(c.make, 'Example');
    assert.equal(c.model, 'Printer');
    assert.equal(c.support_strict, true);
    assert.deepEqual(c.color_mode, ['SVC_CM_MONO', 'SVC_CM_COLOR']);
    // Every size of ippeveprinter's media-col-database has a constant, in table order.
    assert.deepEqual(
      c.media_sizes.map((m) => m.media_size),
      [
        'SVC_MS_A4',
        'SVC_MS_A5',
        'SVC_MS_A6',
        'SVC_MS_LETTER',
        'SVC_MS_LEGAL',
        'SVC_MS_3X5',
        'SVC_MS_3_5X5',
        'SVC_MS_4X6',
        'SVC_MS_5X7',
        'SVC_MS_ENV_DL',
        'SVC_MS_ENV_10',
      ],
    );
    const a4 = c.media_sizes.find((m) => m.media_size === 'SVC_MS_A4')!;
    // The A4 entry names no type or source: every media-type-supported and source holds.
    assert.deepEqual(
      a4.media_types,
      ['SVC_MT_PLAIN', 'SVC_MT_PHOTO', 'SVC_MT_MATTE', 'SVC_MT_ENVELOPE', 'SVC_MT_LABELS', 'SVC_MT_CARDSTOCK'].map(
        (media_type) => ({
          media_type,
          duplex: ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE', 'SVC_DP_TUMBLE'],
          borderless: false,
          quality: ['SVC_QU_DRAFT', 'SVC_QU_NORMAL', 'SVC_QU_HIGH'],
          input_slot: ['SVC_IS_AUTO', 'SVC_IS_CASS1', 'SVC_IS_PHOTO'],
        }),
      ),
    );
    // 4x6 exists only in the photo tray, borderless.
    const photo = c.media_sizes.find((m) => m.media_size === 'SVC_MS_4X6')!;
    assert.ok(photo.media_types.every((t) => t.borderless && t.input_slot?.join() === 'SVC_IS_PHOTO'));
    // A5 is listed only for the by-pass tray.
    assert.ok(
      c.media_sizes
        .find((m) => m.media_size === 'SVC_MS_A5')!
        .media_types.every((t) => !t.borderless && t.input_slot?.join() === 'SVC_IS_BYPASS'),
    );
  });

  test('Validate-Job, Print-Job, Get-Job-Attributes and Get-Jobs: a 3-page duplex job prints 4 sides', async () => {
    const job = {
      documentFormat: 'application/pdf',
      jobName: 'duplex',
      template: {
        sides: 'two-sided-long-edge' as const,
        printQuality: 'high' as const,
        printColorMode: 'monochrome',
        mediaCol: { size: { x: 21000, y: 29700 }, source: 'main', type: 'stationery' },
      },
    };
    const v = await driver.validate(job);
    assert.equal(v.unsupported.list.length, 0);
    const t0 = performance.now();
    const created = await driver.submit({ ...job, document: await pdf(3) });
    assert.ok(created.id > 0);
    assert.match(created.uri ?? '', /^ipp:\/\/localhost:\d+\/ipp\/print\/\d+$/);
    const seen: number[] = [];
    const done = await driver.waitForJob(created.id, {
      intervalMs: 50,
      onUpdate: (j) => {
        if (j.impressionsCompleted !== undefined) seen.push(j.impressionsCompleted);
      },
    });
    const _ms = performance.now() - t0;
    assert.equal(done.state, 'completed');
    assert.equal(done.impressions, 4);
    assert.equal(done.impressionsCompleted, 4);
    assert.ok(
      seen.every((n, i) => i === 0 || n >= seen[i - 1]!),
      `progress never goes back: ${seen.join(',')}`,
    );
    const all = await driver.jobs('completed');
    assert.ok(all.some((j) => j.id === created.id && j.state === 'completed'));
    assert.ok(
      readdirSync(printer.spoolDir).some((f) => f.endsWith('.pdf')),
      'ippeveprinter kept the spooled PDF (-k)',
    );
  });

  test('Identify-Printer reaches the printer with the actions and message asked for', async () => {
    // ippeveprinter performs them on its output: "IDENTIFY from HOST: MESSAGE" for display, a
    // bell character for sound.
    const seen = (re: RegExp) =>
      beforeHang(
        (async () => {
          while (!re.test(printer.log())) await new Promise((r) => setTimeout(r, 20));
        })(),
        10_000,
        `${re} in the printer's output:\n${printer.log()}`,
      );
    const bells = () => printer.log().split('\x07').length;
    const before = bells();
    await identifyPrinter(driver.client, { actions: ['display'], message: 'Room 4, by the door' });
    await seen(/IDENTIFY from \S+: Room 4, by the door/);
    assert.equal(bells(), before, 'display only: no bell');
    await driver.identify(['sound']);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: BEL is what the buzzer writes
    await seen(/\x07/);
  });

  test('Get-Job-Attributes of a job that does not exist is an IppStatusError', async () => {
    await assert.rejects(
      driver.job(999_999),
      (e: unknown) => e instanceof IppStatusError && e.statusName === 'client-error-not-found',
    );
  });

  test('ipps:// reaches the same printer over TLS with its self-signed certificate', async () => {
    const tls = new IppPrinterDriver(printer.ippsUri);
    const verifying = new IppPrinterDriver(printer.ippsUri, { rejectUnauthorized: true, timeoutMs: 2000 });
    try {
      assert.equal(tls.client.secure, true);
      assert.equal((await tls.status()).connected, true);
      const s = await verifying.status();
      assert.equal(s.connected, false, 'a self-signed certificate fails verification when asked to verify');
      assert.equal(s.error_code, PrinterError.unreachable);
    } finally {
      await tls.close();
      await verifying.close();
    }
  });

  test('HTTP 426: the client switches to TLS on the same port, or reports it when told not to', async () => {
    // A front door that answers plain HTTP with 426 and passes TLS through to the printer,
    // like printers that only accept ipps.
    const front: Server = createServer((sock) => {
      sock.once('data', (first) => {
        if (first[0] === 0x16) {
          const up = connect(printer.port, '127.0.0.1', () => {
            up.write(first);
            sock.pipe(up).pipe(sock);
          });
          up.on('error', () => sock.destroy());
          sock.on('error', () => up.destroy());
        } else {
          sock.end(
            'HTTP/1.1 426 Upgrade Required\r\nUpgrade: TLS/1.2, HTTP/1.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
          );
        }
      });
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const port = (front.address() as { port: number }).port;
    const upgrading = new IppClient(`ipp://127.0.0.1:${port}/ipp/print`);
    const strict = new IppClient(`ipp://127.0.0.1:${port}/ipp/print`, { upgradeOn426: false });
    try {
      await assert.rejects(
        getPrinterAttributes(strict, { requested: ['printer-state'] }),
        (e: unknown) => e instanceof IppHttpError && e.status === 426 && /use ipps/.test(e.message),
      );
      const a = await getPrinterAttributes(upgrading, { requested: ['printer-state'] });
      assert.equal(a.integer('printer-state'), 3);
      assert.equal(upgrading.secure, true);
    } finally {
      upgrading.close();
      strict.close();
      await new Promise((r) => front.close(r));
    }
  });
});

describe('IppPrinterDriver faults', () => {
  test('paper out after 1 of 3 sides: job aborted at 1 side, printer error media_empty', async () => {
    const printer = await startIppEvePrinter({ script: { secondsPerSide: 0.05, paperOutAfter: 1 } });
    const driver = new IppPrinterDriver(printer.uri);
    try {
      const created = await driver.submit({ documentFormat: 'application/pdf', document: await pdf(3) });
      const done = await driver.waitForJob(created.id, { intervalMs: 50 });
      assert.equal(done.state, 'aborted');
      assert.equal(done.impressionsCompleted, 1);
      const s = await driver.status();
      assert.equal(s.connected, true);
      assert.ok(
        s.state_reasons?.some((r) => r.startsWith('media-empty-')),
        `reasons: ${s.state_reasons?.join(',')}`,
      );
      assert.equal(s.error_code, PrinterError.media_empty);
    } finally {
      await driver.close();
      await printer.close();
    }
  });

  test('Cancel-Job ends a printing job as canceled', async () => {
    const printer = await startIppEvePrinter({ script: { secondsPerSide: 1 } });
    const driver = new IppPrinterDriver(printer.uri);
    try {
      const created = await driver.submit({ documentFormat: 'application/pdf', document: await pdf(5) });
      const active = await driver.jobs('not-completed');
      assert.ok(active.some((j) => j.id === created.id));
      // Cancel a job that is printing: ippeveprinter cancels a still-pending job, then starts it
      // anyway and ends it "completed" (a race of its own, seen on a loaded machine).
      for (const until = Date.now() + 5000; (await driver.job(created.id)).state !== 'processing'; ) {
        if (Date.now() > until) throw new Error('the job never started processing');
        await new Promise((r) => setTimeout(r, 20));
      }
      await driver.cancel(created.id);
      const done = await driver.waitForJob(created.id, { intervalMs: 50 });
      assert.equal(done.state, 'canceled');
    } finally {
      await driver.close();
      await printer.close();
    }
  });

  test('close() stops ippeveprinter and its job script, and removes its files', async () => {
    const printer = await startIppEvePrinter({ script: { secondsPerSide: 5 } });
    const driver = new IppPrinterDriver(printer.uri);
    await driver.submit({ documentFormat: 'application/pdf', document: await pdf(1) });
    await driver.close();
    await printer.close();
    assert.equal(existsSync(printer.spoolDir), false);
    const after = new IppPrinterDriver(printer.uri, { timeoutMs: 1000 });
    assert.equal((await after.status()).connected, false);
    await after.close();
  });

  test('an unreachable printer gives connected:false at once, never a throw', async () => {
    // A refused connection is answered without waiting for the (one minute) timeout.
    const d = new IppPrinterDriver(`ipp://127.0.0.1:${CLOSED_PORT}/ipp/print`, { timeoutMs: 60_000 });
    assert.deepEqual(await beforeHang(d.status(), 20_000, 'status of a refused printer'), {
      connected: false,
      supported: false,
      error_code: PrinterError.unreachable,
      connection_type: 'network',
    });
    await d.close();
  });

  test('a printer that accepts but never answers times out into connected:false', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer((s) => {
      sockets.add(s);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const d = new IppPrinterDriver(`ipp://127.0.0.1:${port}/ipp/print`, { timeoutMs: 300 });
    try {
      const t0 = performance.now();
      const s = await beforeHang(d.status(), 20_000, 'status of a silent printer');
      const ms = performance.now() - t0;
      assert.equal(s.connected, false);
      // Not before the timeout (10% for Node's timers, which count from the loop's cached time).
      assert.ok(ms >= 270, `answered after ${ms} ms, before the 300 ms timeout`);
      const ac = new AbortController();
      const p = d.status(ac.signal);
      ac.abort();
      await assert.rejects(p, { name: 'AbortError' });
    } finally {
      await d.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  test('connection type rule: loopback with a port >= 60000 is the ipp-usb proxy', () => {
    assert.equal(connectionTypeFor('ipp://localhost:60000/ipp/print'), 'usb');
    assert.equal(connectionTypeFor('ipp://127.0.0.1:60003/ipp/print'), 'usb');
    assert.equal(connectionTypeFor('ipp://[::1]:60001/ipp/print'), 'usb');
    assert.equal(connectionTypeFor('ipp://localhost:631/ipp/print'), 'network');
    assert.equal(connectionTypeFor('ipps://192.168.1.20/ipp/print'), 'network');
    assert.equal(connectionTypeFor('ipp://printer.local:60000/ipp/print'), 'network');
    assert.equal(
      new IppPrinterDriver('ipp://localhost:631/ipp/print', { connectionType: 'usb' }).uri,
      'ipp://localhost:631/ipp/print',
    );
  });
});
