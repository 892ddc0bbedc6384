// A box whose printer is its CUPS's queue, as in a classroom (docs/printers-and-scanners.md,
// "CUPS queues", "Plug and play"): the real `boxhub agent` command with `--printer auto` finds
// the default queue of a real private cupsd (driverless, in front of an ippeveprinter), says
// what it chose, shows the printer's own make and model, and a strict print that runs out of
// paper reports what the printer printed, not what CUPS handed on.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PDFDocument } from 'pdf-lib';
import { printErrorForPrinter } from '@boxhub/protocol/print-errors.ts';
import { PrinterError } from '@boxhub/protocol/printer-errors.ts';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { IppClient } from '../../agent/src/drivers/ipp/client.ts';
import { getJobs } from '../../agent/src/drivers/ipp/operations.ts';
import { startCupsd, type Cupsd } from '../../agent/test/cupsd.ts';
import { startIppEvePrinter, type IppEvePrinter } from '../../agent/test/ippeveprinter.ts';
import { startRig, type Rig } from './fixtures.ts';

const bin = new URL('../../cli/bin/boxhub.mjs', import.meta.url).pathname;

let rig: Rig;
let cups: Cupsd;
let printer: IppEvePrinter;
let child: ChildProcess | undefined;
let dir: string;
const lines: string[] = [];

before(async () => {
  rig = await startRig();
  // Out of paper after the first side: what the printer printed and what CUPS counts differ.
  printer = await startIppEvePrinter({ name: 'Classroom Eve', script: { secondsPerSide: 0.2, paperOutAfter: 1 } });
  cups = await startCupsd();
  await cups.addQueue('classroom', printer.uri, 'everywhere');
  await cups.setDefault('classroom');
  dir = mkdtempSync(join(tmpdir(), 'boxhub-cups-box-'));
});
after(async () => {
  if (child && child.exitCode === null) {
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  await cups?.close();
  await printer?.close();
  await rig?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function pdf(pages: number): Promise<string> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save()).toString('base64');
}

test("boxhub agent --printer auto: the CUPS default queue, said in its log; the printer's make and model; strict counts what the printer printed", async () => {
  const d = await rig.t.registerDevice();
  await rig.sdk.devices.bind({ uuid: d.uuid, name: 'cups box' });
  const secretFile = join(dir, 'secret');
  writeFileSync(secretFile, d.secret, { mode: 0o600 });
  child = spawn(
    process.execPath,
    [
      bin,
      'agent',
      '--server',
      rig.t.mqttUrl,
      '--device',
      d.uuid,
      '--secret-file',
      secretFile,
      '--state-dir',
      join(dir, 'state'),
      '--printer',
      'auto',
      '--scanner',
      'none',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, CUPS_SERVER: cups.server } },
  );
  createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));

  const c = await eventually(
    async () => {
      const x = (await rig.sdk.devices.info({ uuid: d.uuid })).client;
      return x?.online && x.printer?.connected ? x : undefined;
    },
    'the box and its CUPS queue',
    30_000,
  );
  assert.ok(
    lines.some((l) =>
      l.includes(`printer auto: chose ${cups.queueUri('classroom')}: the default queue 'classroom' of the local CUPS`),
    ),
    lines.join('\n'),
  );
  assert.deepEqual([c.printer!.make, c.printer!.model], ['Example', 'Printer']);
  const cap = await eventually(() => rig.sdk.print.capability({ client_uuid: d.uuid }), 'capability');
  assert.equal(cap.support_strict, true);
  assert.equal(cap.model, 'Printer');

  const task = (
    await rig.sdk.print.create({
      client_uuid: d.uuid,
      file_type: 'pdf',
      file_content: await pdf(3),
      options: { strict: true },
    })
  ).uuid!;
  const ended = await rig.sdk.print.waitForFinish(
    { client_uuid: d.uuid, print_uuid: task },
    { intervalMs: 100, timeoutMs: 60_000 },
  );
  assert.equal(ended.error_code, printErrorForPrinter(PrinterError.media_empty)); // 4305
  assert.equal(ended.printed_pages, 1);
  // CUPS's own record of the job: 3 sides handed on.
  const viaCups = new IppClient(cups.queueUri('classroom'));
  try {
    const job = (await getJobs(viaCups, { whichJobs: 'all' })).find((j) => j.name === task);
    assert.equal(job?.impressionsCompleted, 3);
  } finally {
    viaCups.close();
  }
  await eventually(
    async () => (await rig.sdk.devices.info({ uuid: d.uuid })).client?.printer?.error_code === PrinterError.media_empty,
    'media empty on the Device resource',
  );
});
