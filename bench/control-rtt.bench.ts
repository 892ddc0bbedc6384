// Control round trip and memory per connected box (foundation issue): with 1,000 simulated
// boxes connected and bound to one application, POST /api/control/buzz → command over MQTT →
// box ack → {code:0}, timed at the client; p99 at most 20 ms. Server memory per connected box
// (RSS and heap after GC) at most 20 KB.
//
// Three processes: the server (forked with --expose-gc, reports process.memoryUsage() over
// IPC), the boxes (mqtt.js agents from createSimulatedBox, keepalive 60 s, in a process of
// their own so their memory is not the server's), and this one, which drives HTTP. Nothing is
// pinned: three processes share the machine's cores as the scheduler sees fit.
//
// Memory: the first WARM_BOXES boxes connect before the baseline, so code loaded and compiled
// for the first MQTT connection is not charged to the fleet; the figure is the marginal cost of
// each further box: (after − before) / (BOXES − WARM_BOXES), both after three full GCs, with
// all states received and written.
//
// Env: BENCH_BOXES (1000), BENCH_BUZZ (5000), BENCH_CONCURRENCY (4), BENCH_LOG_LEVEL (info),
//      BENCH_BOX_NODELAY (0; 1 = Nagle off on the box sockets, to tell box-side delays apart).
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import {
  forkChild,
  header,
  LIMITS_OUT_OF_REACH,
  tempDir,
  percentile,
  sleep,
  verdict,
  type Child,
} from './support/child.ts';

const BOXES = Number(process.env.BENCH_BOXES ?? 1000);
const WARM_BOXES = Math.min(10, BOXES - 1);
const BUZZ = Number(process.env.BENCH_BUZZ ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// BENCH_BOX_NODELAY=1 turns Nagle off on the boxes' sockets (the agent does not): diagnosis.
const BOX_NODELAY = process.env.BENCH_BOX_NODELAY === '1';
const P99_TARGET_MS = 20;
const KB_TARGET = 20;

interface Mem {
  gc: boolean;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

async function json(
  pool: Pool,
  method: 'GET' | 'POST',
  path: string,
  key: string,
  body?: unknown,
): Promise<{ code: number; msg: string }> {
  const r = await pool.request({
    method,
    path,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode} for ${method} ${path}: ${text}`);
  return JSON.parse(text) as { code: number; msg: string };
}

async function waitOnline(server: Child, n: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const online = await server.call<number>('online');
    if (online >= n) return;
    if (Date.now() > until) throw new Error(`only ${online} of ${n} boxes online after ${timeoutMs} ms`);
    await sleep(100);
  }
}

const kb = (bytes: number) => bytes / 1024;

async function main(): Promise<void> {
  const dataDir = tempDir();
  const children: Child[] = [];
  const watchdog = setTimeout(() => {
    console.error('control-rtt: gave up after 240 s');
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(2);
  }, 240_000);
  watchdog.unref();
  let pool: Pool | undefined;
  try {
    const server = await forkChild('server-process.ts', ['boxhub'], {
      execArgv: [
        '--expose-gc',
        ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ],
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        BOXHUB_MQTT_PORT: '0',
        BOXHUB_MQTT_HOST: '127.0.0.1',
        BOXHUB_DATA_DIR: dataDir,
        LOG_LEVEL,
        ...LIMITS_OUT_OF_REACH,
      },
    });
    children.push(server);
    const boxes = await forkChild('boxes-process.ts', []);
    children.push(boxes);
    header(
      `control round trip (POST /api/control/buzz → MQTT command → box ack → {code:0}) with ${BOXES} connected boxes, and server memory per box`,
      [
        `server: its own process (--expose-gc, LOG_LEVEL=${LOG_LEVEL}, SQLite, aedes in-process); boxes: ${BOXES} mqtt.js agents (keepalive 60 s) in another process${BOX_NODELAY ? ', box sockets with noDelay (BENCH_BOX_NODELAY=1)' : ''}`,
        `load: ${BUZZ} buzz calls to random boxes, ${CONCURRENCY} in flight, undici keep-alive pool; latency measured at the client`,
      ],
    );

    const app = await server.call<{ api_key: string }>('createApp', { name: 'bench' });
    const t0 = performance.now();
    const devs = await server.call<{ uuid: string; secret: string }[]>('register', { n: BOXES }, 120_000);
    pool = new Pool(server.ready.url, { connections: Math.max(8, CONCURRENCY), keepAliveTimeout: 60_000 });
    const queue = [...devs];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let d = queue.shift(); d; d = queue.shift()) {
          const r = await json(pool!, 'POST', '/api/client/bind', app.api_key, {
            uuid: d.uuid,
            name: `box ${d.uuid.slice(0, 8)}`,
          });
          if (r.code !== 0) throw new Error(`bind ${d.uuid}: ${r.code} ${r.msg}`);
        }
      }),
    );
    console.log(`registered and bound ${BOXES} boxes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const mqttUrl = server.ready.mqttUrl!;
    const warm = await boxes.call<{ connected: number }>('connect', {
      url: mqttUrl,
      boxes: devs.slice(0, WARM_BOXES),
      keepaliveSec: 60,
      concurrency: 10,
      noDelay: BOX_NODELAY,
    });
    await waitOnline(server, warm.connected, 20_000);
    await sleep(500); // their presence and state messages are applied
    const before = await server.call<Mem>('mem');
    const rest = await boxes.call<{ connected: number; ms: number }>(
      'connect',
      {
        url: mqttUrl,
        boxes: devs.slice(WARM_BOXES),
        keepaliveSec: 60,
        concurrency: 50,
        timeoutMs: 60_000,
        noDelay: BOX_NODELAY,
      },
      120_000,
    );
    await waitOnline(server, BOXES, 30_000);
    await sleep(2000); // every box's presence and state has been received and written
    const after = await server.call<Mem>('mem');
    const n = BOXES - WARM_BOXES;
    const rssPerBox = kb(after.rss - before.rss) / n;
    const heapPerBox = kb(after.heapUsed - before.heapUsed) / n;
    const extPerBox = kb(after.external - before.external) / n;
    console.log(
      `connected ${rest.connected} boxes (${n} after the baseline, in ${(rest.ms / 1000).toFixed(1)} s); gc ${before.gc ? 'forced' : 'NOT available'}`,
    );
    console.log(
      `server memory  before: rss ${kb(before.rss).toFixed(0)} KB heap ${kb(before.heapUsed).toFixed(0)} KB   after: rss ${kb(after.rss).toFixed(0)} KB heap ${kb(after.heapUsed).toFixed(0)} KB`,
    );
    console.log(
      `per connected box: rss ${rssPerBox.toFixed(1)} KB, heap ${heapPerBox.toFixed(1)} KB (+ external ${extPerBox.toFixed(1)} KB)`,
    );

    // Warm the control path, then measure.
    const pick = () => devs[Math.floor(Math.random() * devs.length)]!.uuid;
    for (let i = 0; i < 200; i++)
      await json(pool, 'POST', '/api/control/buzz', app.api_key, { client_uuid: pick(), buzz: [100] });
    const lat: number[] = [];
    const failures = new Map<string, number>();
    let issued = 0;
    const [srv0, box0] = [await server.call<NodeJS.CpuUsage>('cpu'), await boxes.call<NodeJS.CpuUsage>('cpu')];
    const tb = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (issued < BUZZ) {
          issued++;
          const s = performance.now();
          try {
            const r = await json(pool!, 'POST', '/api/control/buzz', app.api_key, { client_uuid: pick(), buzz: [100] });
            if (r.code === 0) lat.push(performance.now() - s);
            else failures.set(`${r.code} ${r.msg}`, (failures.get(`${r.code} ${r.msg}`) ?? 0) + 1);
          } catch (e) {
            const k = (e as Error).message.slice(0, 120);
            failures.set(k, (failures.get(k) ?? 0) + 1);
          }
        }
      }),
    );
    const wall = (performance.now() - tb) / 1000;
    const [srv1, box1] = [await server.call<NodeJS.CpuUsage>('cpu'), await boxes.call<NodeJS.CpuUsage>('cpu')];
    const cpuPer = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) =>
      (b.user - a.user + b.system - a.system) / Math.max(1, lat.length);
    lat.sort((a, b) => a - b);
    const [p50, p95, p99, max] = [
      percentile(lat, 50),
      percentile(lat, 95),
      percentile(lat, 99),
      lat[lat.length - 1] ?? NaN,
    ];
    const failed = [...failures.values()].reduce((a, b) => a + b, 0);
    const afterBuzz = await server.call<Mem>('mem');
    console.log(`buzz: ${lat.length} answered {code:0}, ${failed} failed, ${(lat.length / wall).toFixed(0)} calls/s`);
    for (const [k, v] of failures) console.log(`  ${v} × ${k}`);
    console.log(
      `cpu per call: server ${cpuPer(srv0, srv1).toFixed(0)} µs, boxes process ${cpuPer(box0, box1).toFixed(0)} µs (server busy ${((srv1.user - srv0.user + srv1.system - srv0.system) / 1e4 / wall).toFixed(0)}%)`,
    );
    console.log(
      `latency ms: p50 ${p50!.toFixed(2)}  p95 ${p95!.toFixed(2)}  p99 ${p99!.toFixed(2)}  max ${max.toFixed(2)}`,
    );
    console.log(
      `server memory after the buzz calls: rss ${kb(afterBuzz.rss).toFixed(0)} KB heap ${kb(afterBuzz.heapUsed).toFixed(0)} KB`,
    );
    console.log('');
    const rttOk = p99! <= P99_TARGET_MS && failed === 0;
    const memOk = rssPerBox <= KB_TARGET && heapPerBox <= KB_TARGET;
    console.log(`control p99 ${p99!.toFixed(2)} ms (target ≤ ${P99_TARGET_MS} ms, no failures)  ${verdict(rttOk)}`);
    console.log(
      `memory per box rss ${rssPerBox.toFixed(1)} KB, heap ${heapPerBox.toFixed(1)} KB (target ≤ ${KB_TARGET} KB each)  ${verdict(memOk)}`,
    );
  } finally {
    clearTimeout(watchdog);
    await pool?.close().catch(() => undefined);
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
