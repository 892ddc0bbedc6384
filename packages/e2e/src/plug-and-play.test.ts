// Plug and play (docs/printers-and-scanners.md, "Plug and play"): a box agent started with
// `auto` for both devices finds a printer and a scanner announced over DNS-SD on loopback, as
// ipp-usb announces a USB device (a real ippeveprinter announcing itself, the test eSCL server
// announced with avahi-publish). Each is then pulled while a task runs on it: the task ends with
// a clear error code, the Device resource shows connected: false, and a device plugged in again
// (on another port, as after a replug) is taken without restarting the agent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { type BoxAgent, createPrinterDriver, createScannerDriver } from '@boxhub/agent';
import { PrintError, ScanError } from '@boxhub/protocol';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { announce, type Announcement } from '../../agent/test/dnssd.ts';
import { startEsclServer, type EsclServer } from '../../agent/test/escl-server.ts';
import { startIppEvePrinter } from '../../agent/test/ippeveprinter.ts';
import { CLOSED_PORT } from '../../agent/test/timing.ts';
import { tempDirUntilExit } from '@boxhub/agent/store/temp-state-dir.ts';
import { startRig, type Rig, peerBox } from './fixtures.ts';

let rig: Rig;
let agent: BoxAgent | undefined;
let uuid: string;
const peers: Array<{ close(): Promise<void> }> = [];
const logs: string[] = [];
// Unique names: the machine's avahi is shared with whatever else runs.
const tag = `${process.pid}-${Date.now() % 100000}`;

before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  const d = await rig.t.registerDevice();
  await rig.sdk.devices.bind({ uuid: d.uuid, name: 'plug and play box' });
  uuid = d.uuid;
  // No CUPS (CUPS_SERVER points nowhere) and a SANE with no backend: only DNS-SD finds anything.
  const saneDir = tempDirUntilExit('boxhub-sane-none-');
  writeFileSync(join(saneDir, 'dll.conf'), '');
  const env = { ...process.env, CUPS_SERVER: `127.0.0.1:${CLOSED_PORT}`, SANE_CONFIG_DIR: saneDir };
  const ctx = {
    env,
    rediscoverMs: 300,
    log: (msg: string, extra?: Record<string, unknown>) => {
      logs.push(`${msg}${extra ? ` ${JSON.stringify(extra)}` : ''}`);
    },
    // A printer that stops answering mid-job is given up on after 1.5 s (10 min by default).
    printer: { timing: { pollMs: 100, unreachableMs: 1500 }, timeoutMs: 2000 },
    // eSCL requests keep the default 10 s time-out: a pulled scanner refuses at once, and a
    // 2 s one failed a loaded CI machine's scan before its first page.
    escl: { retryDelayMs: 50, busyTries: 4, paperPollMs: 50 },
  };
  agent = peerBox({
    link: { url: rig.t.mqttUrl, uuid: d.uuid, secret: d.secret, keepaliveSec: 30 },
    printer: await createPrinterDriver('auto', ctx),
    scanner: await createScannerDriver('auto', ctx),
    uploadBackoff: { baseMs: 50, maxMs: 500 },
    outboxResendMs: 1000,
  });
  await agent.start();
});
after(async () => {
  await agent?.stop();
  for (const p of peers.reverse()) await p.close().catch(() => undefined);
  await rig?.close();
});

/**
 * The addresses the agent may name a loopback printer by: avahi resolves its announcement to
 * 127.0.0.1 or to ::1, whichever it answers with first (ippeveprinter listens on both).
 */
const onLoopback = (uri: string) => ['127.0.0.1', '[::1]'].map((host) => uri.replace('localhost', host));

const client = async () => (await rig.sdk.devices.info({ uuid })).client;

async function pdf(pages: number): Promise<string> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save()).toString('base64');
}

test('printer auto: an IPP printer announced on loopback is found; pulled mid-job the task ends 4101 and the device shows connected:false; plugged in again it is taken', async () => {
  const first = await startIppEvePrinter({
    name: `Boxhub PnP Printer ${tag}`,
    announce: true,
    script: { secondsPerSide: 0.4 },
  });
  peers.push(first);
  const c = await eventually(
    async () => {
      const x = await client();
      return x?.printer?.connected ? x : undefined;
    },
    'the announced printer is connected',
    30_000,
  );
  assert.deepEqual([c.printer!.make, c.printer!.model], ['Example', 'Printer']);
  assert.ok(
    logs.some((l) =>
      onLoopback(first.uri).some((u) =>
        l.startsWith(
          `printer auto: chose ${u}: 'Boxhub PnP Printer ${tag}', an IPP printer announced over DNS-SD on loopback`,
        ),
      ),
    ),
    logs.join('\n'),
  );

  await eventually(() => rig.sdk.print.capability({ client_uuid: uuid }), 'capability known');
  const task = (
    await rig.sdk.print.create({
      client_uuid: uuid,
      file_type: 'pdf',
      file_content: await pdf(20),
      options: { strict: false },
    })
  ).uuid!;
  await eventually(() => first.received().length > 0, 'the printer started the job', 30_000);
  // The cable is pulled.
  await first.close();
  const ended = await rig.sdk.print.waitForFinish(
    { client_uuid: uuid, print_uuid: task },
    { intervalMs: 100, timeoutMs: 60_000 },
  );
  assert.equal(ended.error_code, PrintError.printer_not_connected);
  await eventually(async () => (await client())?.printer?.connected === false, 'printer connected:false');

  // Plugged in again: ippeveprinter comes back on a port of its own, announced again.
  const second = await startIppEvePrinter({ name: `Boxhub PnP Printer ${tag} again`, announce: true });
  peers.push(second);
  await eventually(
    async () => (await client())?.printer?.connected === true,
    'printer back without restarting the agent',
    30_000,
  );
  // The test printer gets a random free port, almost surely not the one it had: the agent
  // switched to it and said so (on the same port, the same driver would simply answer again).
  if (new URL(second.uri).port !== new URL(first.uri).port)
    assert.ok(
      logs.some(
        (l) => onLoopback(second.uri).some((u) => l.startsWith(`printer auto: chose ${u}`)) && l.includes('instead_of'),
      ),
      logs.join('\n'),
    );
});

test('scanner auto: an eSCL scanner announced on loopback is found; pulled mid-scan the task ends 2006 and the device shows connected:false; announced again elsewhere it is taken', async () => {
  const startScanner = async (name: string): Promise<{ server: EsclServer; ad: Announcement }> => {
    const server = await startEsclServer({ sheets: 0 });
    const port = Number(new URL(server.uri.slice('escl:'.length)).port);
    const ad = await announce(name, '_uscan._tcp', port, [
      'rs=eSCL',
      'ty=Boxhub Mock Scanner 1',
      'duplex=T',
      'cs=color,grayscale',
    ]);
    const both = {
      server,
      ad,
      close: async () => {
        await ad.close();
        await server.close();
      },
    };
    peers.push(both);
    return both;
  };
  const first = await startScanner(`Boxhub PnP Scanner ${tag}`);
  await eventually(
    async () => (await client())?.scanner?.connected === true,
    'the announced scanner is connected',
    30_000,
  );
  assert.ok(
    logs.some((l) =>
      l.startsWith(
        `scanner auto: chose ${first.server.uri}: 'Boxhub PnP Scanner ${tag}', an eSCL scanner announced over DNS-SD on loopback`,
      ),
    ),
    logs.join('\n'),
  );

  first.server.sheets = 40;
  await eventually(async () => (await client())?.scanner?.connected === true, 'scanner ready');
  const created = await eventually(
    async () =>
      rig.sdk.scan.create({ client_uuid: uuid, options: { duplex: false, resolution: 300 } }).catch(() => undefined),
    'scan created',
  );
  // Two pages sent: the first has surely arrived whole. A scan that ended before that fails
  // here with its own code and message and the box's log, not with a time-out.
  await eventually(
    async () => {
      if ((first.server.jobs.at(-1)?.pages ?? 0) >= 2) return true;
      const info = await rig.sdk.scan.info({ client_uuid: uuid, scan_uuid: created.uuid! });
      if (info.finished) assert.fail(`the scan ended before 2 pages: ${JSON.stringify(info)}\n${logs.join('\n')}`);
      return false;
    },
    'pages scanned',
    30_000,
  );
  // Unplugged mid-stack.
  await first.ad.close();
  await first.server.close();
  const done = await rig.sdk.scan.waitForFinish(
    { client_uuid: uuid, scan_uuid: created.uuid! },
    { intervalMs: 100, timeoutMs: 60_000 },
  );
  assert.equal(done.error_code, ScanError.scanner_disconnected);
  assert.ok(done.total_pages! >= 1 && done.total_pages! < 40, `pages ${done.total_pages}`);
  await eventually(async () => (await client())?.scanner?.connected === false, 'scanner connected:false');

  const second = await startScanner(`Boxhub PnP Scanner ${tag} again`);
  await eventually(
    async () => (await client())?.scanner?.connected === true,
    'scanner back without restarting the agent',
    30_000,
  );
  assert.ok(
    logs.some((l) => l.startsWith(`scanner auto: chose ${second.server.uri}`) && l.includes('instead_of')),
    logs.join('\n'),
  );
});
