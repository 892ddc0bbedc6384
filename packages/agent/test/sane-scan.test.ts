// SaneScannerDriver.scan() and waitForPaper() through the real scanimage and SANE's `test`
// backend: its ADF holds 10 sheets per scanimage run, it has no duplex and no paper sensor, and
// `--read-return-value` makes sane_read return a fault. A few small shell wrappers around the
// real scanimage add what the backend cannot do: a jam after two pages (two real runs), a pid
// file to see the process die, and a page-loaded sensor (the one stand-in: no test device has one).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SaneScannerDriver } from '../src/drivers/sane/scanner-driver.ts';
import { faultOfExit, planScan, statusOfBatchEnd } from '../src/drivers/sane/plan.ts';
import { parseOptions } from '../src/drivers/sane/options.ts';
import { NotSupportedError, ScanFault, type ScannedPage, type ScanRequest } from '../src/drivers/types.ts';
import { jpegInfo } from '../src/media/jpeg-info.ts';
import { saneTestConfig, type SaneTestConfig } from './sane.ts';

const req = (o: Partial<ScanRequest> = {}): ScanRequest => ({
  duplex: false,
  resolution: 100,
  color: 'color',
  jpegQuality: 85,
  ...o,
});

async function collect(
  it: AsyncIterable<ScannedPage>,
  each?: (p: ScannedPage) => void | Promise<void>,
): Promise<{ pages: ScannedPage[]; error?: unknown }> {
  const pages: ScannedPage[] = [];
  try {
    for await (const p of it) {
      pages.push(p);
      await each?.(p);
    }
    return { pages };
  } catch (error) {
    return { pages, error };
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('scanning with scanimage and the SANE test backend', () => {
  let sane: SaneTestConfig;
  let tmp: string;
  let n = 0;
  const fresh = () => {
    const d = join(tmp, `t${++n}`);
    mkdirSync(d);
    return d;
  };
  const script = (name: string, body: string) => {
    const p = join(sane.dir, name);
    writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return p;
  };
  before(() => {
    sane = saneTestConfig();
    tmp = join(sane.dir, 'tmp');
    mkdirSync(tmp);
  });
  after(() => sane.close());

  test('ADF colour: the 10 sheets of the feeder as A4 JPEGs at the asked quality; temp files removed', async () => {
    const tmpDir = fresh();
    const d = new SaneScannerDriver('sane:test', {
      env: sane.env,
      tmpDir,
      extraArgs: ['--test-picture', 'Color pattern'],
    });
    const states: (string | undefined)[] = [];
    const r = await collect(d.scan(req(), new AbortController().signal), async () => {
      states.push((await d.status()).state);
    });
    assert.equal(r.error, undefined);
    assert.deepEqual(
      r.pages.map((p) => [p.sheet, p.front, p.dpi]),
      Array.from({ length: 10 }, (_, i) => [i + 1, true, 100]),
    );
    for (const p of r.pages) {
      const info = p.image.format === 'jpeg' ? jpegInfo(p.image.data) : undefined;
      assert.deepEqual(
        [
          p.width,
          p.height,
          info?.width,
          info?.height,
          info?.components,
          info?.quality,
          p.image.format === 'jpeg' && p.image.quality,
        ],
        [826, 1169, 826, 1169, 3, 85, 85],
      );
    }
    // The device is held by scanimage while it scans: status says processing without opening it.
    assert.ok(
      states.every((s) => s === 'processing'),
      states.join(),
    );
    assert.equal((await d.status()).state, 'idle');
    assert.deepEqual(readdirSync(tmpDir), []);
  });

  test('greyscale, and a duplex request on the simplex test device scans the fronts', async () => {
    const d = new SaneScannerDriver('sane:test', { env: sane.env, tmpDir: fresh() });
    const r = await collect(
      d.scan(req({ color: 'grayscale', duplex: true, jpegQuality: 60 }), new AbortController().signal),
    );
    assert.equal(r.pages.length, 10);
    assert.ok(
      r.pages.every(
        (p) =>
          p.front &&
          p.image.format === 'jpeg' &&
          jpegInfo(p.image.data)?.components === 1 &&
          jpegInfo(p.image.data)?.quality === 60,
      ),
    );
  });

  test('a resolution the device does not list is refused before scanning', async () => {
    const d = new SaneScannerDriver('sane:test', { env: sane.env });
    const r = await collect(d.scan(req({ resolution: 250 }), new AbortController().signal));
    assert.ok(r.error instanceof NotSupportedError);
    assert.match(
      (r.error as Error).message,
      /test cannot scan at 250 dpi \(it lists 100, 150, 200, 240, 300, 400, 600, 1200\)/,
    );
  });

  test('pages stream: the first page arrives while scanimage is still scanning', async () => {
    const pids = join(sane.dir, 'pids-stream');
    const bin = script('pid-scanimage', `echo $$ >> "${pids}"\nexec scanimage "$@"`);
    const d = new SaneScannerDriver('sane:test', {
      env: sane.env,
      bin,
      tmpDir: fresh(),
      extraArgs: ['--read-delay=yes', '--read-delay-duration=10000', '--batch-count=3'],
    });
    let stillScanning: boolean | undefined;
    const r = await collect(d.scan(req({ color: 'grayscale' }), new AbortController().signal), () => {
      if (stillScanning === undefined)
        stillScanning = alive(Number(readFileSync(pids, 'utf8').trim().split('\n').at(-1)));
    });
    assert.equal(r.pages.length, 3);
    assert.equal(stillScanning, true);
  });

  test('faults: JAMMED and COVER_OPEN are ScanFaults, NO_DOCS is an empty feeder, a missing device is unavailable', async () => {
    const tmpDir = fresh();
    // A bound on each batch: should scanimage hang, the assertion below says which case did.
    const withReturn = (v: string) =>
      new SaneScannerDriver('sane:test', {
        env: sane.env,
        tmpDir,
        extraArgs: ['--read-return-value', v],
        pageTimeoutMs: 15_000,
      });
    const jam = await collect(withReturn('SANE_STATUS_JAMMED').scan(req(), new AbortController().signal));
    assert.ok(
      jam.error instanceof ScanFault && jam.error.kind === 'jammed' && jam.pages.length === 0,
      String(jam.error),
    );
    const cover = await collect(withReturn('SANE_STATUS_COVER_OPEN').scan(req(), new AbortController().signal));
    assert.ok(cover.error instanceof ScanFault && cover.error.kind === 'cover-open');
    const io = await collect(withReturn('SANE_STATUS_IO_ERROR').scan(req(), new AbortController().signal));
    assert.ok(
      io.error instanceof ScanFault && io.error.kind === 'io' && /status 9/.test(io.error.message),
      String(io.error),
    );
    const empty = await collect(withReturn('SANE_STATUS_NO_DOCS').scan(req(), new AbortController().signal));
    assert.deepEqual([empty.pages.length, empty.error], [0, undefined]);
    const missing = await collect(
      new SaneScannerDriver('sane:test:9', { env: sane.env }).scan(req(), new AbortController().signal),
    );
    assert.ok(missing.error instanceof ScanFault && missing.error.kind === 'unavailable');
    const nobin = await collect(
      new SaneScannerDriver('sane:test', { env: sane.env, bin: '/nonexistent/scanimage' }).scan(
        req(),
        new AbortController().signal,
      ),
    );
    assert.ok(nobin.error instanceof ScanFault && nobin.error.kind === 'unavailable');
    assert.deepEqual(readdirSync(tmpDir), []);
  });

  test('status after a jam: SANE tells the fault only to the scan it ends, so status() keeps it until the next scan', async () => {
    const jammed = new SaneScannerDriver('sane:test', {
      env: sane.env,
      tmpDir: fresh(),
      extraArgs: ['--read-return-value', 'SANE_STATUS_JAMMED'],
    });
    assert.deepEqual([(await jammed.status()).state, (await jammed.status()).error_code], ['idle', 0]);
    const r = await collect(jammed.scan(req(), new AbortController().signal));
    assert.ok(r.error instanceof ScanFault && r.error.kind === 'jammed');
    const after = await jammed.status();
    assert.deepEqual(
      [after.connected, after.state, after.error_code, after.state_reasons],
      [true, 'stopped', 2001, ['SANE_STATUS_JAMMED']],
    );
    const open = new SaneScannerDriver('sane:test', {
      env: sane.env,
      tmpDir: fresh(),
      extraArgs: ['--read-return-value', 'SANE_STATUS_COVER_OPEN'],
    });
    await collect(open.scan(req(), new AbortController().signal));
    assert.deepEqual(
      [(await open.status()).error_code, (await open.status()).state_reasons],
      [2002, ['SANE_STATUS_COVER_OPEN']],
    );
    // The next scan starts clean (here it fails again, and says so again).
    const again = await collect(jammed.scan(req(), new AbortController().signal));
    assert.ok(again.error instanceof ScanFault);
    assert.equal((await jammed.status()).error_code, 2001);
  });

  test('a jam after two pages: those pages stand, then the fault', async () => {
    // Two real scanimage runs into one batch: two good pages, then sane_read returns JAMMED.
    const bin = script(
      'jam-after-2',
      [
        'case "$*" in *--batch-print*) ;; *) exec scanimage "$@" ;; esac',
        'scanimage "$@" --batch-count=2 || exit $?',
        'exec scanimage "$@" --batch-start=3 --read-return-value SANE_STATUS_JAMMED',
      ].join('\n'),
    );
    const tmpDir = fresh();
    const d = new SaneScannerDriver('sane:test', { env: sane.env, bin, tmpDir });
    const r = await collect(d.scan(req(), new AbortController().signal));
    assert.deepEqual(
      r.pages.map((p) => p.sheet),
      [1, 2],
    );
    assert.ok(r.error instanceof ScanFault && r.error.kind === 'jammed', String(r.error));
    assert.deepEqual(readdirSync(tmpDir), []);
  });

  test('abort stops scanimage at once (it cancels the scan) and removes its files; so does leaving the loop early', async () => {
    // The wrapper records scanimage's pid and exit status, and passes SIGTERM on to it.
    const pids = join(sane.dir, 'pids-abort'),
      exits = join(sane.dir, 'exits-abort');
    const bin = script(
      'recording-scanimage',
      [
        'scanimage "$@" & child=$!',
        `echo $child >> "${pids}"`,
        "trap 'kill -TERM $child' TERM",
        'wait $child; status=$?',
        '[ $status -gt 128 ] && { wait $child; status=$?; }',
        `echo $status >> "${exits}"`,
        'exit $status',
      ].join('\n'),
    );
    const last = (f: string) => Number(readFileSync(f, 'utf8').trim().split('\n').at(-1));
    const tmpDir = fresh();
    // 0.2 s a page: the 10 pages of the feeder take 2 s, the abort comes after the first.
    const d = new SaneScannerDriver('sane:test', {
      env: sane.env,
      bin,
      tmpDir,
      extraArgs: ['--read-delay=yes', '--read-delay-duration=10000'],
      // Past 2 s a loaded machine's SIGKILL hit the wrapper, not scanimage, which lived on.
      killGraceMs: 15_000,
    });
    const ac = new AbortController();
    const r = await collect(d.scan(req({ color: 'grayscale' }), ac.signal), () => ac.abort(new Error('stop pressed')));
    assert.equal((r.error as Error).message, 'stop pressed');
    assert.equal(r.pages.length, 1);
    assert.equal(alive(last(pids)), false);
    assert.notEqual(last(exits), 0, 'scanimage did not finish its batch: it was cancelled');
    assert.deepEqual(readdirSync(tmpDir), []);
    for await (const p of d.scan(req({ color: 'grayscale' }), new AbortController().signal)) {
      assert.equal(p.sheet, 1);
      break;
    }
    assert.equal(alive(last(pids)), false);
    assert.notEqual(last(exits), 0);
    assert.deepEqual(readdirSync(tmpDir), []);
    // An abort before the scan starts throws at once.
    const pre = new AbortController();
    pre.abort(new Error('already stopped'));
    assert.equal(((await collect(d.scan(req(), pre.signal))).error as Error).message, 'already stopped');
  });

  test('a scanimage that gives no page and does not end is stopped after the page timeout, with a fault', async () => {
    // The real scanimage for the device's options; the scan itself hangs (a backend gone quiet).
    const pids = join(sane.dir, 'pids-hung');
    const bin = script(
      'hung-scanimage',
      ['case "$*" in *" -A"*) exec scanimage "$@";; esac', `echo $$ >> "${pids}"`, 'exec sleep 600'].join('\n'),
    );
    const tmpDir = fresh();
    const d = new SaneScannerDriver('sane:test', { env: sane.env, bin, tmpDir, pageTimeoutMs: 300 });
    const r = await collect(d.scan(req(), new AbortController().signal));
    assert.ok(r.error instanceof ScanFault && r.error.kind === 'io', String(r.error));
    assert.match((r.error as Error).message, /gave no page and did not end within 0.3 s/);
    assert.equal(r.pages.length, 0);
    assert.equal(alive(Number(readFileSync(pids, 'utf8').trim())), false, 'the hung scanimage was stopped');
    assert.deepEqual(readdirSync(tmpDir), []);
  });

  test("a scanimage that said its batch is over but hangs in the backend's clean-up is stopped; the batch ends as it said", async () => {
    // The real scanimage for the options and the pages; then, as SANE's test backend now and then
    // does in sane_cancel, it does not exit (the stand-in sleeps after scanimage has ended).
    const pids = join(sane.dir, 'pids-stuck');
    const bin = script(
      'stuck-scanimage',
      [
        'case "$*" in *" -A"*) exec scanimage "$@";; esac',
        `echo $$ >> "${pids}"`,
        'scanimage "$@"',
        'exec sleep 600',
      ].join('\n'),
    );
    const tmpDir = fresh();
    const stuck = (extra: string[]) =>
      new SaneScannerDriver('sane:test', { env: sane.env, bin, tmpDir, extraArgs: extra, endGraceMs: 300 });
    const done = await collect(stuck([]).scan(req({ color: 'grayscale' }), new AbortController().signal));
    assert.deepEqual([done.pages.length, done.error], [10, undefined]);
    const last = () => Number(readFileSync(pids, 'utf8').trim().split('\n').at(-1));
    assert.equal(alive(last()), false, 'the stuck scanimage was stopped');
    const jam = await collect(
      stuck(['--read-return-value', 'SANE_STATUS_JAMMED']).scan(req(), new AbortController().signal),
    );
    assert.ok(jam.error instanceof ScanFault && jam.error.kind === 'jammed', String(jam.error));
    assert.equal(alive(last()), false);
    assert.deepEqual(readdirSync(tmpDir), []);
  });

  test('continuous mode on the test backend: no paper sensor, so waitForPaper says "try" every poll', async () => {
    const d = new SaneScannerDriver('sane:test', { env: sane.env, paperPollMs: 1 });
    assert.equal('adf_loaded' in (await d.status()), false);
    assert.equal(await d.waitForPaper(new AbortController().signal, 0), true);
    const slow = new SaneScannerDriver('sane:test', { env: sane.env, paperPollMs: 60_000 });
    assert.equal(await slow.waitForPaper(new AbortController().signal, 5), false);
    const ac = new AbortController();
    const waiting = slow.waitForPaper(ac.signal, 0);
    ac.abort();
    assert.equal(await waiting, false);
  });

  test('continuous mode with a paper sensor (a stand-in adds page-loaded to the real -A output)', async () => {
    const state = join(sane.dir, 'page-loaded');
    writeFileSync(state, 'no');
    const bin = script(
      'sensor-scanimage',
      [
        `case "$*" in *-A*) scanimage "$@" || exit $?; echo "  Sensors:"; echo "    --page-loaded[=(yes|no)] [$(cat "${state}")] [read-only]"; echo "        Paper in the feeder."; exit 0 ;; esac`,
        'exec scanimage "$@"',
      ].join('\n'),
    );
    const d = new SaneScannerDriver('sane:test', { env: sane.env, bin, paperPollMs: 5 });
    assert.equal((await d.status()).adf_loaded, false);
    assert.equal(await d.waitForPaper(new AbortController().signal, 30), false);
    const waiting = d.waitForPaper(new AbortController().signal, 0);
    writeFileSync(state, 'yes');
    assert.equal(await waiting, true);
    assert.equal((await d.status()).adf_loaded, true);
  });
});

describe("scan options from the device's own option list", () => {
  const opts = (text: string) =>
    parseOptions(
      text
        .split('\n')
        .map((l) => (l ? `    ${l}` : l))
        .join('\n'),
    );
  const base =
    '--mode Lineart|Halftone|Gray|Color [Lineart]\n--resolution 50|100|150|200|300|600dpi [150]\n--depth 1|8 [8]';

  test('a fujitsu-style duplex ADF: the duplex source, fronts and backs', () => {
    const o = opts(`${base}\n--source ADF Front|ADF Back|ADF Duplex [ADF Front]`);
    assert.deepEqual(planScan(o, req({ duplex: true, resolution: 200 }), 'fujitsu'), {
      args: ['--mode', 'Color', '--resolution', '200', '--depth', '8', '--source', 'ADF Duplex'],
      duplex: true,
      feed: 'adf',
    });
    assert.deepEqual(planScan(o, req({ color: 'grayscale' }), 'fujitsu'), {
      args: ['--mode', 'Gray', '--resolution', '100', '--depth', '8', '--source', 'ADF Front'],
      duplex: false,
      feed: 'adf',
    });
  });

  test('an epson2-style ADF with --adf-mode, a --duplex switch, an hpaio-style "Duplex" source', () => {
    const epson = opts(
      `${base}\n--source Flatbed|Automatic Document Feeder [Flatbed]\n--adf-mode Simplex|Duplex [inactive]`,
    );
    assert.deepEqual(planScan(epson, req({ duplex: true }), 'epson2').args.slice(-4), [
      '--source',
      'Automatic Document Feeder',
      '--adf-mode',
      'Duplex',
    ]);
    assert.deepEqual(planScan(epson, req({ duplex: false }), 'epson2').args.slice(-2), ['--adf-mode', 'Simplex']);
    const sw = opts(`${base}\n--source Flatbed|ADF [ADF]\n--duplex[=(yes|no)] [no]`);
    assert.deepEqual(planScan(sw, req({ duplex: true }), 'x'), {
      args: ['--mode', 'Color', '--resolution', '100', '--depth', '8', '--source', 'ADF', '--duplex=yes'],
      duplex: true,
      feed: 'adf',
    });
    const hp = opts(`${base}\n--source Flatbed|ADF|Duplex [Flatbed]`);
    assert.equal(planScan(hp, req({ duplex: true }), 'hpaio').args.at(-1), 'Duplex');
    assert.equal(planScan(hp, req({ duplex: false }), 'hpaio').args.at(-1), 'ADF');
  });

  test('flatbed only, or no --source at all: one page', () => {
    assert.deepEqual(planScan(opts(`${base}\n--source Flatbed [Flatbed]`), req(), 'x'), {
      args: ['--mode', 'Color', '--resolution', '100', '--depth', '8', '--source', 'Flatbed'],
      duplex: false,
      feed: 'flatbed',
      batchCount: 1,
    });
    assert.deepEqual(planScan(opts(base), req(), 'x'), {
      args: ['--mode', 'Color', '--resolution', '100', '--depth', '8'],
      duplex: false,
      feed: 'flatbed',
      batchCount: 1,
    });
  });

  test("modes by the device's own names; a mode or resolution it lacks is NotSupportedError", () => {
    const brother = opts(
      '--mode Black & White|Gray[Error Diffusion]|True Gray|24bit Color [24bit Color]\n--resolution 100|200|300dpi [200]\n--source FlatBed|Automatic Document Feeder(left aligned) [FlatBed]',
    );
    assert.equal(planScan(brother, req({ color: 'grayscale' }), 'brother').args[1], 'True Gray');
    assert.equal(planScan(brother, req({ color: 'color' }), 'brother').args[1], '24bit Color');
    assert.equal(planScan(brother, req(), 'brother').args.at(-1), 'Automatic Document Feeder(left aligned)');
    assert.throws(
      () => planScan(opts('--mode Lineart|Gray [Gray]\n--resolution 100dpi [100]'), req(), 'mono'),
      (e: unknown) =>
        e instanceof NotSupportedError && /mono has no color mode \(it lists Lineart, Gray\)/.test(e.message),
    );
    assert.throws(() => planScan(opts(base), req({ resolution: 400 }), 'x'), NotSupportedError);
  });

  test('scanimage exit statuses', () => {
    assert.equal(faultOfExit(0, '', 'd'), undefined);
    assert.equal(faultOfExit(7, 'scanimage: sane_start: Document feeder out of documents', 'd'), undefined);
    assert.deepEqual(
      [
        faultOfExit(6, '', 'd')?.kind,
        faultOfExit(8, '', 'd')?.kind,
        faultOfExit(3, '', 'd')?.kind,
        faultOfExit(11, '', 'd')?.kind,
      ],
      ['jammed', 'cover-open', 'unavailable', 'unavailable'],
    );
    assert.equal(
      faultOfExit(1, 'scanimage: open of device x failed: Invalid argument', 'x')?.message,
      'cannot open x: open of device x failed: Invalid argument',
    );
    assert.equal(faultOfExit(null, '', 'd')?.message, 'scanimage failed (killed)');
  });

  test("a batch's status read from what scanimage printed, as scanimage 1.2 exits with it", () => {
    const run = (...lines: string[]) => statusOfBatchEnd(['Scanning infinity pages', ...lines].join('\n'));
    // Each as the real scanimage printed it with the test backend (its exit status in the comment).
    const page = (n: number, s: number) => [`Scanning page ${n}`, `Scanned page ${n}. (scanner status = ${s})`];
    const end = (n: number) => `Batch terminated, ${n} pages scanned`;
    const start = (m: string) => `scanimage: sane_start: ${m}`;
    assert.equal(run(...page(1, 5), ...page(2, 5), start('Document feeder out of documents'), end(2)), 0); // 0
    assert.equal(run('scanimage: sane_read: Document feeder out of documents', ...page(1, 7), end(1)), 0); // 0
    assert.equal(run('scanimage: sane_read: Document feeder jammed', ...page(1, 6), end(1)), 6); // 6
    assert.equal(run(...page(1, 8), end(1)), 8); // 8
    assert.equal(run(...page(1, 5), start('Document feeder jammed'), end(1)), 6);
    assert.equal(run(...page(1, 5), start('Scanner cover is open'), end(1)), 8);
    assert.equal(run(start('Something new'), end(0)), 9, 'a message it does not know is an I/O error');
  });
});
