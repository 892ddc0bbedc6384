// Server cost of print create (bench/README.md): a 20-page, 10 MB PDF sent inline
// (file_content, Base64) on the embedded defaults; the server decodes it, checks its MD5, checks
// the document (modules/print/document-check.ts), stores it and hands the task to the box.
// Reads: the server's CPU per MB, one client at a time and with 50 concurrent clients, creates
// per second with 50 clients, and side by side the floor: what JSON.parse + Base64 decode + MD5
// + writing the file cost in this process for the same body.
//
// Three processes: the server (its CPU is what is reported), 50 simulated boxes, and this one.
// Each box's printer takes an hour per side, and each box first gets a one-page task, which it
// downloads and "prints" for the rest of the run: the measured tasks wait in its queue, so the
// boxes do not download 10 MB files while the server is being measured.
// Knobs: BENCH_PRINT_SERIAL (10 creates), BENCH_PRINT_CLIENTS (50), BENCH_PRINT_ROUNDS (2 creates
// per client), BENCH_PRINT_MB (10).
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { forkChild, header, LIMITS_OUT_OF_REACH, median, sleep, tempDir } from '../support/child.ts';
import { scannedPdf } from './pdf.ts';

const SERIAL = Number(process.env.BENCH_PRINT_SERIAL ?? 10);
const CLIENTS = Number(process.env.BENCH_PRINT_CLIENTS ?? 50);
const ROUNDS = Number(process.env.BENCH_PRINT_ROUNDS ?? 2);
const MB = Number(process.env.BENCH_PRINT_MB ?? 10);
const PAGES = 20;

interface Envelope {
  code: number;
  msg: string;
  data: { uuid: string };
}

async function main(): Promise<void> {
  header('print create: server cost of a 20-page PDF sent inline', [
    `${PAGES} pages, ${MB} MB, file_content (Base64); ${SERIAL} creates one at a time, then ${CLIENTS} clients × ${ROUNDS} creates at once, each client on its own box`,
    'embedded defaults: SQLite, aedes in-process, local files',
  ]);
  const pdf = await scannedPdf(PAGES, MB * 1024 * 1024);
  const mib = pdf.length / 2 ** 20;
  const small = await scannedPdf(1, 20_000);

  const dataDir = tempDir();
  const server = await forkChild('server-process.ts', ['boxhub'], {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...LIMITS_OUT_OF_REACH,
    },
  });
  const boxes = await forkChild('boxes-process.ts', []);
  const pool = new Pool(server.ready.url, { connections: CLIENTS });
  try {
    const app = await server.call<{ id: string; api_key: string }>('createApp', { name: 'print-create' });
    const list = await server.call<{ uuid: string; secret: string }[]>('register', { n: CLIENTS });
    const auth = { authorization: `Bearer ${app.api_key}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown): Promise<Envelope> => {
      const r = await pool.request({ method: 'POST', path, headers: auth, body: JSON.stringify(body) });
      return JSON.parse(await r.body.text()) as Envelope;
    };
    for (const d of list) await post('/api/client/bind', { uuid: d.uuid, name: 'bench' });
    await boxes.call('connect', { url: server.ready.mqttUrl, boxes: list, printer: 'sim:?side_ms=3600000' }, 60_000);

    const bodyOf = (file: Buffer, box: string) =>
      JSON.stringify({ client_uuid: box, file_type: 'pdf', file_content: file.toString('base64') });
    const create = async (body: string): Promise<number> => {
      const t0 = performance.now();
      const r = await pool.request({ method: 'POST', path: '/api/print/create', headers: auth, body });
      const e = JSON.parse(await r.body.text()) as Envelope;
      if (e.code !== 0) throw new Error(`print create refused: ${e.code} ${e.msg}`);
      return performance.now() - t0;
    };
    // The boxes report their printer (and its capability) once connected; wait for it.
    for (let i = 0; ; i++) {
      const e = await post('/api/print/create', {
        client_uuid: list[0]!.uuid,
        file_type: 'pdf',
        file_content: small.toString('base64'),
      });
      if (e.code === 0) break;
      if (i > 100) throw new Error(`the boxes' printers never became ready: ${e.code} ${e.msg}`);
      await sleep(100);
    }
    // Every box holds a one-page task from now on (its printer takes an hour a side).
    await Promise.all(list.slice(1).map((d) => create(bodyOf(small, d.uuid))));

    const bodies = list.map((d) => bodyOf(pdf, d.uuid));
    const cpuMs = async (run: () => Promise<void>) => {
      const c0 = await server.call<NodeJS.CpuUsage>('cpu');
      const t0 = performance.now();
      await run();
      const wall = performance.now() - t0;
      const c = await server.call<NodeJS.CpuUsage>('cpu');
      return { cpu: (c.user - c0.user + c.system - c0.system) / 1000, wall };
    };

    const serialTimes: number[] = [];
    const serial = await cpuMs(async () => {
      for (let i = 0; i < SERIAL; i++) serialTimes.push(await create(bodies[0]!));
    });
    const concurrent = await cpuMs(async () => {
      await Promise.all(
        bodies.map(async (b) => {
          for (let i = 0; i < ROUNDS; i++) await create(b);
        }),
      );
    });

    // The floor, in this process: parse the same body, decode, MD5, write the file.
    const floorDir = tempDir();
    const floorTimes: number[] = [];
    for (let i = 0; i < SERIAL; i++) {
      const c0 = process.cpuUsage();
      const parsed = JSON.parse(bodies[0]!) as { file_content: string };
      const bytes = Buffer.from(parsed.file_content, 'base64');
      createHash('md5').update(bytes).digest('hex');
      writeFileSync(join(floorDir, `f${i}.pdf`), bytes);
      const c = process.cpuUsage(c0);
      floorTimes.push((c.user + c.system) / 1000);
    }

    const n = CLIENTS * ROUNDS;
    const floorPerMb = median(floorTimes) / mib;
    const serialPerMb = serial.cpu / SERIAL / mib;
    const concPerMb = concurrent.cpu / n / mib;
    console.log(
      `file: ${mib.toFixed(2)} MiB PDF, ${PAGES} pages (${((pdf.length * 4) / 3 / 2 ** 20).toFixed(2)} MiB of Base64)`,
    );
    console.log(
      `one at a time: ${serialPerMb.toFixed(1)} ms server CPU per MiB (${(serial.cpu / SERIAL).toFixed(0)} ms per create), median create round trip ${median(serialTimes).toFixed(0)} ms`,
    );
    console.log(
      `${CLIENTS} clients: ${(n / (concurrent.wall / 1000)).toFixed(1)} creates/s (${((n * mib) / (concurrent.wall / 1000)).toFixed(0)} MiB/s), ${concPerMb.toFixed(1)} ms server CPU per MiB`,
    );
    console.log(
      `floor (JSON.parse + Base64 + MD5 + write, this process): ${floorPerMb.toFixed(1)} ms per MiB; server / floor: ${(serialPerMb / floorPerMb).toFixed(2)}× one at a time, ${(concPerMb / floorPerMb).toFixed(2)}× with ${CLIENTS} clients`,
    );
  } finally {
    await pool.close();
    await boxes.stop();
    await server.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
