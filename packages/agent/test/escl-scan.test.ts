// EsclScannerDriver.scan() and waitForPaper() against the eSCL test server (escl-server.ts: no
// eSCL scanner server exists in Debian, so the harness brings one; its pages come from the real
// SANE test backend through scanimage).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EsclScannerDriver } from '../src/drivers/escl/scanner-driver.ts';
import { compressionFactor, parseCapabilities, scanSettings } from '../src/drivers/escl/settings.ts';
import { NotSupportedError, ScanFault, type ScannedPage, type ScanRequest } from '../src/drivers/types.ts';
import { jpegInfo } from '../src/media/jpeg-info.ts';
import { pageToJpeg } from '../src/media/jpeg.ts';
import { startEsclServer } from './escl-server.ts';
import { saneTestConfig, type SaneTestConfig } from './sane.ts';

const req = (o: Partial<ScanRequest> = {}): ScanRequest => ({
  duplex: true,
  resolution: 150,
  color: 'color',
  jpegQuality: 85,
  ...o,
});
const fast = { retryDelayMs: 1, paperPollMs: 2 };

async function collect(
  it: AsyncIterable<ScannedPage>,
  each?: (p: ScannedPage) => void,
): Promise<{ pages: ScannedPage[]; error?: unknown }> {
  const pages: ScannedPage[] = [];
  try {
    for await (const p of it) {
      pages.push(p);
      each?.(p);
    }
    return { pages };
  } catch (error) {
    return { pages, error };
  }
}

describe('scanning over eSCL', () => {
  let sane: SaneTestConfig;
  before(() => {
    sane = saneTestConfig();
  });
  after(() => sane.close());

  test('a duplex job: the ScanSettings asked for, front/back pages until 404, JPEG at the quality asked', async () => {
    const server = await startEsclServer({ sane, sheets: 2 });
    try {
      const d = new EsclScannerDriver(server.uri, fast);
      const r = await collect(d.scan(req(), new AbortController().signal));
      assert.equal(r.error, undefined);
      assert.deepEqual(
        r.pages.map((p) => [p.sheet, p.front]),
        [
          [1, true],
          [1, false],
          [2, true],
          [2, false],
        ],
      );
      assert.deepEqual(server.jobs[0]!.settings, {
        Version: '2.63',
        Intent: 'Document',
        InputSource: 'Feeder',
        DocumentFormat: 'image/jpeg',
        DocumentFormatExt: 'image/jpeg',
        ColorMode: 'RGB24',
        XResolution: '150',
        YResolution: '150',
        Duplex: 'true',
        CompressionFactor: '15',
        XOffset: '0',
        YOffset: '0',
        Width: '2480',
        Height: '3508',
        ContentRegionUnits: 'escl:ThreeHundredthsOfInches',
      });
      for (const p of r.pages) {
        const info = p.image.format === 'jpeg' ? jpegInfo(p.image.data) : undefined;
        assert.deepEqual([p.dpi, p.width, p.height, info?.components, info?.quality], [150, 1240, 1753, 3, 85]);
        // The device made it at the quality asked: the pipeline passes it through.
        assert.equal((await pageToJpeg(p, 85, 'color')).passedThrough, true);
      }
      assert.equal(server.jobs[0]!.deleted, false);
      assert.equal(server.sheets, 0);
    } finally {
      await server.close();
    }
  });

  test('simplex greyscale; real-device quirks: a relative Location and a 503 on the first NextDocument', async () => {
    const server = await startEsclServer({ sane, sheets: 3, relativeLocation: true, busyFirst: 2 });
    try {
      const r = await collect(
        new EsclScannerDriver(server.uri, fast).scan(
          req({ duplex: false, color: 'grayscale', resolution: 300, jpegQuality: 60 }),
          new AbortController().signal,
        ),
      );
      assert.equal(r.error, undefined);
      assert.deepEqual(
        r.pages.map((p) => [p.sheet, p.front]),
        [
          [1, true],
          [2, true],
          [3, true],
        ],
      );
      assert.ok(
        r.pages.every(
          (p) =>
            p.image.format === 'jpeg' &&
            jpegInfo(p.image.data)?.components === 1 &&
            jpegInfo(p.image.data)?.quality === 60,
        ),
      );
      const s = server.jobs[0]!.settings;
      assert.deepEqual(
        [s.Duplex, s.ColorMode, s.XResolution, s.CompressionFactor],
        ['false', 'Grayscale8', '300', '40'],
      );
      const next = server.requests.filter((x) => x.endsWith('/NextDocument'));
      assert.equal(next.length, 2 + 3 + 1); // two 503s, three pages, the 404
    } finally {
      await server.close();
    }
  });

  test('an empty feeder is no fault and no job; a jam mid-stack keeps the pages before it; a door open fails at once', async () => {
    const server = await startEsclServer({ sane, sheets: 0 });
    try {
      const d = new EsclScannerDriver(server.uri, fast);
      const empty = await collect(d.scan(req(), new AbortController().signal));
      assert.deepEqual([empty.pages.length, empty.error, server.jobs.length], [0, undefined, 0]);
      server.sheets = 4;
      server.jamAfter(1);
      const jam = await collect(d.scan(req(), new AbortController().signal));
      assert.deepEqual(
        jam.pages.map((p) => [p.sheet, p.front]),
        [
          [1, true],
          [1, false],
        ],
      );
      assert.ok(jam.error instanceof ScanFault && jam.error.kind === 'jammed', String(jam.error));
      assert.equal(server.jobs[0]!.deleted, true);
      const st = await d.status();
      assert.deepEqual([st.state, st.adf_loaded], ['stopped', false]);
      server.sheets = 2;
      server.adfState = 'ScannerAdfDoorOpen';
      const door = await collect(d.scan(req(), new AbortController().signal));
      assert.ok(door.error instanceof ScanFault && door.error.kind === 'cover-open' && door.pages.length === 0);
      assert.equal(server.jobs.length, 1);
    } finally {
      await server.close();
    }
  });

  test('abort and leaving early DELETE the job on the scanner', async () => {
    const server = await startEsclServer({ sane, sheets: 5 });
    try {
      const d = new EsclScannerDriver(server.uri, fast);
      const ac = new AbortController();
      const r = await collect(d.scan(req(), ac.signal), () => ac.abort(new Error('stop pressed')));
      assert.equal((r.error as Error).message, 'stop pressed');
      assert.equal(r.pages.length, 1);
      assert.equal(server.jobs[0]!.deleted, true);
      for await (const p of d.scan(req(), new AbortController().signal)) {
        assert.equal(p.sheet, 1);
        break;
      }
      assert.equal(server.jobs[1]!.deleted, true);
      assert.ok(server.requests.includes(`DELETE /eSCL/ScanJobs/${server.jobs[1]!.id}`));
    } finally {
      await server.close();
    }
  });

  test("continuous mode: waitForPaper polls AdfState until the feeder is loaded (Kyocera's ScannerAdfProcessing counts)", async () => {
    const server = await startEsclServer({ sane, sheets: 0 });
    try {
      const d = new EsclScannerDriver(server.uri, fast);
      assert.equal(await d.waitForPaper(new AbortController().signal, 20), false);
      const waiting = d.waitForPaper(new AbortController().signal, 0);
      server.sheets = 3;
      assert.equal(await waiting, true);
      server.adfState = 'ScannerAdfProcessing';
      assert.equal(await d.waitForPaper(new AbortController().signal, 0), true);
      server.adfState = 'ScannerAdfEmpty';
      const ac = new AbortController();
      const aborted = d.waitForPaper(ac.signal, 0);
      ac.abort();
      assert.equal(await aborted, false);
    } finally {
      await server.close();
    }
  });

  test('a resolution the scanner does not list is refused before any job; an absent scanner is unavailable', async () => {
    const server = await startEsclServer({ sane });
    try {
      const r = await collect(
        new EsclScannerDriver(server.uri, fast).scan(req({ resolution: 200 }), new AbortController().signal),
      );
      assert.ok(
        r.error instanceof NotSupportedError &&
          /cannot scan at 200 dpi \(it lists 150, 300, 600\)/.test(r.error.message),
      );
      assert.equal(server.jobs.length, 0);
    } finally {
      await server.close();
    }
    const gone = await collect(
      new EsclScannerDriver(server.uri, { ...fast, timeoutMs: 1000 }).scan(req(), new AbortController().signal),
    );
    assert.ok(gone.error instanceof ScanFault && gone.error.kind === 'unavailable');
  });
});

test('ScanSettings: platen when there is no feeder, duplex only when the ADF has it, region clipped to the device', () => {
  const platenOnly = parseCapabilities(
    '<scan:Platen><scan:PlatenInputCaps><scan:MaxWidth>2400</scan:MaxWidth><scan:MaxHeight>3300</scan:MaxHeight><scan:ColorMode>RGB24</scan:ColorMode><scan:XResolution>300</scan:XResolution></scan:PlatenInputCaps></scan:Platen>',
  );
  const p = scanSettings(platenOnly, req({ resolution: 300 }), 'x');
  assert.deepEqual([p.feeder, p.duplex], [false, false]);
  assert.match(p.xml, /<pwg:InputSource>Platen<\/pwg:InputSource>/);
  assert.match(p.xml, /<pwg:Width>2400<\/pwg:Width><pwg:Height>3300<\/pwg:Height>/);
  assert.doesNotMatch(p.xml, /Duplex|CompressionFactor/);
  const simplexAdf = parseCapabilities(
    '<scan:Adf><scan:AdfSimplexInputCaps><scan:XResolution>200</scan:XResolution></scan:AdfSimplexInputCaps></scan:Adf>',
  );
  assert.match(scanSettings(simplexAdf, req({ resolution: 200 }), 'x').xml, /<scan:Duplex>false<\/scan:Duplex>/);
  assert.throws(
    () =>
      scanSettings(
        parseCapabilities(
          '<scan:Adf><scan:ColorMode>Grayscale8</scan:ColorMode><scan:XResolution>200</scan:XResolution></scan:Adf>',
        ),
        req({ resolution: 200 }),
        'mono',
      ),
    /mono has no RGB24 colour mode/,
  );
  assert.deepEqual(
    [
      compressionFactor(100, { min: 0, max: 100, step: 1 }),
      compressionFactor(1, { min: 0, max: 100, step: 1 }),
      compressionFactor(85, { min: 0, max: 100, step: 1 }),
      compressionFactor(50, { min: 1, max: 10, step: 3 }),
    ],
    [0, 100, 15, 7],
  );
});
