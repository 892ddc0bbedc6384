// Print start latency (bench/README.md): create → box acknowledged → printing started,
// with the simulated printer, p50 and p99 over 200 tasks across 20 boxes; target p99 under
// 250 ms on loopback, excluding printing itself.
//
// Two phases. The target's: tasks arrive at BENCH_LATENCY_RATE (5) per second, round robin
// over the boxes (each box gets one every 4 s and prints it in ~0.1 s, so no task waits behind
// another's printing). Then capacity: each box prints one task after another without pause, so
// 20 are always in flight; tasks per second is reported, with the latency at saturation. Times are the server's
// (print/info: created_at, action_ack_at, started_at, all in ms on one clock): started − created
// covers the create request's work after validation, the command to the box and its ack, the
// box downloading the file through its signed URL and handing it to the printer, and the
// print.started event back. The application's view is reported beside it: the create round
// trip, and the print.started callback's arrival after the create was sent.
// Three processes: the server, the 20 boxes, and this one (clients and callback receiver).
// Knobs: BENCH_LATENCY_BOXES (20), BENCH_LATENCY_TASKS (200 per phase), BENCH_LATENCY_RATE (5/s),
// BENCH_LATENCY_PAGES (1 page, 40 KB), BENCH_CPU_PROF (dir).
import { createServer, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { forkChild, header, LIMITS_OUT_OF_REACH, percentile, sleep, tempDir, verdict } from '../support/child.ts';
import { scannedPdf } from './pdf.ts';

const BOXES = Number(process.env.BENCH_LATENCY_BOXES ?? 20);
const TASKS = Number(process.env.BENCH_LATENCY_TASKS ?? 200);
const PAGES = Number(process.env.BENCH_LATENCY_PAGES ?? 1);
const RATE = Number(process.env.BENCH_LATENCY_RATE ?? 5);
const TARGET_P99 = 250;

interface Info {
  created_at: number;
  action_ack_at?: number;
  started_at?: number;
  finished: boolean;
  error_code: number;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function stats(name: string, xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `${name}: p50 ${percentile(s, 50).toFixed(0)} ms, p99 ${percentile(s, 99).toFixed(0)} ms, max ${s[s.length - 1]!.toFixed(0)} ms`;
}

async function main(): Promise<void> {
  header('print start latency: create → acknowledged → printing started', [
    `${TASKS} tasks across ${BOXES} boxes at ${RATE} tasks/s, then ${TASKS} with every box printing without pause; ${PAGES}-page PDF; simulated printer (20 ms a side)`,
    'embedded defaults: SQLite, aedes in-process, local files; callbacks to a receiver in this process',
  ]);
  const pdf = (await scannedPdf(PAGES, PAGES * 40_000)).toString('base64');

  // The receiver: when each task's print.started and print.finished callbacks arrive.
  const startedAt = new Map<string, number>();
  const finishers = new Map<string, () => void>();
  const receiver = createServer((req, res) => {
    void body(req).then((text) => {
      res.writeHead(200).end();
      const e = JSON.parse(text) as { event: string; uuid: string };
      if (e.event === 'print.started') startedAt.set(e.uuid, performance.now());
      if (e.event === 'print.finished') finishers.get(e.uuid)?.();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/print`;

  const server = await forkChild('server-process.ts', ['boxhub'], {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: tempDir(),
      LOG_LEVEL: 'warn',
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
      ...LIMITS_OUT_OF_REACH,
    },
    // BENCH_CPU_PROF=<dir>: V8 CPU profiles of the server and of the boxes' process.
    ...(process.env.BENCH_CPU_PROF
      ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}/server`] }
      : {}),
  });
  const boxes = await forkChild(
    'boxes-process.ts',
    [],
    process.env.BENCH_CPU_PROF
      ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}/boxes`] }
      : {},
  );
  const pool = new Pool(server.ready.url, { connections: BOXES * 2 });
  try {
    const app = await server.call<{ id: string; api_key: string }>('createApp', { name: 'print-latency' });
    const list = await server.call<{ uuid: string; secret: string }[]>('register', { n: BOXES });
    const auth = { authorization: `Bearer ${app.api_key}`, 'content-type': 'application/json' };
    const post = async <T>(path: string, b: unknown): Promise<{ code: number; msg: string; data: T }> => {
      const r = await pool.request({ method: 'POST', path, headers: auth, body: JSON.stringify(b) });
      return JSON.parse(await r.body.text()) as { code: number; msg: string; data: T };
    };
    for (const d of list) await post('/api/client/bind', { uuid: d.uuid, name: 'bench' });
    await boxes.call('connect', { url: server.ready.mqttUrl, boxes: list, printer: 'sim:' }, 60_000);

    const sent = new Map<string, number>();
    const roundTrips: number[] = [];
    const printOne = async (box: string): Promise<{ uuid: string; box: string }> => {
      const t0 = performance.now();
      const e = await post<{ uuid: string }>('/api/print/create', {
        client_uuid: box,
        file_type: 'pdf',
        file_content: pdf,
        options: { callback_url: callbackUrl },
      });
      if (e.code !== 0) throw Object.assign(new Error(`print create refused: ${e.code} ${e.msg}`), { code: e.code });
      roundTrips.push(performance.now() - t0);
      sent.set(e.data.uuid, t0);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`task ${e.data.uuid} did not finish within 60 s`)), 60_000);
        finishers.set(e.data.uuid, () => {
          clearTimeout(t);
          resolve();
        });
      });
      return { uuid: e.data.uuid, box };
    };
    const collect = async (tasks: { uuid: string; box: string }[]) => {
      const acked: number[] = [];
      const started: number[] = [];
      const observed: number[] = [];
      const infos = await Promise.all(
        tasks.map(async (t) => {
          const r = await post<Info>('/api/print/info', { client_uuid: t.box, print_uuid: t.uuid });
          if (r.code !== 0) throw new Error(`print/info ${t.uuid}: ${r.code} ${r.msg}`);
          return r.data;
        }),
      );
      for (const [k, info] of infos.entries()) {
        const { uuid } = tasks[k]!;
        if (info.error_code !== 0 || info.action_ack_at === undefined || info.started_at === undefined)
          throw new Error(`task ${uuid} did not print: ${JSON.stringify(info)}`);
        acked.push(info.action_ack_at - info.created_at);
        started.push(info.started_at - info.created_at);
        const st = startedAt.get(uuid);
        if (st === undefined) throw new Error(`no print.started callback for ${uuid}`);
        observed.push(st - sent.get(uuid)!);
      }
      return { acked, started, observed };
    };
    // The boxes report their printer's capability once connected: the first create waits for it.
    for (let i = 0; ; i++) {
      try {
        await printOne(list[0]!.uuid);
        break;
      } catch (e) {
        if (i > 100 || (e as { code?: number }).code === undefined) throw e;
        await sleep(100);
      }
    }
    sent.clear();
    roundTrips.length = 0;

    // Phase 1, the target: tasks arrive at a steady RATE per second (an open loop, as
    // applications send them), round robin over the boxes, whatever the state of the ones
    // before. Latency is measured at a stated load, not at saturation, where by Little's law it
    // is only (tasks in flight) / (throughput) and says nothing about the path itself.
    const done: { uuid: string; box: string }[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: TASKS }, async (_, k) => {
        const at = t0 + (k * 1000) / RATE;
        const wait = at - performance.now();
        if (wait > 0) await sleep(wait);
        done.push(await printOne(list[k % BOXES]!.uuid));
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const figures = await collect(done);
    const p99 = percentile(
      [...figures.started].sort((a, b) => a - b),
      99,
    );
    console.log(`## at ${RATE} tasks/s (open loop): ${done.length} tasks printed in ${seconds.toFixed(1)} s`);
    console.log(stats('created → acknowledged (server)', figures.acked));
    console.log(stats('created → printing started (server)', figures.started));
    console.log(
      `  target p99 < ${TARGET_P99} ms: ${verdict(p99 < TARGET_P99)} (${(p99 / TARGET_P99).toFixed(2)}× the target)`,
    );
    console.log(stats('create round trip (application)', roundTrips));
    console.log(stats('create sent → print.started callback received (application)', figures.observed));

    // Phase 2, capacity: every box prints without pause (the next task is created when the one
    // before has finished), so BOXES tasks are always in flight. Throughput is the figure; the
    // latency here is mostly waiting for CPU (server, boxes and tools share this machine).
    sent.clear();
    roundTrips.length = 0;
    const perBox = Math.ceil(TASKS / BOXES);
    const sat: { uuid: string; box: string }[] = [];
    const t1 = performance.now();
    await Promise.all(
      list.map(async (d) => {
        for (let i = 0; i < perBox; i++) sat.push(await printOne(d.uuid));
      }),
    );
    const satSeconds = (performance.now() - t1) / 1000;
    const satFigures = await collect(sat);
    console.log(
      `## saturation (${BOXES} in flight, closed loop): ${sat.length} tasks in ${satSeconds.toFixed(1)} s = ${(sat.length / satSeconds).toFixed(1)} tasks/s`,
    );
    console.log(stats('created → printing started (server)', satFigures.started));
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
