// The simulated duplex ADF: paper loaded at run time, generated and given pages, faults at run
// time and mid-stack, continuous-mode paper sensing, URI options, pacing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { SimScanner } from '../src/drivers/sim/scanner.ts';
import { NotSupportedError, ScanFault, type ScannedPage, type ScanRequest } from '../src/drivers/types.ts';
import { jpegInfo } from '../src/media/jpeg-info.ts';

const req = (o: Partial<ScanRequest> = {}): ScanRequest => ({
  duplex: true,
  resolution: 100,
  color: 'color',
  jpegQuality: 80,
  ...o,
});

async function collect(
  it: AsyncIterable<ScannedPage>,
  each?: (p: ScannedPage, i: number) => void,
): Promise<{ pages: ScannedPage[]; error?: unknown }> {
  const pages: ScannedPage[] = [];
  try {
    for await (const p of it) {
      pages.push(p);
      each?.(p, pages.length - 1);
    }
    return { pages };
  } catch (error) {
    return { pages, error };
  }
}

test('an empty feeder: adf_loaded false, a scan delivers nothing, loading paper changes that', async () => {
  const s = new SimScanner('sim:');
  const changes: number[] = [];
  s.watch(() => changes.push(s.sheets));
  assert.equal((await s.status()).adf_loaded, false);
  assert.deepEqual((await collect(s.scan(req(), new AbortController().signal))).pages, []);
  s.load(2);
  assert.equal(s.sheets, 2);
  assert.deepEqual(await s.status(), {
    connected: true,
    supported: true,
    make: 'boxhub',
    model: 'Sim Duplex ADF',
    connection_type: 'virtual',
    state: 'idle',
    error_code: 0,
    adf_loaded: true,
    duplex: true,
    resolutions: [100, 150, 200, 240, 300, 400, 600],
  });
  s.unload();
  assert.equal((await s.status()).adf_loaded, false);
  assert.ok(changes.includes(2) && changes.at(-1) === 0, `change events: ${changes.join(',')}`);
  await s.close();
});

test('duplex colour: front and back of each sheet in order, A4 JPEG at the asked quality', async () => {
  const s = new SimScanner('sim:');
  s.load([{ front: 'text', back: 'text' }, 'text', { front: 'blank', back: { blank: { showThrough: true } } }]);
  const { pages, error } = await collect(
    s.scan(req({ resolution: 150, jpegQuality: 77 }), new AbortController().signal),
  );
  assert.equal(error, undefined);
  assert.deepEqual(
    pages.map((p) => [p.sheet, p.front]),
    [
      [1, true],
      [1, false],
      [2, true],
      [2, false],
      [3, true],
      [3, false],
    ],
  );
  for (const p of pages) {
    assert.equal(p.image.format, 'jpeg');
    if (p.image.format !== 'jpeg') continue;
    const info = jpegInfo(p.image.data)!;
    assert.deepEqual(
      [p.width, p.height, p.dpi, info.width, info.height, info.components, info.quality, p.image.quality],
      [1240, 1754, 150, 1240, 1754, 3, 77, 77],
    );
  }
  assert.equal(s.sheets, 0);
  assert.equal((await s.status()).adf_loaded, false);
});

test('simplex scans fronts only; greyscale gives one-component JPEGs', async () => {
  const s = new SimScanner('sim:');
  s.load(3);
  const { pages } = await collect(s.scan(req({ duplex: false, color: 'grayscale' }), new AbortController().signal));
  assert.deepEqual(
    pages.map((p) => [p.sheet, p.front]),
    [
      [1, true],
      [2, true],
      [3, true],
    ],
  );
  for (const p of pages) assert.equal(p.image.format === 'jpeg' && jpegInfo(p.image.data)?.components, 1);
});

test('a jam after N sheets: pages before it stand, the jammed sheet stays in the feeder, clearing resumes', async () => {
  const s = new SimScanner('sim:');
  s.load(5);
  s.jamAfter(2);
  const first = await collect(s.scan(req(), new AbortController().signal));
  assert.deepEqual(
    first.pages.map((p) => [p.sheet, p.front]),
    [
      [1, true],
      [1, false],
      [2, true],
      [2, false],
    ],
  );
  assert.ok(first.error instanceof ScanFault && first.error.kind === 'jammed', String(first.error));
  assert.deepEqual(await s.status().then((x) => [x.state, x.error_code, x.adf_loaded]), ['stopped', 2001, true]);
  assert.equal(s.sheets, 3);
  // Still jammed: a new scan fails before any page.
  const again = await collect(s.scan(req(), new AbortController().signal));
  assert.ok(again.error instanceof ScanFault && again.error.kind === 'jammed' && again.pages.length === 0);
  s.setFault(null);
  assert.deepEqual(await s.status().then((x) => [x.state, x.error_code]), ['idle', 0]);
  const rest = await collect(s.scan(req(), new AbortController().signal));
  assert.equal(rest.error, undefined);
  assert.equal(rest.pages.length, 6);
});

test('cover opened during a scan stops it before the next sheet; the state says processing while scanning', async () => {
  const s = new SimScanner('sim:');
  s.load(4);
  const states: (string | undefined)[] = [];
  const r = await collect(s.scan(req({ duplex: false }), new AbortController().signal), (p) => {
    void s.status().then((x) => states.push(x.state));
    if (p.sheet === 2) s.setFault('cover-open');
  });
  assert.deepEqual(
    r.pages.map((p) => p.sheet),
    [1, 2],
  );
  assert.ok(r.error instanceof ScanFault && r.error.kind === 'cover-open');
  assert.deepEqual(states, ['processing', 'processing']);
  assert.deepEqual(await s.status().then((x) => [x.state, x.error_code, x.adf_loaded]), ['stopped', 2002, true]);
  assert.equal(s.sheets, 2);
});

test('aborting stops at once with the abort reason; the scanner is idle again', async () => {
  const s = new SimScanner('sim:');
  s.load(5);
  const ac = new AbortController();
  const r = await collect(s.scan(req(), ac.signal), (p) => {
    if (p.sheet === 2 && p.front) ac.abort(new Error('stopped by the test'));
  });
  assert.equal(r.pages.length, 3);
  assert.equal((r.error as Error).message, 'stopped by the test');
  assert.equal((await s.status()).state, 'idle');
  assert.equal(s.sheets, 3);
});

test('waitForPaper: true at once with paper, true as soon as paper is loaded, false on timeout or abort', async () => {
  const s = new SimScanner('sim:');
  const never = new AbortController().signal;
  assert.equal(await s.waitForPaper(never, 1), false);
  const waiting = s.waitForPaper(never, 0);
  s.load(1);
  assert.equal(await waiting, true);
  assert.equal(await s.waitForPaper(never, 0), true);
  s.unload();
  const ac = new AbortController();
  const aborted = s.waitForPaper(ac.signal, 0);
  ac.abort();
  assert.equal(await aborted, false);
});

test('given images: bytes of the right resolution and colour pass unchanged; others are scanned as the scanner would', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-sim-'));
  try {
    const card = await sharp({
      create: { width: 827, height: 1169, channels: 3, background: { r: 240, g: 238, b: 230 } },
    })
      .jpeg({ quality: 88 })
      .toBuffer();
    const png = join(dir, 'back.png');
    writeFileSync(
      png,
      await sharp({ create: { width: 827, height: 1169, channels: 3, background: '#fff' } })
        .png()
        .toBuffer(),
    );
    const s = new SimScanner('sim:');
    s.load([{ front: { image: card, dpi: 100 }, back: { image: png, dpi: 100 } }]);
    const a = (await collect(s.scan(req({ resolution: 100, jpegQuality: 90 }), new AbortController().signal))).pages;
    assert.equal(a.length, 2);
    assert.ok(a[0]!.image.format === 'jpeg' && a[0]!.image.data.equals(card) && a[0]!.image.quality === undefined);
    assert.equal(a[1]!.image.format, 'jpeg'); // the sim hands pages over as JPEG: the PNG is scanned
    s.load([{ front: { image: card, dpi: 100 } }]);
    const b = (
      await collect(
        s.scan(
          req({ resolution: 200, color: 'grayscale', jpegQuality: 70, duplex: false }),
          new AbortController().signal,
        ),
      )
    ).pages;
    const info = b[0]!.image.format === 'jpeg' ? jpegInfo(b[0]!.image.data) : undefined;
    assert.deepEqual([b[0]!.width, b[0]!.height, info?.components, info?.quality], [1654, 2338, 1, 70]);
    assert.throws(() => s.load([{ front: { image: join(dir, 'missing.jpg') } }]), /does not exist/);
    assert.throws(() => s.load([{ front: { image: Buffer.from('GIF89a') } }]), /JPEG or a PNG/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('URI options: paper, back, jam, fault, format; bad values are refused with a clear message', async () => {
  const s = new SimScanner('sim:?paper=20&back=text');
  assert.equal(s.sheets, 20);
  assert.equal((await s.status()).adf_loaded, true);
  const jam = new SimScanner('sim:?paper=3&jam=1');
  const r = await collect(jam.scan(req({ duplex: false }), new AbortController().signal));
  assert.deepEqual([r.pages.length, r.error instanceof ScanFault && r.error.kind], [1, 'jammed']);
  assert.deepEqual(
    await new SimScanner('sim:?fault=cover-open&paper=1').status().then((x) => [x.state, x.error_code, x.adf_loaded]),
    ['stopped', 2002, true],
  );
  const raw = new SimScanner('sim:?paper=1&format=raw');
  const p = (await collect(raw.scan(req({ duplex: false, color: 'grayscale' }), new AbortController().signal)))
    .pages[0]!;
  assert.ok(p.image.format === 'raw' && p.image.channels === 1 && p.image.data.length === p.width * p.height);
  const png = new SimScanner('sim:?paper=1&format=png');
  assert.equal(
    (await collect(png.scan(req({ duplex: false }), new AbortController().signal))).pages[0]!.image.format,
    'png',
  );
  for (const [uri, msg] of [
    ['sim:?paper=-1', /paper must be an integer 0-10000/],
    ['sim:?paper=lots', /paper must be/],
    ['sim:?back=photo', /back must be blank or text/],
    ['sim:?fault=fire', /fault must be jammed or cover-open/],
    ['sim:?ppm=0', /ppm must be/],
    ['sim:?format=tiff', /format must be jpeg, raw or png/],
    ['sim:?refill=5', /refill needs paper=N/],
    ['sim:?paper=2&refill=-1', /refill must be seconds/],
  ] as const)
    assert.throws(() => new SimScanner(uri), msg, uri);
});

test('refill: the demo feeder holds paper again after it ran empty', async () => {
  const s = new SimScanner('sim:?paper=1&refill=0.01');
  assert.equal((await collect(s.scan(req(), new AbortController().signal))).pages.length, 2);
  assert.equal(s.sheets, 0);
  assert.equal(await s.waitForPaper(new AbortController().signal, 0), true);
  assert.equal(s.sheets, 1);
  await s.close();
});

test('pacing: ppm=120 takes 500 ms per page (through the injected sleep)', async () => {
  const waits: number[] = [];
  const s = new SimScanner('sim:?paper=2&ppm=120', {
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  assert.equal((await collect(s.scan(req(), new AbortController().signal))).pages.length, 4);
  assert.deepEqual(waits, [500, 500, 500, 500]);
  const fast = new SimScanner('sim:?paper=2', {
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  await collect(fast.scan(req(), new AbortController().signal));
  assert.equal(waits.length, 4);
});

test('a resolution the scanner lacks is NotSupportedError; a disconnected scanner is unavailable', async () => {
  const s = new SimScanner('sim:?paper=1');
  const bad = await collect(s.scan(req({ resolution: 1200 }), new AbortController().signal));
  assert.ok(bad.error instanceof NotSupportedError && /1200 dpi/.test(bad.error.message));
  s.setConnected(false);
  const off = await collect(s.scan(req(), new AbortController().signal));
  assert.ok(off.error instanceof ScanFault && off.error.kind === 'unavailable');
  assert.deepEqual(await s.status(), { connected: false, supported: false });
  assert.equal(s.sheets, 1);
});

test('log=FILE: a line per side handed over, naming the task the pages are for', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sim-scanner-log-'));
  try {
    const log = join(dir, 'scanner.jsonl');
    const s = new SimScanner(`sim:?paper=2&log=${encodeURIComponent(log)}`);
    const { pages } = await collect(s.scan(req({ task: 't-1' }), new AbortController().signal));
    assert.equal(pages.length, 4);
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { task: string; sheet: number; front: boolean });
    assert.deepEqual(
      lines.map((l) => [l.task, l.sheet, l.front]),
      [
        ['t-1', 1, true],
        ['t-1', 1, false],
        ['t-1', 2, true],
        ['t-1', 2, false],
      ],
    );
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('generated sides drawn once are reused by side and colour: the same side gives the same pixels, another look or colour its own', async () => {
  const s = new SimScanner('sim:?format=raw');
  s.load([
    { front: { text: { seed: 1 } }, back: { text: { seed: 1 } } },
    { front: { text: { seed: 1 } }, back: { text: { seed: 1, paper: 200 } } },
  ]);
  const { pages } = await collect(s.scan(req({ color: 'grayscale' }), new AbortController().signal));
  assert.equal(pages.length, 4);
  const bytes = pages.map((p) => Buffer.from(p.image.data));
  const mean = (b: Buffer) => b.reduce((a, v) => a + v, 0) / b.length;
  assert.ok(bytes[0]!.equals(bytes[1]!) && bytes[0]!.equals(bytes[2]!), 'the same side, the same pixels');
  // A raster kept by a key without the look would hand the darker paper the default paper's page.
  assert.ok(mean(bytes[0]!) - mean(bytes[3]!) > 30, `paper 200 is darker: ${mean(bytes[0]!)} vs ${mean(bytes[3]!)}`);
  s.load([{ front: { text: { seed: 1 } } }]);
  const colour = await collect(s.scan(req({ duplex: false, color: 'color' }), new AbortController().signal));
  assert.equal(colour.pages[0]!.image.format === 'raw' && colour.pages[0]!.image.channels, 3);
});
