// eSCL faults as devices report them, through the agent to the scan task's error code
// (docs/printers-and-scanners.md, "eSCL faults"; docs/errors.md, "Scan error codes"): a real
// server and broker, a box agent driving the test eSCL server (checked against sane-airscan in
// packages/agent/test/escl-airscan.test.ts), one scan per fault.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { type BoxAgent, createPrinterDriver } from '@boxhub/agent';
import { EsclScannerDriver } from '../../agent/src/drivers/escl/scanner-driver.ts';
import { ScanError } from '@boxhub/protocol';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { parseState } from '@boxhub/server/modules/devices/view.ts';
import { startEsclServer, type EsclServer } from '../../agent/test/escl-server.ts';
import { startRig, type Rig, peerBox } from './fixtures.ts';

let rig: Rig;
let scanner: EsclServer;
let agent: BoxAgent;
let uuid: string;
const logs: Array<{ msg: string; extra?: Record<string, unknown> }> = [];

before(async () => {
  rig = await startRig();
  scanner = await startEsclServer({ sheets: 0 });
  const d = await rig.t.registerDevice();
  await rig.sdk.devices.bind({ uuid: d.uuid, name: 'escl box' });
  uuid = d.uuid;
  agent = peerBox({
    link: { url: rig.t.mqttUrl, uuid: d.uuid, secret: d.secret, keepaliveSec: 30 },
    printer: await createPrinterDriver('none'),
    // Short waits: a busy scanner is asked again 4 times, 50 ms apart unless it says otherwise.
    scanner: new EsclScannerDriver(scanner.uri, { retryDelayMs: 50, busyTries: 4, paperPollMs: 50 }),
    statusIntervalMs: 100,
    uploadBackoff: { baseMs: 50, maxMs: 500 },
    log: (msg, extra) => {
      logs.push({ msg, ...(extra ? { extra } : {}) });
    },
  });
  await agent.start();
  await eventually(
    async () => (await rig.sdk.devices.info({ uuid })).client?.scanner?.connected === true,
    'the eSCL scanner on the server',
  );
});
after(async () => {
  await agent?.stop();
  await scanner?.close();
  await rig?.close();
});

/** Paper in the feeder, seen by the server, then one simplex scan to its end. */
async function scan(sheets: number): Promise<{ error_code: number; total_pages: number; message: string | undefined }> {
  scanner.sheets = sheets;
  scanner.adfState = null;
  // The box's full state (adf_loaded is not in the Device resource), as the rig's load() reads it.
  await eventually(
    async () => parseState((await rig.t.server.repos.devices.findByUuid(uuid))!)?.scanner.adf_loaded === true,
    'the server sees paper',
  );
  const before = logs.length;
  const created = await rig.sdk.scan.create({ client_uuid: uuid, options: { duplex: false, resolution: 150 } });
  const done = await rig.sdk.scan.waitForFinish(
    { client_uuid: uuid, scan_uuid: created.uuid! },
    { intervalMs: 50, timeoutMs: 60_000 },
  );
  // The server has the end; the box lets go of the scanner once the end is acknowledged.
  await eventually(async () => agent.jobs.states().length === 0, 'the box released the scanner');
  const fault = logs.slice(before).find((l) => l.msg === 'scan ended by a scanner fault');
  return {
    error_code: done.error_code!,
    total_pages: done.total_pages!,
    message: fault?.extra?.message as string | undefined,
  };
}

test('a jam after the first sheet: 2001, the page before it kept, the job deleted', async () => {
  scanner.faultAfter(1, 'ScannerAdfJam');
  const r = await scan(3);
  assert.deepEqual([r.error_code, r.total_pages], [ScanError.jammed, 1]);
  assert.match(r.message!, /ScannerAdfJam/);
  assert.equal(scanner.jobs.at(-1)!.deleted, true);
});

test('a misfeed (ScannerAdfMispick): 2005', async () => {
  scanner.faultAfter(1, 'ScannerAdfMispick');
  const r = await scan(3);
  assert.deepEqual([r.error_code, r.total_pages], [ScanError.misfeed, 1]);
});

test('the feeder door opened mid-job, NextDocument answered 500: 2002', async () => {
  scanner.configure({ faultStatus: 500 });
  scanner.faultAfter(2, 'ScannerAdfDoorOpen');
  try {
    const r = await scan(3);
    assert.deepEqual([r.error_code, r.total_pages], [ScanError.cover_open, 2]);
  } finally {
    scanner.configure({ faultStatus: undefined });
  }
});

test('NextDocument 404 is the end of the job: every sheet, no error, the job left completed (not deleted)', async () => {
  const r = await scan(3);
  assert.deepEqual([r.error_code, r.total_pages], [ScanError.none, 3]);
  const job = scanner.jobs.at(-1)!;
  assert.deepEqual([job.state, job.deleted], ['Completed', false]);
});

test('the feeder empty mid-job, said with 409 instead of 404: the end of the stack, no error', async () => {
  scanner.configure({ emptyStatus: 409 });
  try {
    const r = await scan(2);
    assert.deepEqual([r.error_code, r.total_pages], [ScanError.none, 2]);
    assert.ok(scanner.requests.some((x) => x.startsWith('GET /eSCL/ScannerStatus')));
  } finally {
    scanner.configure({ emptyStatus: undefined });
  }
});

test('503 with Retry-After while busy: the box waits as told and scans; busy for ever: 2004', async () => {
  scanner.busyFor(2, 1);
  const startedAt = Date.now();
  const ok = await scan(1);
  assert.deepEqual([ok.error_code, ok.total_pages], [ScanError.none, 1]);
  // Two 503s with Retry-After: 1, each waited (the box's own pause is 50 ms).
  assert.ok(Date.now() - startedAt >= 2000, `${Date.now() - startedAt} ms`);

  scanner.busyFor(1000, 0);
  try {
    const busy = await scan(1);
    assert.deepEqual([busy.error_code, busy.total_pages], [ScanError.scanner_unavailable, 0]);
    assert.match(busy.message!, /stayed busy \(503 to ScanJobs 4 times\)/);
  } finally {
    scanner.busyFor(0, 0);
  }
});

test("409 to ScanJobs while another client's job runs: asked again, then 2004 naming the other job", async () => {
  scanner.sheets = 5;
  // Another eSCL client (a phone app, the MFP's panel) starts a job first.
  const base = new URL(scanner.uri.slice('escl:'.length));
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      new URL('/eSCL/ScanJobs', base),
      { method: 'POST', headers: { 'content-type': 'text/xml' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(
      '<scan:ScanSettings xmlns:scan="http://schemas.hp.com/imaging/escl/2011/05/03" xmlns:pwg="http://www.pwg.org/schemas/2010/12/sm"><pwg:InputSource>Platen</pwg:InputSource></scan:ScanSettings>',
    );
  });
  assert.equal(status, 201);
  const other = scanner.jobs.at(-1)!;
  try {
    const r = await scan(5);
    assert.deepEqual([r.error_code, r.total_pages], [ScanError.scanner_unavailable, 0]);
    assert.match(r.message!, /busy with another scan job \(409 Conflict/);
    assert.equal(scanner.requests.filter((x) => x === 'POST /eSCL/ScanJobs').length >= 1 + 4, true);
  } finally {
    other.state = 'Canceled';
  }
});

test('a job the scanner drops after a timeout: 2007, the pages before it kept', async () => {
  scanner.configure({ timeoutAfterPages: 1 });
  try {
    const r = await scan(3);
    assert.deepEqual([r.error_code, r.total_pages], [ScanError.job_lost, 1]);
    assert.match(r.message!, /Aborted: JobTimedOut/);
  } finally {
    scanner.configure({ timeoutAfterPages: undefined });
  }
});
