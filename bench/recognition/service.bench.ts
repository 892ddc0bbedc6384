// Feedback-card recognition as a service (docs/cards.md, "Figures"):
//   1. latency from a page's arrival at direct_addr to the callback of the student it completes
//      (the next student's first page, or scan.end for the last), p50 and p99, a 60-page stack
//      at 200 dpi sent at a scanner's pace (BENCH_REC_PPM pages a minute, 120: a 60-sheet/min
//      duplex ADF), target p99 < 1 s;
//   2. sustained throughput of one node with its workers (the stack sent as fast as the
//      receiver takes it, first request to the end callback) against the engine alone
//      (PagePool with as many worker threads as the node has, the same pages, in this
//      process), target ≥ 0.8.
// Processes: the server (embedded defaults: SQLite, aedes, local files; its recognition
// workers), one simulated box (needed for the scan the task serves; its scanner is too slow to
// send anything itself), and this one: the sender (boxhub direct v1, as the box sends) and the
// callback receiver. Knobs: BENCH_REC_STUDENTS (30 → 60 pages), BENCH_REC_PPM (120),
// BENCH_REC_ROUNDS (2).
import { createServer, type IncomingMessage } from 'node:http';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { PagePool, planTemplate } from '../../packages/recognizer/src/index.ts';
import { cardStack } from '../../packages/e2e/src/card-stack.ts';
import { endManifest, pagesManifest, sendDirect, type DirectPage } from '../../packages/e2e/src/direct-sender.ts';
import { forkChild, header, median, percentile, tempDir, verdict } from '../support/child.ts';

const STUDENTS = Number(process.env.BENCH_REC_STUDENTS ?? 30);
const PPM = Number(process.env.BENCH_REC_PPM ?? 120);
const ROUNDS = Number(process.env.BENCH_REC_ROUNDS ?? 2);
const WORKERS = availableParallelism();

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - performance.now())));

async function main(): Promise<void> {
  header('recognition service: page-to-callback latency and throughput against the engine alone', [
    `${STUDENTS} students × 2 sides = ${STUDENTS * 2} pages at 200 dpi (the example card, synthetic marks); ${WORKERS} engine worker threads`,
    'embedded defaults: SQLite, aedes in-process, local files; callbacks to a receiver in this process',
  ]);
  const t0 = performance.now();
  const stack = await cardStack(STUDENTS, { dpi: 200, seed: 2026 });
  console.log(
    `stack drawn in ${((performance.now() - t0) / 1000).toFixed(1)} s; mean page ${Math.round(stack.pages.reduce((a, p) => a + p.jpeg.length, 0) / stack.pages.length / 1024)} KB`,
  );

  // Callback receiver: arrival time of each student's callback, and the end.
  let onCallback: (path: string, method: string, body: string, at: number) => void = () => undefined;
  const receiver = createServer((req, res) => {
    void body(req).then((text) => {
      const at = performance.now();
      res.writeHead(200).end();
      onCallback(req.url ?? '', req.method ?? '', text, at);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const rxUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

  const server = await forkChild('server-process.ts', ['boxhub'], {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: tempDir(),
      LOG_LEVEL: 'warn',
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
    },
    // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the server's main thread (open in Chrome DevTools).
    ...(process.env.BENCH_CPU_PROF ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] } : {}),
  });
  const boxes = await forkChild('boxes-process.ts', []);
  const pool = new Pool(server.ready.url, { connections: 4 });
  const api = async <T>(path: string, payload: unknown, key: string): Promise<T> => {
    const r = await pool.request({
      method: 'POST',
      path,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    const e = JSON.parse(await r.body.text()) as { code: number; msg: string; data: T };
    if (e.code !== 0) throw new Error(`${path}: ${e.code} ${e.msg}`);
    return e.data;
  };
  try {
    const app = await server.call<{ id: string; api_key: string }>('createApp', { name: 'cards', ess: true });
    const [device] = await server.call<{ uuid: string; secret: string }[]>('register', { n: 1 });
    await api('/api/client/bind', { uuid: device!.uuid, name: 'bench' }, app.api_key);
    await boxes.call('connect', { url: server.ready.mqttUrl, boxes: [device], scanner: 'sim:?ppm=1' }, 60_000);
    const { layout } = await planTemplate(stack.definition);
    await api('/api/application/card/template/create', { definition: stack.definition }, app.api_key);

    /** One recognition task and the scan bound to it; returns the address and the secret. */
    const bound = async (path: string) => {
      await boxes.call('load', { sheets: 1 });
      await new Promise((r) => setTimeout(r, 500));
      const task = await api<{ uuid: string; direct_addr: string }>(
        '/api/application/ess/create',
        { callback_url: `${rxUrl}${path}` },
        app.api_key,
      );
      let scan: { uuid: string; direct_secret: string } | undefined;
      for (let i = 0; i < 40 && !scan; i++) {
        try {
          scan = await api(
            '/api/scan/create',
            {
              client_uuid: device!.uuid,
              options: { direct_mode: 1, direct_addr: task.direct_addr, continuous: true, continuous_wait: 0 },
            },
            app.api_key,
          );
        } catch (e) {
          if (!/30203|30204/.test((e as Error).message)) throw e;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
      if (!scan) throw new Error('scan create kept failing');
      return { task, scan, stop: () => api('/api/scan/stop', { client_uuid: device!.uuid }, app.api_key) };
    };
    const collect = (path: string) => {
      const got: Array<{ at: number; body: { finish: boolean; error_code: number } }> = [];
      let end = 0;
      let resolveEnd: () => void = () => undefined;
      const ended = new Promise<void>((r) => {
        resolveEnd = r;
      });
      onCallback = (p, method, text, at) => {
        if (!p.endsWith(path)) return;
        if (method === 'PUT') {
          end = at;
          resolveEnd();
        } else got.push({ at, body: JSON.parse(text) as { finish: boolean; error_code: number } });
      };
      return { got, ended, endAt: () => end };
    };

    // 1. Latency, paced like a scanner: a batch of 2 pages every 2 × 60/PPM s.
    const latencies: number[] = [];
    let wrong = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const path = `/latency-${round}`;
      const { task, scan, stop } = await bound(path);
      const c = collect(path);
      const arrival: number[] = [];
      const gap = (2 * 60_000) / PPM;
      const start = performance.now();
      for (let b = 0; b < STUDENTS; b++) {
        await sleepUntil(start + b * gap);
        const pages: DirectPage[] = stack.pages.slice(2 * b, 2 * b + 2);
        arrival.push(performance.now(), performance.now());
        const r = await sendDirect(task.direct_addr, scan.direct_secret, pagesManifest(scan.uuid, b + 1, pages), pages);
        if (r.status !== 200) throw new Error(`batch ${b + 1}: ${r.status} ${r.text}`);
      }
      const endSent = performance.now();
      await sendDirect(
        task.direct_addr,
        scan.direct_secret,
        endManifest(scan.uuid, STUDENTS + 1, { batches: STUDENTS, pages: STUDENTS * 2 }),
      );
      await c.ended;
      await stop();
      // Student k (0-based) is completed by page 2k+2 (1-based: the next student's first side);
      // the last by scan.end.
      c.got.forEach((g, k) => {
        if (g.body.error_code !== 0) wrong++;
        const completedAt = k < STUDENTS - 1 ? arrival[2 * k + 2]! : endSent;
        latencies.push(g.at - completedAt);
      });
      if (c.got.length !== STUDENTS)
        throw new Error(`round ${round}: ${c.got.length} results for ${STUDENTS} students`);
    }
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    console.log(
      `latency page arrival → student callback, ${latencies.length} students at ${PPM} pages/min: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms (target p99 < 1000 ms: ${verdict(p99 < 1000)})${wrong ? `; ${wrong} students not recognized` : ''}`,
    );

    // 2. Throughput: the service against the engine alone, alternating.
    const engineRates: number[] = [];
    const serviceRates: number[] = [];
    const endRates: number[] = [];
    const engineCpu: number[] = [];
    const serviceCpu: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const engine = new PagePool({ layouts: [layout], workers: WORKERS });
      await Promise.all(stack.pages.slice(0, WORKERS).map((p) => engine.recognize(p.jpeg))); // warm: workers started, wasm loaded
      const e0 = performance.now();
      const ec0 = process.cpuUsage();
      await Promise.all(stack.pages.map((p) => engine.recognize(p.jpeg)));
      engineRates.push(stack.pages.length / ((performance.now() - e0) / 1000));
      const ec = process.cpuUsage(ec0);
      engineCpu.push((ec.user + ec.system) / 1000 / stack.pages.length);
      await engine.close();

      const path = `/throughput-${round}`;
      const { task, scan, stop } = await bound(path);
      const c = collect(path);
      const sc0 = await server.call<NodeJS.CpuUsage>('cpu');
      const s0 = performance.now();
      for (let b = 0; b * 10 < stack.pages.length; b++) {
        const pages = stack.pages.slice(b * 10, b * 10 + 10);
        const r = await sendDirect(task.direct_addr, scan.direct_secret, pagesManifest(scan.uuid, b + 1, pages), pages);
        if (r.status !== 200) throw new Error(`batch ${b + 1}: ${r.status} ${r.text}`);
      }
      const batches = Math.ceil(stack.pages.length / 10);
      await sendDirect(
        task.direct_addr,
        scan.direct_secret,
        endManifest(scan.uuid, batches + 1, { batches, pages: stack.pages.length }),
      );
      await c.ended;
      const sc = await server.call<NodeJS.CpuUsage>('cpu');
      serviceCpu.push((sc.user - sc0.user + sc.system - sc0.system) / 1000 / stack.pages.length);
      const last = c.got.find((g) => g.body.finish)!.at;
      serviceRates.push(stack.pages.length / ((last - s0) / 1000));
      endRates.push(stack.pages.length / ((c.endAt() - s0) / 1000));
      await stop();
    }
    const engine = median(engineRates);
    const service = median(serviceRates);
    console.log(
      `engine alone (${WORKERS} workers): ${engineRates.map((r) => r.toFixed(1)).join(', ')} pages/s, median ${engine.toFixed(1)} (${(engine / WORKERS).toFixed(1)} per core)`,
    );
    console.log(
      `service (first request → the last student's callback): ${serviceRates.map((r) => r.toFixed(1)).join(', ')} pages/s, median ${service.toFixed(1)}; to the end callback ${median(endRates).toFixed(1)}`,
    );
    console.log(
      `ratio service/engine: ${(service / engine).toFixed(2)} (target ≥ 0.8: ${verdict(service / engine >= 0.8)})`,
    );
    const ecpu = median(engineCpu);
    const scpu = median(serviceCpu);
    console.log(
      `CPU per page: engine ${ecpu.toFixed(1)} ms, server ${scpu.toFixed(1)} ms (all its threads; HTTP, storage, database, jobs, callbacks included) → cpu-normalised ratio ${(ecpu / scpu).toFixed(2)}, the steadier figure on a busy machine`,
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
