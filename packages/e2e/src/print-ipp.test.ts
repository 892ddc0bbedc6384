// Printing on a real IPP Everywhere printer (ippeveprinter) through a box (docs/printing.md,
// "Box-side printing"): strict mode counts the printer's own sides, cancel stops the job half-way, and a task
// is printed at most once whatever restarts on either side or however often its command comes.
// The printer's print command records every job it ran (agent/test/ippeveprinter.ts), so
// "printed once" is what the printer itself saw.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument } from 'pdf-lib';
import { type BoxAgent, SimScanner, createPrinterDriver, tempStateDir } from '@boxhub/agent';
import type { Boxhub } from '@boxhub/sdk';
import { eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import { startTcpProxy, type TcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';
import { startIppEvePrinter, type IppEvePrinter } from '../../agent/test/ippeveprinter.ts';
import { rigSdk, peerBox } from './fixtures.ts';

let t: TestServer;
let sdk: Boxhub;
let apiKey: string;
let printer: IppEvePrinter;
let proxy: TcpProxy;
const agents: BoxAgent[] = [];
let device: { uuid: string; secret: string };

before(async () => {
  t = await startTestServer();
  ({ api_key: apiKey } = await t.createApp('ipp-print'));
  sdk = rigSdk(t.url, apiKey);
  // 0.3 s a side, and the print command stops at a cancel like a printer finishing its sheet.
  printer = await startIppEvePrinter({
    name: 'Classroom',
    duplex: true,
    script: { secondsPerSide: 0.3, cancellable: true },
  });
  device = await t.registerDevice();
  await sdk.devices.bind({ uuid: device.uuid, name: 'ipp box' });
  const broker = new URL(t.mqttUrl);
  proxy = await startTcpProxy(broker.hostname, Number(broker.port));
});
after(async () => {
  for (const a of agents) await a.stop();
  await proxy?.close();
  await printer?.close();
  await t?.close();
});

/** The box's agent on its own disk; started again on the same disk it is the same box after a restart. */
async function startBox(stateDir: string): Promise<BoxAgent> {
  // The box before it (the previous test's, or the same disk's before a restart) said goodbye
  // when it stopped, but the server applies it when the broker delivers it, after the stop
  // returned (docs/box-protocol.md, "Presence"): until then the row still says online, and
  // "box online" below would be the old session's, with its end still to come (CI, external
  // broker: print.create then met 30004).
  await eventually(async () => !(await sdk.devices.info({ uuid: device.uuid })).client?.online, 'previous box gone');
  const agent = peerBox({
    stateDir,
    link: {
      url: proxy.url,
      uuid: device.uuid,
      secret: device.secret,
      keepaliveSec: 30,
      backoff: { baseMs: 50, maxMs: 500 },
    },
    printer: await createPrinterDriver(printer.uri),
    scanner: new SimScanner('sim:'),
    statusIntervalMs: 500,
    outboxResendMs: 1000,
  });
  agents.push(agent);
  await agent.start();
  await eventually(async () => (await sdk.devices.info({ uuid: device.uuid })).client?.online, 'box online');
  await eventually(() => sdk.print.capability({ client_uuid: device.uuid }), 'capability known');
  return agent;
}

async function pdf(pages: number): Promise<string> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save()).toString('base64');
}

const info = (uuid: string) => sdk.print.info({ client_uuid: device.uuid, print_uuid: uuid });
const ended = (uuid: string) =>
  sdk.print.waitForFinish({ client_uuid: device.uuid, print_uuid: uuid }, { intervalMs: 50, timeoutMs: 60_000 });
const print = async (pages: number, options: { strict?: boolean; duplex?: 'SVC_DP_NOTUMBLE' }) =>
  (await sdk.print.create({ client_uuid: device.uuid, file_type: 'pdf', file_content: await pdf(pages), options }))
    .uuid!;
const jobsNamed = async (task: string) => {
  const driver = await createPrinterDriver(printer.uri);
  try {
    return (await driver.find(task)) ? 1 : 0;
  } finally {
    await driver.close();
  }
};

test("strict duplex: printed_pages is the printer's own count, blank back included (3 pages → 4 sides)", async () => {
  const stateDir = tempStateDir();
  const box = await startBox(stateDir);
  try {
    const before = printer.received().length;
    const done = await ended(await print(3, { strict: true, duplex: 'SVC_DP_NOTUMBLE' }));
    assert.equal(done.error_code, 0);
    assert.equal(done.pages, 3);
    assert.equal(done.printed_pages, 4);
    assert.equal(printer.received().length, before + 1);
    assert.equal(printer.received().at(-1)!.env.IPP_SIDES, 'two-sided-long-edge');
  } finally {
    await box.stop();
  }
});

test('cancel half-way: the job stops at a sheet, the task ends cancelled with the sides printed', async () => {
  const stateDir = tempStateDir();
  const box = await startBox(stateDir);
  try {
    const uuid = await print(10, { strict: true });
    await eventually(async () => (await info(uuid)).started, 'printing started');
    await sdk.print.cancel({ client_uuid: device.uuid }); // resolves only on code 0
    assert.equal((await info(uuid)).error_code, 4201);
    const withCount = await eventually(
      async () => {
        const i = await info(uuid);
        return i.printed_pages !== undefined ? i : undefined;
      },
      "the printer's count",
      30_000,
    );
    assert.ok(withCount.printed_pages! < 10, `stopped before the end (${withCount.printed_pages} of 10 sides)`);
    await eventually(() => box.jobs.states().length === 0, 'the box holds nothing');
  } finally {
    await box.stop();
  }
});

test('a box restarted mid-job follows the job the printer has instead of printing it again', async () => {
  const stateDir = tempStateDir();
  const first = await startBox(stateDir);
  const before = printer.received().length;
  const uuid = await print(6, { strict: true });
  await eventually(async () => (await info(uuid)).started, 'printing started');
  await first.stop(); // the agent goes down while the printer prints
  const second = await startBox(stateDir);
  try {
    const done = await ended(uuid);
    assert.equal(done.error_code, 0);
    assert.equal(done.printed_pages, 6, "the printer's final count, read by the restarted box");
    await eventually(() => printer.received().length === before + 1, 'the print command ran');
    assert.equal(printer.received().length, before + 1, 'printed once');
    assert.equal(await jobsNamed(uuid), 1);
  } finally {
    await second.stop();
  }
});

test('a server restart mid-job and a repeated print.start: printed once, every event applied once', async () => {
  const stateDir = tempStateDir();
  const box = await startBox(stateDir);
  const before = printer.received().length;
  const uuid = await print(4, { strict: true });
  // The same command again, as a lost acknowledgement or a resend would deliver it.
  const task = await t.server.repos.tasks.find(t.server.db.kysely, uuid);
  const params = JSON.parse(task!.options) as { job: Record<string, unknown> };
  const again = await t.server.gateway.command(device.uuid, 'print.start', {
    task: uuid,
    created_at: task!.created_at,
    file: { url: 'http://127.0.0.1:9/never-fetched.pdf', format: 'pdf', md5: '0'.repeat(32), size: 1 },
    options: params.job,
  });
  assert.equal(again.ok, true, 'a task the box holds is acknowledged again, not taken twice');
  await eventually(async () => (await info(uuid)).started, 'printing started');

  proxy.down(true);
  const { dataDir, pgSchema } = t;
  await t.close({ keepData: true });
  t = await startTestServer({ reuse: { dataDir, pgSchema } });
  sdk = rigSdk(t.url, apiKey);
  const b2 = new URL(t.mqttUrl);
  proxy.retarget(b2.hostname, Number(b2.port));
  proxy.down(false);
  try {
    const done = await ended(uuid);
    assert.equal(done.error_code, 0);
    assert.equal(done.printed_pages, 4);
    assert.equal(printer.received().length, before + 1, 'printed once');
    const events = await t.server.db.kysely
      .selectFrom('box_events')
      .select(['seq', 'type'])
      .where('task_uuid', '=', uuid)
      .orderBy('seq')
      .execute();
    // print.progress (the sides done so far, for the task's history) comes between, as the printer counts.
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
      'each event applied once',
    );
    assert.deepEqual(
      events.map((e) => e.type).filter((t) => t !== 'print.progress'),
      ['print.downloaded', 'print.started', 'print.finished'],
      'in order',
    );
  } finally {
    await box.stop();
  }
});
