// The simulated printer prints for real: options checked and documents prepared as for an IPP
// printer, sides counted one by one, faults mid-job, cancel, follow after a restart, rendering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson, PrinterCapability, type PrintJobOptions } from '@boxhub/protocol';
import { PrinterError } from '@boxhub/protocol/printer-errors.ts';
import { readingOrder, SimPrinter } from '../src/drivers/sim/printer.ts';
import { PrintRejectedError, type PrintHooks } from '../src/drivers/types.ts';
import { jpeg, numberedPdf, pageSizes, pageTexts } from './print-fixtures.ts';
import { tempDirUntilExit as tempDir } from '../src/store/temp-state-dir.ts';

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
function req(bytes: Uint8Array, o: Partial<PrintJobOptions> = {}, format: 'pdf' | 'jpg' = 'pdf') {
  const dir = tempDir('boxhub-simtask-');
  const task = `sim-task-${++n}`;
  const file = join(dir, `${task}.${format}`);
  writeFileSync(file, bytes);
  return { task, file, format, options: opts(o) };
}
function hooks(
  signal = new AbortController().signal,
  onSides?: (n: number) => void,
): PrintHooks & { refs: string[]; sides: number[]; accepted: Promise<string> } {
  let accept!: (ref: string) => void;
  const h = {
    signal,
    refs: [] as string[],
    sides: [] as number[],
    accepted: new Promise<string>((r) => {
      accept = r;
    }),
    submitted: async (ref: string) => {
      h.refs.push(ref);
      accept(ref);
    },
    progress: (p: { impressionsCompleted?: number }) => {
      if (p.impressionsCompleted !== undefined) {
        h.sides.push(p.impressionsCompleted);
        onSides?.(p.impressionsCompleted);
      }
    },
  };
  return h;
}

test("capability: a valid tree from the simulated inkjet's IPP attributes", async () => {
  const c = await new SimPrinter('sim:?side_ms=0').capability();
  assert.ok(c && parseJson(PrinterCapability, JSON.stringify(c)).ok);
  assert.deepEqual(
    c.media_sizes.map((s) => s.media_size),
    [
      'SVC_MS_A4',
      'SVC_MS_A5',
      'SVC_MS_LETTER',
      'SVC_MS_LEGAL',
      'SVC_MS_4X6',
      'SVC_MS_5X7',
      'SVC_MS_ENV_DL',
      'SVC_MS_ENV_10',
    ],
  );
  const a4 = c.media_sizes[0]!.media_types;
  assert.deepEqual(
    a4.map((t) => [t.media_type, t.borderless]),
    [
      ['SVC_MT_PLAIN', false],
      ['SVC_MT_PHOTO', true],
      ['SVC_MT_MATTE', false],
      ['SVC_MT_LABELS', false],
    ],
  );
  assert.deepEqual(
    c.media_sizes.find((s) => s.media_size === 'SVC_MS_ENV_DL')!.media_types.map((t) => [t.media_type, t.input_slot]),
    [['SVC_MT_ENVELOPE', ['SVC_IS_REAR']]],
  );
  const mono = await new SimPrinter('sim:?duplex=0&color=0').capability();
  assert.deepEqual(
    [mono!.color_mode, mono!.media_sizes[0]!.media_types[0]!.duplex],
    [['SVC_CM_MONO'], ['SVC_DP_NONE']],
  );
  assert.equal(await new SimPrinter('sim:?connected=0').capability(), null);
});

test('a 3-page document two-sided prints 4 sides, one at a time, and is recorded', async () => {
  const p = new SimPrinter('sim:?side_ms=0');
  const h = hooks();
  const r = req(await numberedPdf(3), { duplex: 'SVC_DP_NOTUMBLE' });
  assert.deepEqual(await p.print(r, h), { state: 'completed', impressionsCompleted: 4 });
  assert.deepEqual(h.refs, ['1']);
  assert.deepEqual(h.sides, [1, 2, 3, 4]);
  assert.deepEqual(
    p.jobs.map((j) => [j.task, j.pages, j.copies, j.sides, j.impressions, j.state]),
    [[r.task, 3, 1, 4, 4, 'completed']],
  );
  assert.equal((await p.status()).state, 'idle');
});

test('log=FILE: a line per job start, printed side and job end, written as it happens', async () => {
  const log = join(tempDir('sim-printer-log-'), 'printer.jsonl');
  const p = new SimPrinter(`sim:?side_ms=0&log=${encodeURIComponent(log)}`);
  const r = req(await numberedPdf(2));
  assert.equal((await p.print(r, hooks())).state, 'completed');
  const lines = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; task: string; impressions: number; state: string });
  assert.deepEqual(
    lines.map((l) => [l.event, l.task, l.impressions, l.state]),
    [
      ['start', r.task, 0, 'processing'],
      ['side', r.task, 1, 'processing'],
      ['side', r.task, 2, 'processing'],
      ['end', r.task, 2, 'completed'],
    ],
  );
});

test('the box builds what the simulated printer cannot do: reverse, copies beyond its own', async () => {
  const out = tempDir('boxhub-simout-');
  const p = new SimPrinter(`sim:?side_ms=0&copies=1&out=${encodeURIComponent(out)}`);
  const r = req(await numberedPdf(3), { reverse: true, copies: 2, page_ranges: [{ from: 2, to: 3 }] });
  assert.deepEqual(await p.print(r, hooks()), { state: 'completed', impressionsCompleted: 4 });
  const job = p.jobs[0]!;
  assert.deepEqual([job.pages, job.copies, job.sides], [4, 1, 4]);
  // What a person would look at: the PDF as sent, a PNG per page, the job's record.
  assert.deepEqual(pageTexts(job.rendered!), ['page 3', 'page 2', 'page 3', 'page 2']);
  const files = readdirSync(out).sort();
  assert.deepEqual(files, [
    `${r.task}-1.png`,
    `${r.task}-2.png`,
    `${r.task}-3.png`,
    `${r.task}-4.png`,
    `${r.task}.json`,
    `${r.task}.pdf`,
  ]);
  assert.deepEqual([...readFileSync(join(out, `${r.task}-1.png`)).subarray(1, 4)], [...Buffer.from('PNG')]);
  const record = JSON.parse(readFileSync(join(out, `${r.task}.json`), 'utf8')) as {
    sides: number;
    png: Array<{ file: string; page: number; copy: number }>;
  };
  assert.equal(record.sides, 4);
  // Reading order: the box reversed the pages for the face-up tray, so the sheet printed last
  // (sent page 4: "page 2") lies on top and is PNG 1; the stack reads page 2, 3, 2, 3.
  assert.deepEqual(
    record.png.map((x) => [x.file, x.page]),
    [
      [`${r.task}-1.png`, 4],
      [`${r.task}-2.png`, 3],
      [`${r.task}-3.png`, 2],
      [`${r.task}-4.png`, 1],
    ],
  );
});

test('copies the printer makes itself are each rendered; two-sided, an odd back is left out', async () => {
  const out = tempDir('boxhub-simout-');
  const p = new SimPrinter(`sim:?side_ms=0&out=${encodeURIComponent(out)}`);
  const r = req(await numberedPdf(3), { copies: 3, duplex: 'SVC_DP_NOTUMBLE', reverse: false });
  assert.deepEqual(await p.print(r, hooks()), { state: 'completed', impressionsCompleted: 12 });
  assert.deepEqual([p.jobs[0]!.pages, p.jobs[0]!.copies], [3, 3], 'the printer makes the copies');
  const record = JSON.parse(readFileSync(join(out, `${r.task}.json`), 'utf8')) as {
    png: Array<{ file: string; page: number; copy: number }>;
  };
  assert.deepEqual(
    record.png.map((x) => [x.page, x.copy]),
    [
      [1, 1],
      [2, 1],
      [3, 1],
      [1, 2],
      [2, 2],
      [3, 2],
      [1, 3],
      [2, 3],
      [3, 3],
    ],
  );
  assert.deepEqual(readdirSync(out).filter((f) => f.endsWith('.png')).length, 9);
  assert.deepEqual(
    readFileSync(join(out, `${r.task}-1.png`)),
    readFileSync(join(out, `${r.task}-4.png`)),
    'page 1 of copy 1 and of copy 2',
  );
  assert.equal(readdirSync(out).filter((f) => f.startsWith('.')).length, 0, 'no work directory left');
});

test('readingOrder: sheets last first when the box reversed them, copies in turn', () => {
  assert.deepEqual(
    readingOrder(3, 1, false, true).map((x) => x.page),
    [3, 2, 1],
  );
  assert.deepEqual(
    readingOrder(3, 1, true, true).map((x) => x.page),
    [3, 1, 2],
    'two-sided: the sheets reversed, each read front then back',
  );
  assert.deepEqual(
    readingOrder(2, 2, false, false).map((x) => `${x.copy}:${x.page}`),
    ['1:1', '1:2', '2:1', '2:2'],
  );
});

test('a JPG is printed as a page of the media size', async () => {
  const out = tempDir('boxhub-simout-');
  const p = new SimPrinter(`sim:?side_ms=0&out=${encodeURIComponent(out)}`);
  assert.equal(
    (
      await p.print(
        req(await jpeg(300, 200), { media_size: 'SVC_MS_4X6', media_type: 'SVC_MT_PHOTO', borderless: true }, 'jpg'),
        hooks(),
      )
    ).state,
    'completed',
  );
  assert.deepEqual(pageSizes(p.jobs[0]!.rendered!), [[288, 432]]);
});

test('an option the simulated printer lacks is refused, and nothing is printed', async () => {
  const p = new SimPrinter('sim:?side_ms=0&duplex=0');
  await assert.rejects(
    p.print(req(await numberedPdf(1), { duplex: 'SVC_DP_TUMBLE' }), hooks()),
    (e: unknown) =>
      e instanceof PrintRejectedError &&
      /options\.duplex SVC_DP_TUMBLE is not supported by this printer; allowed: SVC_DP_NONE/.test(e.message),
  );
  assert.deepEqual(p.jobs, []);
});

test('a jam after 1 side: the job is aborted with the printer error, the printer stays stopped, the next job waits for the fix', async () => {
  const p = new SimPrinter('sim:?side_ms=0&fail_after=1&fail=media-jam');
  const out = await p.print(req(await numberedPdf(3)), hooks());
  assert.deepEqual(out, {
    state: 'aborted',
    impressionsCompleted: 1,
    printerError: PrinterError.media_jam,
    message: 'the printer stopped: media-jam',
  });
  assert.deepEqual([(await p.status()).state, (await p.status()).error_code], ['stopped', PrinterError.media_jam]);
  const h = hooks();
  const next = p.print(req(await numberedPdf(2)), h);
  assert.equal(await h.accepted, '2');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.sides, [], 'accepted, but nothing printed while jammed');
  p.setFault(null);
  assert.deepEqual(await next, { state: 'completed', impressionsCompleted: 2 });
});

test('cancel mid-job: it stops at once and reports the sides printed', async () => {
  const p = new SimPrinter('sim:?side_ms=0');
  const ac = new AbortController();
  const out = await p.print(
    req(await numberedPdf(5)),
    hooks(ac.signal, (s) => {
      if (s === 2) ac.abort();
    }),
  );
  assert.deepEqual(out, { state: 'canceled', impressionsCompleted: 2 });
  assert.equal(p.jobs[0]!.state, 'canceled');
});

test('after a box restart: find() and follow() reach a job still printing, and follow can cancel it', async () => {
  const p = new SimPrinter('sim:?side_ms=0');
  p.pauseAfter(1);
  const r = req(await numberedPdf(4));
  const held = new Promise<void>((resolve) => {
    const off = p.onSide((j) => {
      if (j.impressions === 1) {
        off();
        resolve();
      }
    });
  });
  const first = p.print(r, hooks());
  await held; // one side out, then the printer holds
  // The box restarts: a new agent with the same printer looks for the task's job.
  const ref = await p.find(r.task);
  assert.equal(ref, '1');
  const ac = new AbortController();
  const seen = hooks(ac.signal);
  const followed = p.follow(ref!, seen);
  ac.abort();
  assert.deepEqual(await followed, { state: 'canceled', impressionsCompleted: 1 });
  assert.deepEqual(await first, { state: 'canceled', impressionsCompleted: 1 });
  assert.deepEqual(
    await p.follow('1', hooks()),
    { state: 'canceled', impressionsCompleted: 1 },
    'an ended job keeps its outcome',
  );
  assert.equal(await p.follow('99', hooks()), undefined);
  assert.equal(await p.find('unknown'), undefined);
});

test('a printer without strict mode reports no sides; pauseAfter/resume hold and release a job', async () => {
  const p = new SimPrinter('sim:?side_ms=0&strict=0');
  p.pauseAfter(2);
  const h = hooks();
  const job = p.print(req(await numberedPdf(3)), h);
  await h.accepted;
  const held = new Promise<void>((resolve) => {
    const off = p.onSide((j) => {
      if (j.impressions === 2) {
        off();
        resolve();
      }
    });
  });
  if (p.jobs[0]!.impressions < 2) await held;
  assert.equal(p.jobs[0]!.impressions, 2);
  assert.equal((await p.status()).state, 'processing');
  p.resume();
  assert.deepEqual(await job, { state: 'completed' });
  assert.deepEqual(h.sides, []);
  assert.equal(existsSync(p.jobs[0]!.rendered ?? '/nonexistent'), false, 'no out directory: nothing rendered');
});

test('a task cancelled while the box prepares it is cancelled, not a bad document, and nothing prints', async () => {
  const p = new SimPrinter('sim:?side_ms=0');
  const ac = new AbortController();
  ac.abort();
  const h = hooks(ac.signal);
  assert.deepEqual(await p.print(req(await numberedPdf(3), { reverse: true }), h), {
    state: 'canceled',
    message: 'cancelled before it was sent to the printer',
  });
  assert.deepEqual([p.jobs, h.refs], [[], []]);
});
