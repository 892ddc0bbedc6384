// Printing through CUPS (docs/printers-and-scanners.md, "CUPS queues"): a real private cupsd
// started here, with a driverless queue (lpadmin -m everywhere) and a queue with a PPD (the
// cups-filters raster PPD) in front of real ippeveprinters whose print command records what
// arrived, and a PPD queue to a raw socket printer that reports nothing back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { PrintJobOptions } from '@boxhub/protocol';
import { PrinterError } from '@boxhub/protocol/printer-errors.ts';
import { CupsQueueDriver } from '../src/drivers/cups/printer-driver.ts';
import { IppTransportError } from '../src/drivers/ipp/errors.ts';
import { cleanMakeAndModel, cupsQueueUri } from '../src/drivers/cups/queue-uri.ts';
import { createPrinterDriver } from '../src/drivers/registry.ts';
import type { PrintHooks } from '../src/drivers/types.ts';
import { debianPolicy, startCupsd, type Cupsd } from './cupsd.ts';
import { startIppEvePrinter, type IppEvePrinter } from './ippeveprinter.ts';
import { numberedPdf, pageTexts } from './print-fixtures.ts';
import { beforeHang } from './timing.ts';
import { tempDirUntilExit as tempDir } from '../src/store/temp-state-dir.ts';

const fast = { timing: { pollMs: 50 }, behind: { timing: { pollMs: 50 } } };
const opts = (o: Partial<PrintJobOptions> = {}): PrintJobOptions => ({
  media_size: 'SVC_MS_A4',
  media_type: 'SVC_MT_PLAIN',
  borderless: false,
  copies: 1,
  collate: true,
  reverse: false,
  strict: true,
  ...o,
});

let n = 0;
async function task(pages: number): Promise<{ task: string; file: string }> {
  const dir = tempDir('boxhub-cups-task-');
  const id = `cups-task-${process.pid}-${++n}`;
  const file = join(dir, `${id}.pdf`);
  writeFileSync(file, await numberedPdf(pages));
  return { task: id, file };
}

function hooks(
  signal = new AbortController().signal,
  onSides?: (n: number) => void,
): PrintHooks & { refs: string[]; sides: number[] } {
  const h = {
    signal,
    refs: [] as string[],
    sides: [] as number[],
    submitted: async (ref: string) => {
      h.refs.push(ref);
    },
    progress: (p: { impressionsCompleted?: number }) => {
      if (p.impressionsCompleted === undefined) return;
      h.sides.push(p.impressionsCompleted);
      onSides?.(p.impressionsCompleted);
    },
  };
  return h;
}

let cups: Cupsd;
before(async () => {
  cups = await startCupsd();
});
after(async () => {
  await cups?.close();
});

describe('a driverless queue (lpadmin -m everywhere) in front of ippeveprinter', () => {
  let printer: IppEvePrinter;
  let driver: CupsQueueDriver;
  before(async () => {
    printer = await startIppEvePrinter({ name: 'Classroom Eve', script: { secondsPerSide: 0.05 } });
    await cups.addQueue('classroom', printer.uri, 'everywhere');
    driver = new CupsQueueDriver(cups.queueUri('classroom'), fast);
  });
  after(async () => {
    await driver?.close();
    await printer?.close();
  });

  test('cups:NAME and the queue URI name the same queue; both are driven as a CUPS queue', async () => {
    assert.equal(cupsQueueUri('cups:classroom', { CUPS_SERVER: cups.server }), cups.queueUri('classroom'));
    assert.equal(cupsQueueUri('cups:classroom', {}), 'ipp://localhost:631/printers/classroom');
    assert.throws(() => cupsQueueUri('cups:', {}), /not a CUPS queue name/);
    assert.throws(() => cupsQueueUri('cups:a/b', {}), /not a CUPS queue name/);
    const viaUri = await createPrinterDriver(cups.queueUri('classroom'));
    try {
      assert.ok(viaUri instanceof CupsQueueDriver);
      assert.equal((await viaUri.status()).connected, true);
    } finally {
      await viaUri.close();
    }
  });

  test('status and capability: the printer\'s make and model (not "- IPP Everywhere"), strict from the printer behind', async () => {
    // What CUPS itself says: the PPD's nickname.
    const raw = execFileSync('ipptool', ['-tv', cups.queueUri('classroom'), 'get-printer-attributes.test'], {
      encoding: 'utf8',
    });
    assert.match(raw, /printer-make-and-model \(textWithoutLanguage\) = .* - IPP Everywhere/);
    assert.equal(cleanMakeAndModel('Example Printer - IPP Everywhere'), 'Example Printer');
    assert.equal(cleanMakeAndModel('HP LaserJet M15w, driverless, cups-filters 1.28.17'), 'HP LaserJet M15w');

    const s = await driver.status();
    assert.equal(s.connected, true);
    assert.equal(s.error_code, PrinterError.none);
    assert.equal(s.strict, true);
    assert.deepEqual([s.make, s.model], ['Example', 'Printer']);
    const cap = await driver.capability();
    assert.ok(cap);
    assert.deepEqual([cap.make, cap.model, cap.support_strict], ['Example', 'Printer', true]);
    const a4 = cap.media_sizes
      .find((m) => m.media_size === 'SVC_MS_A4')!
      .media_types.find((t) => t.media_type === 'SVC_MT_PLAIN')!;
    assert.deepEqual(a4.duplex, ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE', 'SVC_DP_TUMBLE']);
    assert.deepEqual(a4.quality, ['SVC_QU_DRAFT', 'SVC_QU_NORMAL', 'SVC_QU_HIGH']);
    assert.deepEqual(a4.input_slot, ['SVC_IS_AUTO', 'SVC_IS_CASS1', 'SVC_IS_PHOTO']);
  });

  test("every option reaches the printer through CUPS; the count is the printer's", async () => {
    const t = await task(3);
    const h = hooks();
    const out = await driver.print(
      {
        task: t.task,
        file: t.file,
        format: 'pdf',
        options: opts({
          copies: 2,
          duplex: 'SVC_DP_NOTUMBLE',
          quality: 'SVC_QU_HIGH',
          color_mode: 'SVC_CM_MONO',
          input_slot: 'SVC_IS_CASS1',
          page_ranges: [{ from: 2, to: 3 }],
        }),
      },
      h,
    );
    assert.equal(out.state, 'completed', out.message);
    const got = printer.received().find((r) => r.env.IPP_JOB_NAME === t.task);
    assert.ok(got, "the printer got the job under the task's name");
    assert.equal(got.env.IPP_COPIES, '2');
    assert.equal(got.env.IPP_SIDES, 'two-sided-long-edge');
    assert.equal(got.env.IPP_PRINT_QUALITY, 'high');
    assert.equal(got.env.IPP_PRINT_COLOR_MODE, 'monochrome');
    assert.match(got.env.IPP_MEDIA_COL!, /media-size=\{x-dimension=21000 y-dimension=29700\}/);
    assert.match(got.env.IPP_MEDIA_COL!, /media-source=main/);
    assert.match(got.env.IPP_MEDIA_COL!, /media-type=stationery/);
    // CUPS applies page-ranges itself (pdftopdf): the printer gets pages 2 and 3 only, last
    // first, because ippeveprinter's output bin is face-up and CUPS orders the stack for it.
    assert.equal(got.env.IPP_OUTPUT_BIN, 'face-up');
    assert.deepEqual(pageTexts(got.document), ['page 3', 'page 2']);
    // 2 pages two-sided = 2 sides a copy, × 2 copies: what the printer counted and reported.
    assert.equal(got.sides, 4);
    assert.equal(out.impressionsCompleted, 4);
    assert.equal(h.refs.length, 1);
  });
});

describe('CUPS says what it handed on; the printer says what it printed', () => {
  test("out of paper after 1 of 3 sides: CUPS counts 3 and says canceled, the outcome is the printer's 1 side, aborted, media empty", async () => {
    const printer = await startIppEvePrinter({
      name: 'Paperless Eve',
      script: { secondsPerSide: 0.2, paperOutAfter: 1 },
    });
    await cups.addQueue('paperless', printer.uri, 'everywhere');
    const driver = new CupsQueueDriver(cups.queueUri('paperless'), fast);
    try {
      const t = await task(3);
      const out = await driver.print({ task: t.task, file: t.file, format: 'pdf', options: opts() }, hooks());
      assert.equal(out.state, 'aborted');
      assert.equal(out.impressionsCompleted, 1);
      assert.equal(out.printerError, PrinterError.media_empty);
      // CUPS's own record of the same job: the hand-off count, and a state that hides the fault.
      const viaCups = (await driver.queue.jobs('all')).find((j) => j.name === t.task)!;
      assert.equal(viaCups.impressionsCompleted, 3);
      assert.notEqual(viaCups.state, 'aborted');
      // The reason reaches the box's status through the queue.
      const s = await driver.status();
      assert.equal(s.error_code, PrinterError.media_empty, JSON.stringify(s));
      assert.ok(s.state_reasons?.some((r) => r.startsWith('media-empty')));
    } finally {
      await driver.close();
      await printer.close();
    }
  });

  test('cancel through CUPS: Cancel-Job to the queue, the printer stops, the sides it printed', async () => {
    const printer = await startIppEvePrinter({ name: 'Slow Eve', script: { secondsPerSide: 0.3, cancellable: true } });
    await cups.addQueue('slow', printer.uri, 'everywhere');
    const driver = new CupsQueueDriver(cups.queueUri('slow'), fast);
    try {
      const t = await task(10);
      const ac = new AbortController();
      const out = await driver.print(
        { task: t.task, file: t.file, format: 'pdf', options: opts() },
        hooks(ac.signal, (sides) => {
          if (sides >= 1) ac.abort();
        }),
      );
      assert.equal(out.state, 'canceled');
      assert.ok(
        out.impressionsCompleted !== undefined && out.impressionsCompleted >= 1 && out.impressionsCompleted < 10,
        `sides ${out.impressionsCompleted}`,
      );
      const viaCups = (await driver.queue.jobs('all')).find((j) => j.name === t.task)!;
      assert.equal(viaCups.state, 'canceled');
      assert.ok(/cancelled after \d+ sides/.test(printer.log()) || printer.received().length === 1);
    } finally {
      await driver.close();
      await printer.close();
    }
  });

  test('the printer behind the queue switched off mid-job: the box waits unreachableMs, cancels the job in CUPS and fails as not connected', async () => {
    const printer = await startIppEvePrinter({ name: 'Switched Off Eve', script: { secondsPerSide: 0.3 } });
    await cups.addQueue('switched', printer.uri, 'everywhere');
    const driver = new CupsQueueDriver(cups.queueUri('switched'), {
      timing: { pollMs: 50, unreachableMs: 1000 },
      behind: { timing: { pollMs: 50 } },
    });
    try {
      const t = await task(20);
      let failure: unknown;
      const off = new Promise<void>((resolve) => {
        void driver
          .print(
            { task: t.task, file: t.file, format: 'pdf', options: opts() },
            hooks(new AbortController().signal, (sides) => {
              if (sides >= 1) void printer.close().then(resolve);
            }),
          )
          .then(
            () => {
              throw new Error('print() ended without an error');
            },
            (e: unknown) => {
              failure = e;
              resolve();
            },
          );
      });
      await off;
      // print() fails once the box has given up on the printer; wait for that end.
      await beforeHang(
        (async () => {
          while (failure === undefined) await new Promise((r) => setTimeout(r, 50));
        })(),
        30_000,
        'print() to fail',
      );
      // Never "completed": the printer went away mid-job, so it fails as not connected.
      assert.ok(failure instanceof IppTransportError, String(failure));
      const message = (failure as Error).message;
      const viaCups = (await driver.queue.jobs('all')).find((j) => j.name === t.task)!;
      if (/the job was cancelled in CUPS/.test(message)) {
        // CUPS still held the job (its backend retrying): the box cancelled it there.
        assert.match(
          message,
          /the printer behind the CUPS queue \(ipp:\/\/localhost:\d+\/ipp\/print\) did not answer for 1 s; the job was cancelled in CUPS/,
        );
        assert.equal(viaCups.state, 'canceled');
        // A restart would find the job in CUPS and follow it: it settles as not connected too.
        await assert.rejects(driver.follow(String(viaCups.id), hooks()), IppTransportError);
      } else {
        // CUPS's backend had handed the data on and called the job completed once it lost the
        // printer (a busy machine lets it get there first): CUPS's word is not taken.
        assert.match(
          message,
          /the printer behind the CUPS queue \(ipp:\/\/localhost:\d+\/ipp\/print\) does not answer/,
        );
        assert.equal(viaCups.state, 'completed');
      }
    } finally {
      await driver.close();
      await printer.close();
    }
  });

  test('a queue stopped in CUPS (cupsdisable) reads as paused; the printer switched off behind it, as not connected', async () => {
    const printer = await startIppEvePrinter({ name: 'Door Eve' });
    await cups.addQueue('door', printer.uri, 'everywhere');
    const driver = new CupsQueueDriver(cups.queueUri('door'), fast);
    try {
      execFileSync('cupsdisable', ['-h', cups.server, 'door']);
      let s = await driver.status();
      // CUPS 2.4 keeps printer-state idle for a disabled queue and says so in its reasons.
      assert.ok(s.state_reasons?.includes('paused'), JSON.stringify(s));
      assert.equal(s.error_code, PrinterError.paused, JSON.stringify(s));
      execFileSync('cupsenable', ['-h', cups.server, 'door']);
      s = await driver.status();
      assert.equal(s.error_code, PrinterError.none, JSON.stringify(s));
      await printer.close();
      s = await driver.status();
      assert.equal(s.connected, false);
      assert.equal(s.error_code, PrinterError.unreachable);
    } finally {
      await driver.close();
      await printer.close();
    }
  });
});

describe('queues with a PPD', () => {
  test("the cups-filters raster PPD in front of ippeveprinter: CUPS rasterises, the options arrive as IPP, the count is the printer's", async () => {
    const printer = await startIppEvePrinter({
      name: 'Raster Eve',
      formats: ['application/pdf', 'image/jpeg', 'image/pwg-raster'],
      script: { secondsPerSide: 0.02 },
    });
    await cups.addQueue('raster', printer.uri, 'drv:///cupsfilters.drv/pwgrast.ppd');
    const driver = new CupsQueueDriver(cups.queueUri('raster'), fast);
    try {
      const cap = await driver.capability();
      assert.ok(cap);
      // The capability is the PPD's (one quality, its own trays), the make and model the printer's.
      assert.deepEqual([cap.make, cap.model, cap.support_strict], ['Example', 'Printer', true]);
      const a4 = cap.media_sizes.find((m) => m.media_size === 'SVC_MS_A4')!.media_types[0]!;
      assert.deepEqual(a4.quality, ['SVC_QU_NORMAL']);
      const t = await task(3);
      const out = await driver.print(
        {
          task: t.task,
          file: t.file,
          format: 'pdf',
          options: opts({
            copies: 2,
            duplex: 'SVC_DP_NOTUMBLE',
            color_mode: 'SVC_CM_MONO',
            page_ranges: [{ from: 2, to: 3 }],
          }),
        },
        hooks(),
      );
      assert.equal(out.state, 'completed', out.message);
      const got = printer.received().find((r) => r.env.IPP_JOB_NAME === t.task)!;
      assert.equal(got.env.CONTENT_TYPE, 'image/pwg-raster');
      assert.equal(got.env.IPP_SIDES, 'two-sided-long-edge');
      assert.equal(got.env.IPP_PRINT_COLOR_MODE, 'monochrome');
      assert.match(got.env.IPP_MEDIA_COL!, /x-dimension=21000 y-dimension=29700/);
      // Copies and the page range are in the raster itself: 2 pages × 2 copies.
      assert.equal(got.sides, 4);
      assert.equal(out.impressionsCompleted, 4);
    } finally {
      await driver.close();
      await printer.close();
    }
  });

  test('a PPD whose page size the printer refuses: CUPS says "canceled at printer", the box says aborted with CUPS\'s words, 0 sides', async () => {
    const printer = await startIppEvePrinter({ name: 'Strict Eve' });
    await cups.addQueue('generic', printer.uri, 'lsb/usr/cupsfilters/Generic-PDF_Printer-PDF.ppd');
    const driver = new CupsQueueDriver(cups.queueUri('generic'), fast);
    try {
      const t = await task(1);
      const out = await driver.print({ task: t.task, file: t.file, format: 'pdf', options: opts() }, hooks());
      // The PPD's A4 is 20990 x 29704; ippeveprinter refuses it at Validate-Job.
      assert.deepEqual([out.state, out.impressionsCompleted], ['aborted', 0]);
      assert.match(out.message!, /Printer cannot print with supplied options/);
      assert.equal((await driver.queue.jobs('all')).find((j) => j.name === t.task)?.state, 'canceled');
      assert.equal(printer.received().length, 0);
    } finally {
      await driver.close();
      await printer.close();
    }
  });

  test('a PPD queue to a raw socket printer: it prints, but nothing reports printed sides, so no strict mode', async () => {
    const received: Buffer[] = [];
    const sink: Server = createServer((s) => {
      s.on('data', (c: Buffer) => received.push(c));
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const port = (sink.address() as { port: number }).port;
    await cups.addQueue('socket', `socket://127.0.0.1:${port}`, 'lsb/usr/cupsfilters/Generic-PDF_Printer-PDF.ppd');
    const driver = new CupsQueueDriver(cups.queueUri('socket'), fast);
    try {
      const s = await driver.status();
      assert.deepEqual([s.connected, s.strict, s.make, s.model], [true, false, 'Generic', 'PDF Printer']);
      const cap = await driver.capability();
      assert.equal(cap?.support_strict, false);
      const t = await task(2);
      const out = await driver.print(
        { task: t.task, file: t.file, format: 'pdf', options: opts({ strict: false }) },
        hooks(),
      );
      assert.equal(out.state, 'completed', out.message);
      // CUPS says it counted sides; they are hand-off counts and not passed on.
      assert.equal(out.impressionsCompleted, undefined);
      // The PPD wraps the PDF in PJL (a UEL first), as it would for a real PDF printer.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: PJL begins with ESC %-12345X (the bytes the printer must receive)
      assert.match(Buffer.concat(received).toString('latin1'), /^\x1b%-12345X[\s\S]*%PDF-/);
    } finally {
      await driver.close();
      await new Promise<void>((r) => {
        sink.close(() => r());
      });
    }
  });
});

describe("a CUPS with Debian's own access rules (no password for the box)", () => {
  test('the box prints, follows and cancels its own job; CUPS refuses it a queue operation', async () => {
    const printer = await startIppEvePrinter({
      name: 'Debian Eve',
      script: { secondsPerSide: 0.3, cancellable: true },
    });
    await cups.addQueue('debian', printer.uri, 'everywhere');
    await cups.stop();
    await cups.start(debianPolicy());
    const driver = new CupsQueueDriver(cups.queueUri('debian'), fast);
    try {
      assert.equal((await driver.status()).connected, true);
      const t = await task(10);
      const ac = new AbortController();
      const out = await driver.print(
        { task: t.task, file: t.file, format: 'pdf', options: opts() },
        hooks(ac.signal, (sides) => {
          if (sides >= 1) ac.abort();
        }),
      );
      assert.equal(out.state, 'canceled', out.message);
      assert.ok(
        out.impressionsCompleted !== undefined && out.impressionsCompleted >= 1 && out.impressionsCompleted < 10,
      );
      // Its own job is visible to it by name (find() after a restart relies on it).
      assert.ok(await driver.find(t.task));
      // Disabling the queue needs an operator's password.
      assert.throws(() => execFileSync('cupsdisable', ['-h', cups.server, 'debian'], { stdio: 'pipe', input: '' }));
    } finally {
      await driver.close();
      await printer.close();
      await cups.stop();
      await cups.start();
    }
  });
});
