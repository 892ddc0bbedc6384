// Server ingest of scans (docs/scanning.md, "Figures"): 20 simulated boxes scan at once on the
// embedded defaults; pages per second through upload, MD5 check, storage, item events and the
// scan.item_data / scan.finish callbacks, target at least 100 pages/s; and the server's CPU per
// page.
//
// Three processes: the server (its CPU is what is reported), the 20 boxes (their scanners make
// and assemble the pages: their CPU is the boxes', not the server's), and this one, which
// creates the scans over HTTP and receives the callbacks. Time runs from the first create to
// the last scan.finish callback received.
// Knobs: BENCH_INGEST_BOXES (20), BENCH_INGEST_SHEETS (25 per box, both sides printed: 50
// pages), BENCH_INGEST_DPI (200), BENCH_INGEST_QUALITY (90).
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { SimScanner } from '../../packages/agent/src/drivers/sim/scanner.ts';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { forkChild, header, tempDir, verdict } from '../support/child.ts';

const BOXES = Number(process.env.BENCH_INGEST_BOXES ?? 20);
const SHEETS = Number(process.env.BENCH_INGEST_SHEETS ?? 25);
const DPI = Number(process.env.BENCH_INGEST_DPI ?? 200);
const QUALITY = Number(process.env.BENCH_INGEST_QUALITY ?? 90);
const TARGET = 100;

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Two printed sides at the bench's settings, drawn once by the simulated scanner. */
async function drawSides(): Promise<{ front: string; back: string }> {
  const dir = tempDir();
  const sim = new SimScanner('sim:');
  sim.load([{ front: { text: { seed: 0 } }, back: { text: { seed: 1 } } }]);
  const files: string[] = [];
  for await (const p of sim.scan(
    { duplex: true, resolution: DPI, color: 'color', jpegQuality: QUALITY },
    new AbortController().signal,
  )) {
    const f = join(dir, `side-${files.length}.jpg`);
    writeFileSync(f, p.image.data);
    files.push(f);
  }
  await sim.close();
  return { front: files[0]!, back: files[1]! };
}

async function main(): Promise<void> {
  header('scan ingest: 20 boxes scanning at once, server side', [
    `${BOXES} boxes × ${SHEETS} sheets duplex (${BOXES * SHEETS * 2} pages), ${DPI} dpi colour, quality ${QUALITY}, blank-page skip off`,
    'embedded defaults: SQLite, aedes in-process, local files; callbacks to a receiver in this process',
  ]);
  // The receiver: counts scan.item_data pages and scan.finish callbacks, answers 200 at once.
  let pages = 0;
  const finished = new Set<string>();
  let allDone: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    allDone = r;
  });
  const receiver = createServer((req, res) => {
    void body(req).then((text) => {
      res.writeHead(200).end();
      const e = JSON.parse(text) as { event: string; uuid: string; pages?: number };
      if (e.event === 'scan.item_data') pages += e.pages ?? 0;
      if (e.event === 'scan.finish') {
        finished.add(e.uuid);
        if (finished.size === BOXES) allDone();
      }
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const rxPort = (receiver.address() as { port: number }).port;

  const dataDir = tempDir();
  const server = await forkChild('server-process.ts', ['boxhub'], {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
    },
  });
  const boxes = await forkChild('boxes-process.ts', []);
  const pool = new Pool(server.ready.url, { connections: 32 });
  try {
    const app = await server.call<{ id: string; api_key: string }>('createApp', { name: 'ingest' });
    const list = await server.call<{ uuid: string; secret: string }[]>('register', { n: BOXES });
    const auth = { authorization: `Bearer ${app.api_key}`, 'content-type': 'application/json' };
    for (const d of list) {
      const r = await pool.request({
        method: 'POST',
        path: '/api/client/bind',
        headers: auth,
        body: JSON.stringify({ uuid: d.uuid, name: 'bench' }),
      });
      await r.body.text();
    }
    await boxes.call('connect', { url: server.ready.mqttUrl, boxes: list, scanner: 'sim:' }, 60_000);
    await boxes.call('load', { sheets: SHEETS, images: await drawSides() });
    // The server must know each feeder is loaded before a scan may start (30203 otherwise).
    await new Promise((r) => setTimeout(r, 1000));

    const cpu0 = await server.call<NodeJS.CpuUsage>('cpu');
    const t0 = performance.now();
    const creates = await Promise.all(
      list.map(async (d) => {
        const r = await pool.request({
          method: 'POST',
          path: '/api/scan/create',
          headers: auth,
          body: JSON.stringify({
            client_uuid: d.uuid,
            options: {
              callback_url: `http://127.0.0.1:${rxPort}/scan`,
              resolution: DPI,
              quality: QUALITY,
              blank_page_skip: false,
            },
          }),
        });
        return JSON.parse(await r.body.text()) as { code: number; msg: string };
      }),
    );
    const refused = creates.filter((c) => c.code !== 0);
    if (refused.length) throw new Error(`scan create refused: ${refused.map((c) => `${c.code} ${c.msg}`).join('; ')}`);
    let watchdog: NodeJS.Timeout | undefined;
    await Promise.race([
      done,
      new Promise((_, rej) => {
        watchdog = setTimeout(
          () => rej(new Error(`only ${finished.size} of ${BOXES} scans finished within 10 minutes`)),
          600_000,
        );
      }),
    ]).finally(() => clearTimeout(watchdog));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = await server.call<NodeJS.CpuUsage>('cpu');
    const serverCpuMs = (cpu.user - cpu0.user + cpu.system - cpu0.system) / 1000;
    const rate = pages / seconds;
    console.log(`pages received through scan.item_data: ${pages} of ${BOXES * SHEETS * 2} in ${seconds.toFixed(2)} s`);
    console.log(
      `ingest: ${rate.toFixed(0)} pages/s (target ≥ ${TARGET}: ${verdict(rate >= TARGET)}, ${(rate / TARGET).toFixed(2)}× the target)`,
    );
    console.log(
      `server CPU: ${(serverCpuMs / pages).toFixed(2)} ms per page (${((serverCpuMs / 1000 / seconds) * 100).toFixed(0)}% of one core while the boxes scanned)`,
    );
  } finally {
    await pool.close();
    await boxes.stop();
    await server.stop();
    receiver.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
