// GET /api/client/info throughput of the real server against a bare node:http server that
// answers the same JSON bytes, measured side by side in one run (foundation issue: at least
// 0.5 of bare). Each server runs in its own process; this process only generates load.
//
// Load generator: an undici Pool (already the server's HTTP client, pinned for Node 20) with
// BENCH_CONNECTIONS keep-alive connections, no pipelining, each connection a closed loop of
// request → read body → next request until the run's deadline. No new dependency, bounded by
// time, and its per-request cost is low enough that one core drives the bare server; the
// figures include both processes' CPU use so a load-generator-bound run shows itself.
//
// When the machine has 2+ cores and taskset exists, both servers are pinned to CPU 1 and the
// load generator to CPU 0 (architecture notes measured "server pinned to one core").
//
// Env: BENCH_ROUNDS (4), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (16),
//      BENCH_PIN (1), BENCH_LOG_LEVEL (the server default, info), BENCH_CPU_PROF (dir: profile
//      the boxhub server).
import { rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { createSimulatedBox } from '@boxhub/agent';
import {
  forkChild,
  header,
  LIMITS_OUT_OF_REACH,
  tempDir,
  median,
  percentile,
  pin,
  sleep,
  verdict,
  type Child,
} from './support/child.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const TARGET = 0.5;
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info'; // the server's default (config.ts)

interface Run {
  rps: number;
  errors: number;
  p50: number;
  p99: number;
  serverCpu: number;
  loadCpu: number;
  usPerReq: number;
}

async function load(
  child: Child,
  path: string,
  headers: Record<string, string>,
  expectLength: number,
  seconds: number,
): Promise<Run> {
  const pool = new Pool(child.ready.url, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
  const lat: number[] = [];
  let ok = 0;
  let errors = 0;
  const cpu0 = process.cpuUsage();
  const srv0 = await child.call<NodeJS.CpuUsage>('cpu');
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const s = performance.now();
      try {
        const r = await pool.request({ method: 'GET', path, headers });
        await r.body.dump({ limit: 1 << 20 });
        // Every answer is HTTP 200 (envelope); a different length means a different envelope.
        if (r.statusCode === 200 && Number(r.headers['content-length']) === expectLength) {
          ok++;
          lat.push(performance.now() - s);
        } else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const wall = performance.now() - t0;
  const srv1 = await child.call<NodeJS.CpuUsage>('cpu');
  const cpu1 = process.cpuUsage(cpu0);
  await pool.close();
  lat.sort((a, b) => a - b);
  const serverCpuUs = srv1.user - srv0.user + srv1.system - srv0.system;
  return {
    usPerReq: serverCpuUs / Math.max(1, ok),
    rps: ok / (wall / 1000),
    errors,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    serverCpu: (srv1.user - srv0.user + srv1.system - srv0.system) / 1000 / wall,
    loadCpu: (cpu1.user + cpu1.system) / 1000 / wall,
  };
}

async function main(): Promise<void> {
  const dataDir = tempDir();
  const children: Child[] = [];
  let box: ReturnType<typeof createSimulatedBox> | undefined;
  const watchdog = setTimeout(() => {
    console.error('api-throughput: gave up after 240 s');
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(2);
  }, 240_000);
  watchdog.unref();
  try {
    const boxhub = await forkChild('server-process.ts', ['boxhub'], {
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        BOXHUB_MQTT_PORT: '0',
        BOXHUB_MQTT_HOST: '127.0.0.1',
        BOXHUB_DATA_DIR: dataDir,
        LOG_LEVEL,
        ...LIMITS_OUT_OF_REACH,
      },
      // BENCH_CPU_PROF=<dir>: write a V8 CPU profile of the boxhub server (open in Chrome DevTools).
      ...(process.env.BENCH_CPU_PROF
        ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] }
        : {}),
    });
    children.push(boxhub);

    // One bound box that has connected and reported its state, so `info` answers what an
    // application really sees (network, printer and scanner details).
    const app = await boxhub.call<{ api_key: string }>('createApp', { name: 'bench' });
    const [dev] = await boxhub.call<{ uuid: string; secret: string }[]>('register', { n: 1 });
    const auth = { authorization: `Bearer ${app.api_key}` };
    const bind = await fetch(`${boxhub.ready.url}/api/client/bind`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ uuid: dev!.uuid, name: 'bench box' }),
    });
    if (((await bind.json()) as { code: number }).code !== 0) throw new Error('bind failed');
    box = createSimulatedBox({ url: boxhub.ready.mqttUrl!, uuid: dev!.uuid, secret: dev!.secret, keepaliveSec: 60 });
    box.agent.start();
    const path = `/api/client/info?uuid=${dev!.uuid}`;
    let body = '';
    for (let i = 0; ; i++) {
      const r = await fetch(boxhub.ready.url + path, { headers: auth });
      body = await r.text();
      const j = JSON.parse(body) as { code: number; data?: { client?: { online?: boolean; printer?: unknown } } };
      if (j.code === 0 && j.data?.client?.online && j.data.client.printer) break;
      if (i > 200) throw new Error(`box never reported its state: ${body}`);
      await sleep(25);
    }

    const bare = await forkChild('server-process.ts', ['bare'], { env: { BENCH_BODY: body } });
    children.push(bare);
    const check = await (await fetch(bare.ready.url + path, { headers: auth })).text();
    if (check !== body) throw new Error('bare server does not answer the same bytes');
    const length = Buffer.byteLength(body);

    let pinned = false;
    if (process.env.BENCH_PIN !== '0' && cpus().length >= 2) {
      pinned = pin(boxhub.pid, 1) && pin(bare.pid, 1) && pin(process.pid, 0);
    }
    header('GET /api/client/info: boxhub (Fastify, auth + SQLite lookups) vs bare node:http answering the same JSON', [
      `response: ${length} bytes of JSON; boxhub LOG_LEVEL=${LOG_LEVEL}; one simulated box connected`,
      `load: undici Pool, ${CONNECTIONS} keep-alive connections, closed loop, ${ROUNDS} rounds × ${SECONDS} s per server, alternating, after ${WARMUP} s warm-up each`,
      `processes: each server in its own process; ${pinned ? 'servers pinned to CPU 1, load generator to CPU 0' : 'not pinned (BENCH_PIN=0, one core, or no taskset)'}`,
    ]);

    const targets = [
      { name: 'bare', child: bare },
      { name: 'boxhub', child: boxhub },
    ] as const;
    for (const t of targets) await load(t.child, path, auth, length, WARMUP);
    const runs: Record<'bare' | 'boxhub', Run[]> = { bare: [], boxhub: [] };
    const fmt = (r: Run) =>
      `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}  cpu server ${(r.serverCpu * 100).toFixed(0)}% (${r.usPerReq.toFixed(0)} µs/req) load-gen ${(r.loadCpu * 100).toFixed(0)}%`;
    for (let i = 0; i < ROUNDS; i++) {
      for (const t of targets) {
        const r = await load(t.child, path, auth, length, SECONDS);
        runs[t.name].push(r);
        console.log(`round ${i + 1} ${t.name.padEnd(6)} ${fmt(r)}`);
      }
    }
    const mb = median(runs.bare.map((r) => r.rps));
    const mx = median(runs.boxhub.map((r) => r.rps));
    const ratios = runs.bare.map((b, i) => runs.boxhub[i]!.rps / b.rps);
    const ratio = mx / mb;
    const errors = [...runs.bare, ...runs.boxhub].reduce((n, r) => n + r.errors, 0);
    console.log('');
    console.log(
      `median bare   ${mb.toFixed(0)} req/s  (server cpu ${(median(runs.bare.map((r) => r.serverCpu)) * 100).toFixed(0)}%, load-gen cpu ${(median(runs.bare.map((r) => r.loadCpu)) * 100).toFixed(0)}%)`,
    );
    console.log(
      `median boxhub ${mx.toFixed(0)} req/s  (server cpu ${(median(runs.boxhub.map((r) => r.serverCpu)) * 100).toFixed(0)}%, load-gen cpu ${(median(runs.boxhub.map((r) => r.loadCpu)) * 100).toFixed(0)}%)`,
    );
    console.log(`per-round ratios: ${ratios.map((r) => r.toFixed(2)).join(' ')}`);
    // Server CPU time per answered request does not depend on how much CPU the machine could
    // spare, so on a busy machine it is the steadier comparison of the two servers' cost.
    const cb = median(runs.bare.map((r) => r.usPerReq));
    const cx = median(runs.boxhub.map((r) => r.usPerReq));
    console.log(
      `server cpu per request: bare ${cb.toFixed(0)} µs, boxhub ${cx.toFixed(0)} µs → cpu-normalised ratio ${(cb / cx).toFixed(2)} (what the throughput ratio would be with a full core each)`,
    );
    if (median(runs.bare.map((r) => r.serverCpu)) < 0.85) {
      console.log(
        'note: the bare server was not CPU-bound (load generator or machine limited); the ratio flatters boxhub',
      );
    }
    if (errors) console.log(`errors or unexpected answers: ${errors}`);
    console.log(
      `ratio boxhub/bare = ${ratio.toFixed(2)} (target ≥ ${TARGET})  ${verdict(ratio >= TARGET && errors === 0)}`,
    );
    // A FAIL is a figure, not a crash: the bench exits 0 unless requests went wrong.
    process.exitCode = errors === 0 ? 0 : 1;
  } finally {
    clearTimeout(watchdog);
    await box?.agent.stop().catch(() => undefined);
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
