// Reconnect storms (docs/box-protocol.md, "Reconnect"): BENCH_BOXES (10,000) simulated boxes on
// one node lose it at once, (a) because the server process dies (kill -9) and is started again,
// (b) because the external broker (a private Mosquitto) is restarted under a running server.
// Targets: every box back online within 30 s of the loss; the API's p99 under 100 ms while the
// boxes come back; no box event lost or applied twice.
//
// Processes: the server (server-process.ts; SQLite, its embedded broker in pass a), the boxes
// (boxes-process.ts, BENCH_BOX_PROCS of them, each box the real agent's link with its default
// reconnect policy: 1 s base, 20 s cap, full jitter, reset after 30 s up), a boxes process of
// BENCH_SCANNERS boxes with a paced simulated scanner, and this one: the API calls, the callback
// receiver and the clock.
//
// "Back online" is measured twice: on the box (its link's first CONNACK after the loss) and on
// the server (the database has the box's new session: online, last_connect_at after the loss).
// The API: BENCH_API_RATE (40) GET /api/client/info a second to random bound boxes, timed at the
// client, from the moment the server answers again until every box is back (calls made while
// the server is down are counted apart). Events: each scanner box scans BENCH_SHEETS (12) sheets
// at 60 a minute, started 3 s before the loss, so items are made and reported while the node
// or broker is away; afterwards each scan must have every page once (total_pages), one
// scan.item_data callback per item (by item id; redelivery of one callback id is allowed) and one
// scan.finish.
//
// BENCH_SERVER_CPU_QUOTA (0.5: half a core; unset: the whole machine) limits the server's CPU
// with a cgroup of its own (support/cpu-quota.ts, root only): how much room the targets have on
// a slower machine of the same kind.
//
// File descriptors: every box holds one socket on each side; 10,000 boxes need ~10,000 in the
// server (or Mosquitto) and ~10,000 over the boxes processes. The bench checks the soft limit
// (`ulimit -n`, 20,000 here) and refuses to start if it is too low, rather than fail midway.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { Boxhub } from '@boxhub/sdk';
import { DEFAULT_RECONNECT_MAX_MS, DEFAULT_STABLE_MS } from '@boxhub/agent';
import { startReceiver, type Receiver } from '../packages/server/src/testing/receiver.ts';
import {
  forkChild,
  header,
  LIMITS_OUT_OF_REACH,
  lowerPriority,
  percentile,
  sleep,
  tempDir,
  verdict,
  type Child,
} from './support/child.ts';
import { startPrivateMosquitto } from './support/mosquitto.ts';
import { removeCpuGroup } from './support/cpu-group.ts';

const BOXES = Number(process.env.BENCH_BOXES ?? 10_000);
const BOX_PROCS = Number(process.env.BENCH_BOX_PROCS ?? 2);
const SCANNERS = Math.min(Number(process.env.BENCH_SCANNERS ?? 20), BOXES);
const SHEETS = Number(process.env.BENCH_SHEETS ?? 12);
/**
 * The scans' resolution. 100 dpi: the 20 scanner boxes stand in for 20 machines of their own, and
 * at the default 200 dpi their page work (drawing, encoding, blank detection) took over a core of
 * this machine's two through the storm, from the server and the other boxes (bench/README.md,
 * "reconnect-storm", runs 93-96). The server's work per page does not depend on it.
 */
const SCAN_DPI = Number(process.env.BENCH_SCAN_DPI ?? 100) as 100 | 150 | 200 | 240 | 300 | 400 | 600 | 1200;
const API_RATE = Number(process.env.BENCH_API_RATE ?? 40);
const PASSES = (process.env.BENCH_PASSES ?? 'server,broker').split(',');
/** A smaller CPU for the node (support/cpu-quota.ts): 0.5 stands for a machine of half the speed. */
const SERVER_CPU = process.env.BENCH_SERVER_CPU_QUOTA;
const ONLINE_TARGET_MS = 30_000;
const API_P99_TARGET_MS = 100;
const GIVE_UP_MS = 120_000;
// The simulated boxes stand in for 10,000 machines of their own; here they share 2 cores with the
// node and the broker under test, so they run at a lower priority (bench/README.md, "reconnect-storm").
const BOXES_NICE = Number(process.env.BENCH_BOXES_NICE ?? 10);
// The agent's defaults (packages/agent/src/link/connection.ts, `boxhub agent --reconnect-max`).
const AGENT_BACKOFF = { baseMs: 1000, maxMs: DEFAULT_RECONNECT_MAX_MS, stableMs: DEFAULT_STABLE_MS };

type Dev = { uuid: string; secret: string };
interface Recovery {
  times: number[];
  missing: number;
  busy: number;
  /** Sessions lost again after their CONNACK, and the links' errors by message. */
  drops: number;
  errors: Record<string, number>;
}

function fdLimit(): number {
  try {
    return Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  } catch {
    return NaN;
  }
}

async function api(
  pool: Pool,
  path: string,
  key: string,
  method: 'GET' | 'POST' = 'GET',
  body?: unknown,
): Promise<{ code: number; msg: string }> {
  const r = await pool.request({
    method,
    path,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode} for ${path}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as { code: number; msg: string };
}

/** GET /api/client/info at a steady rate; each call's start time and latency (or failure). */
class Trickle {
  readonly calls: { at: number; ms: number; ok: boolean }[] = [];
  private stopped = false;
  private done: Promise<void> | undefined;
  private readonly url: () => string;
  private readonly key: string;
  private readonly devs: Dev[];
  constructor(url: () => string, key: string, devs: Dev[]) {
    this.url = url;
    this.key = key;
    this.devs = devs;
  }
  start(): void {
    let pool = new Pool(this.url(), { connections: 8, keepAliveTimeout: 10_000, connectTimeout: 2000 });
    let poolUrl = this.url();
    const inFlight = new Set<Promise<void>>();
    this.done = (async () => {
      const gap = 1000 / API_RATE;
      let next = performance.now();
      while (!this.stopped) {
        if (this.url() !== poolUrl) {
          void pool.destroy();
          poolUrl = this.url();
          pool = new Pool(poolUrl, { connections: 8, keepAliveTimeout: 10_000, connectTimeout: 2000 });
        }
        const at = Date.now();
        const s = performance.now();
        const d = this.devs[Math.floor(Math.random() * this.devs.length)]!;
        const p = api(pool, `/api/client/info?uuid=${d.uuid}`, this.key)
          .then((r) => {
            this.calls.push({ at, ms: performance.now() - s, ok: r.code === 0 });
          })
          .catch(() => {
            this.calls.push({ at, ms: performance.now() - s, ok: false });
          })
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        next += gap;
        await sleep(Math.max(0, next - performance.now()));
      }
      await Promise.all(inFlight);
      await pool.close().catch(() => undefined);
    })();
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

interface ScanRun {
  uuid: string;
  client: string;
}

async function startScans(sdk: Boxhub, scanners: Child, devs: Dev[], rx: Receiver): Promise<ScanRun[]> {
  await scanners.call('load', { sheets: SHEETS, back: 'blank' });
  const runs: ScanRun[] = [];
  for (const d of devs) {
    // The box reports its loaded feeder in its state; until the server has it, create refuses.
    for (let i = 0; ; i++) {
      try {
        const r = await sdk.scan.create({
          client_uuid: d.uuid,
          options: { callback_url: rx.url, duplex: false, resolution: SCAN_DPI },
        });
        runs.push({ uuid: r.uuid!, client: d.uuid });
        break;
      } catch (e) {
        if (i > 100) throw e;
        await sleep(100);
      }
    }
  }
  return runs;
}

async function checkScans(
  sdk: Boxhub,
  runs: ScanRun[],
  rx: Receiver,
): Promise<{ lost: number; twice: number; unfinished: number; detail: string[] }> {
  const detail: string[] = [];
  let lost = 0;
  let twice = 0;
  let unfinished = 0;
  const until = Date.now() + 90_000;
  for (const run of runs) {
    let info = await sdk.scan.info({ client_uuid: run.client, scan_uuid: run.uuid });
    while (!info.finished && Date.now() < until) {
      await sleep(500);
      info = await sdk.scan.info({ client_uuid: run.client, scan_uuid: run.uuid });
    }
    if (!info.finished) {
      unfinished++;
      detail.push(`${run.uuid}: not finished`);
      continue;
    }
    if (info.total_pages < SHEETS) {
      lost += SHEETS - info.total_pages;
      detail.push(`${run.uuid}: ${info.total_pages} of ${SHEETS} pages, error_code ${info.error_code}`);
    }
    if (info.total_pages > SHEETS) {
      twice += info.total_pages - SHEETS;
      detail.push(`${run.uuid}: ${info.total_pages} pages of ${SHEETS} sheets`);
    }
    // Callbacks: by item id; a second callback id for one item would be the item applied twice.
    const until2 = Date.now() + 30_000;
    const mine = () =>
      rx.received
        .map((r) => ({ id: r.id, b: JSON.parse(r.body) as { event?: string; uuid?: string; item_id?: number } }))
        .filter((r) => r.b.uuid === run.uuid);
    while (!mine().some((r) => r.b.event === 'scan.finish') && Date.now() < until2) await sleep(200);
    const cbs = mine();
    const items = new Map<number, Set<string>>();
    for (const c of cbs)
      if (c.b.event === 'scan.item_data' && c.b.item_id !== undefined)
        (items.get(c.b.item_id) ?? items.set(c.b.item_id, new Set()).get(c.b.item_id)!).add(c.id);
    const finishes = new Set(cbs.filter((c) => c.b.event === 'scan.finish').map((c) => c.id)).size;
    const numbered = [...items.keys()].sort((a, b) => a - b);
    if (items.size !== info.item_size || numbered.some((n, i) => n !== i + 1)) {
      lost++;
      detail.push(`${run.uuid}: item callbacks ${numbered.join(',')} for ${info.item_size} items`);
    }
    for (const [n, ids] of items)
      if (ids.size > 1) {
        twice++;
        detail.push(`${run.uuid}: item ${n} delivered as ${ids.size} callbacks`);
      }
    if (finishes !== 1) {
      finishes === 0 ? lost++ : twice++;
      detail.push(`${run.uuid}: ${finishes} scan.finish callbacks`);
    }
  }
  return { lost, twice, unfinished, detail };
}

function dist(label: string, times: number[]): string {
  const s = [...times].sort((a, b) => a - b);
  const f = (p: number) => (percentile(s, p) / 1000).toFixed(1);
  return `${label}: n ${s.length}  p50 ${f(50)} s  p90 ${f(90)} s  p99 ${f(99)} s  max ${((s[s.length - 1] ?? NaN) / 1000).toFixed(1)} s`;
}

/** Waits until the database has every box's new session (last_connect_at at or after `at`). */
async function serverRecovery(
  server: () => Child,
  at: number,
): Promise<{ allMs: number | undefined; curve: string[] }> {
  const curve: string[] = [];
  let lastMark = 0;
  for (;;) {
    const elapsed = Date.now() - at;
    let n = -1;
    try {
      n = await server().call<number>('reconnectedSince', { at }, 10_000);
    } catch {
      /* the server is not up yet */
    }
    if (elapsed - lastMark >= 5000) {
      lastMark = elapsed - (elapsed % 5000);
      curve.push(`${(elapsed / 1000).toFixed(0)} s: ${Math.max(0, n)}`);
    }
    if (n >= BOXES) return { allMs: elapsed, curve };
    if (elapsed > GIVE_UP_MS) return { allMs: undefined, curve: [...curve, `gave up with ${n} of ${BOXES}`] };
    await sleep(200);
  }
}

async function main(): Promise<void> {
  const fds = fdLimit();
  const perProc = Math.ceil(BOXES / BOX_PROCS);
  if (fds < BOXES + 500 || fds < perProc * 2 + 500)
    throw new Error(
      `the open-file limit (ulimit -n) is ${fds}; ${BOXES} boxes need at least ${BOXES + 500}: raise it (ulimit -n 65536) or lower BENCH_BOXES`,
    );
  const dataDir = tempDir();
  const brokerDir = tempDir();
  const watchdog = setTimeout(() => {
    console.error('reconnect-storm: gave up after 20 min');
    process.exit(2);
  }, 20 * 60_000);
  watchdog.unref();
  const children = new Set<Child>();
  const rx = await startReceiver();
  const results: string[] = [];
  let allOk = true;
  try {
    header(
      `reconnect storm: ${BOXES} boxes on one node lose it at once (${PASSES.join(', ')} restart); back online ≤ ${ONLINE_TARGET_MS / 1000} s, API p99 < ${API_P99_TARGET_MS} ms, no event lost or applied twice`,
      [
        `server: its own process (SQLite, LOG_LEVEL=warn, admission BOXHUB_MQTT_ADMIT_* at their defaults unless set${SERVER_CPU ? `, limited to ${SERVER_CPU} of a core: BENCH_SERVER_CPU_QUOTA` : ''}); boxes: ${BOX_PROCS} processes of agent links (reconnect 1 s base, ${DEFAULT_RECONNECT_MAX_MS / 1000} s cap, full jitter, reset after ${DEFAULT_STABLE_MS / 1000} s up), keepalive 30 s, at nice ${BOXES_NICE} (BENCH_BOXES_NICE)`,
        `events: ${SCANNERS} boxes scanning ${SHEETS} sheets each at 60 a minute, ${SCAN_DPI} dpi, through the loss; API: ${API_RATE} GET /api/client/info a second; open-file limit ${fds}`,
      ],
    );
    const baseEnv: Record<string, string> = {
      HOST: '127.0.0.1',
      BOXHUB_MQTT_HOST: '127.0.0.1',
      BOXHUB_DATA_DIR: dataDir,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
      ...LIMITS_OUT_OF_REACH,
    };
    const startServer = async (env: Record<string, string>): Promise<Child> => {
      const prof = process.env.BENCH_CPU_PROF;
      const c = await forkChild('server-process.ts', ['boxhub'], {
        env: { ...baseEnv, ...(SERVER_CPU ? { BENCH_CPU_QUOTA: SERVER_CPU } : {}), ...env },
        readyTimeoutMs: 120_000,
        execArgv: [
          ...(SERVER_CPU ? ['--import', fileURLToPath(new URL('./support/cpu-quota.ts', import.meta.url))] : []),
          ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
          ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        ],
      });
      children.add(c);
      // The child's cgroup goes with it (cpu-group.ts).
      if (SERVER_CPU) c.proc.once('exit', () => removeCpuGroup(c.pid));
      return c;
    };
    let server = await startServer({ PORT: '0', BOXHUB_MQTT_PORT: '0' });
    const app = await server.call<{ api_key: string; callback_secret: string }>('createApp', { name: 'storm' });
    const t0 = performance.now();
    const devs = await server.call<Dev[]>('register', { n: BOXES }, 900_000);
    const pool = new Pool(server.ready.url, { connections: 8 });
    const queue = [...devs];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let d = queue.shift(); d; d = queue.shift()) {
          const r = await api(pool, '/api/client/bind', app.api_key, 'POST', {
            uuid: d.uuid,
            name: `box ${d.uuid.slice(0, 8)}`,
          });
          if (r.code !== 0) throw new Error(`bind ${d.uuid}: ${r.code} ${r.msg}`);
        }
      }),
    );
    await pool.close();
    console.log(`registered and bound ${BOXES} boxes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const scanDevs = devs.slice(0, SCANNERS);
    const plainDevs = devs.slice(SCANNERS);

    const startBoxes = async (url: string): Promise<{ all: Child[]; scanners: Child }> => {
      const t = performance.now();
      // BENCH_CPU_PROF profiles the boxes processes too (a box side that stands still is the bench's own).
      const prof = process.env.BENCH_CPU_PROF;
      const boxesArgs = prof ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${prof}`] } : {};
      const scanners = await forkChild('boxes-process.ts', [], boxesArgs);
      children.add(scanners);
      const procs = [scanners];
      for (let i = 0; i < BOX_PROCS; i++) {
        const c = await forkChild('boxes-process.ts', [], boxesArgs);
        children.add(c);
        procs.push(c);
      }
      if (BOXES_NICE > 0 && !procs.every((c) => lowerPriority(c.pid, BOXES_NICE)))
        throw new Error(
          `could not lower the boxes processes to nice ${BOXES_NICE} (BENCH_BOXES_NICE=0 runs them at the default)`,
        );
      const share = Math.ceil(plainDevs.length / BOX_PROCS);
      await Promise.all([
        scanners.call(
          'connect',
          {
            url,
            boxes: scanDevs,
            keepaliveSec: 30,
            concurrency: 10,
            timeoutMs: 300_000,
            scanner: 'sim:?ppm=60',
            backoff: AGENT_BACKOFF,
          },
          600_000,
        ),
        ...procs.slice(1).map((p, i) =>
          p.call(
            'connect',
            {
              url,
              boxes: plainDevs.slice(i * share, (i + 1) * share),
              keepaliveSec: 30,
              concurrency: 50,
              timeoutMs: 300_000,
              backoff: AGENT_BACKOFF,
            },
            600_000,
          ),
        ),
      ]);
      console.log(`${BOXES} boxes connected in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      return { all: procs, scanners };
    };

    const storm = async (
      name: string,
      boxes: { all: Child[]; scanners: Child },
      cause: () => Promise<string>,
    ): Promise<void> => {
      // Every box online in the database before the loss.
      const until = Date.now() + 300_000;
      while ((await server.call<number>('onlineInDb')) < BOXES) {
        if (Date.now() > until) throw new Error('not every box came online before the storm');
        await sleep(500);
      }
      // A fleet that has been up a while: each link's delays are back at the base (stableMs),
      // and the node has closed the device-event windows of the boxes' first connections (the
      // first report of each box is its baseline, docs/callbacks.md "Device events"): 10,000 of
      // them still open made every box's return look like news, and their closing part of the storm.
      await sleep(DEFAULT_STABLE_MS + 1000);
      const openWindows = async () =>
        (await server.call<{ rows: number }>('pendingJobs', { kind: 'device.event' })).rows;
      const firstWindows = await openWindows();
      while ((await openWindows()) > 0) {
        if (Date.now() > until + 300_000) throw new Error('the first device-event windows did not close');
        await sleep(1000);
      }
      console.log(
        `first device-event windows still open when the fleet had been up ${(DEFAULT_STABLE_MS + 1000) / 1000} s: ${firstWindows} (waited for them to close)`,
      );
      const sdk = new Boxhub({ baseUrl: server.ready.url, apiKey: app.api_key, retry: { retries: 0 } });
      const runs = await startScans(sdk, boxes.scanners, scanDevs, rx);
      await sleep(3000);
      for (const b of boxes.all) await b.call('mark');
      const trickle = new Trickle(() => server.ready.url, app.api_key, devs);
      trickle.start();
      const at = Date.now();
      const what = await cause();
      const upAt = Date.now();
      // Wall-clock time, to read beside a node's own logs (a stall log, BENCH_TRACE).
      console.log(`back at ${new Date(upAt).toISOString()}`);
      const srv = await serverRecovery(() => server, at);
      await sleep(2000);
      await trickle.stop();
      const rec = await Promise.all(boxes.all.map((b) => b.call<Recovery>('recovery', { at })));
      const times = rec.flatMap((r) => r.times);
      const missing = rec.reduce((n, r) => n + r.missing, 0);
      const busy = rec.reduce((n, r) => n + r.busy, 0);
      const endAt = at + (srv.allMs ?? GIVE_UP_MS);
      const during = trickle.calls.filter((c) => c.at >= upAt && c.at <= endAt);
      const okLat = during
        .filter((c) => c.ok)
        .map((c) => c.ms)
        .sort((a, b) => a - b);
      const failedDuring = during.filter((c) => !c.ok).length;
      // When the slowest calls came tells a node's cold start (the first calls after it was
      // back) from stalls in the storm.
      const slowest = during
        .filter((c) => c.ok)
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 12)
        .map((c) => `${c.ms.toFixed(0)} ms at ${((c.at - upAt) / 1000).toFixed(2)} s`);
      const down = trickle.calls.filter((c) => c.at < upAt);
      const p99 = percentile(okLat, 99);
      const ev = await checkScans(
        new Boxhub({ baseUrl: server.ready.url, apiKey: app.api_key, retry: { retries: 0 } }),
        runs,
        rx,
      );
      console.log(`\n## ${name}: ${what}`);
      console.log(
        dist('boxes back online, box side (CONNACK after the loss)', times) + (missing ? `  (${missing} never)` : ''),
      );
      const backMs = srv.allMs === undefined ? undefined : srv.allMs - (upAt - at);
      console.log(
        `every box back online, server side (new session in the database): ${srv.allMs === undefined ? 'NOT within 120 s' : `${(srv.allMs / 1000).toFixed(1)} s after the loss, ${(backMs! / 1000).toFixed(1)} s after the ${name.split(' ')[0] === 'server' ? 'node' : 'broker'} was back`}; per 5 s after the loss: ${srv.curve.join(', ')}`,
      );
      console.log(
        dist(
          'boxes back online, box side, after it was back',
          times.map((t) => t - (upAt - at)),
        ),
      );
      console.log(`logins refused while busy (CONNACK 3, box side): ${busy}`);
      const errs = new Map<string, number>();
      for (const r of rec) for (const [k, n] of Object.entries(r.errors)) errs.set(k, (errs.get(k) ?? 0) + n);
      console.log(
        `sessions lost again after their CONNACK (box side): ${rec.reduce((n, r) => n + r.drops, 0)}; link errors: ${
          [...errs].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'
        }`,
      );
      console.log(
        `API during the storm: ${okLat.length} answered, ${failedDuring} failed; p50 ${percentile(okLat, 50).toFixed(1)} ms  p99 ${p99.toFixed(1)} ms  max ${(okLat[okLat.length - 1] ?? NaN).toFixed(1)} ms (${down.length} calls while the server was coming back, ${down.filter((c) => !c.ok).length} of them failed)`,
      );
      console.log(`API's slowest calls, after the server was back: ${slowest.join(', ')}`);
      console.log(
        `events: ${runs.length} scans of ${SHEETS} sheets: ${ev.lost} lost, ${ev.twice} applied twice, ${ev.unfinished} unfinished`,
      );
      for (const d of ev.detail.slice(0, 10)) console.log(`  ${d}`);
      const onlineOk = backMs !== undefined && backMs <= ONLINE_TARGET_MS && missing === 0;
      const apiOk = p99 < API_P99_TARGET_MS && failedDuring === 0;
      const evOk = ev.lost === 0 && ev.twice === 0 && ev.unfinished === 0;
      allOk &&= onlineOk && apiOk && evOk;
      results.push(
        `${name}: every box back online ${backMs === undefined ? '>120 s after the loss' : `${(backMs / 1000).toFixed(1)} s after it was back (${(srv.allMs! / 1000).toFixed(1)} s after the loss)`} (target ≤ 30 s) ${verdict(onlineOk)}; API p99 ${p99.toFixed(1)} ms (target < 100 ms, no failures) ${verdict(apiOk)}; events lost ${ev.lost}, twice ${ev.twice} ${verdict(evOk)}`,
      );
    };

    if (PASSES.includes('server')) {
      const boxes = await startBoxes(server.ready.mqttUrl!);
      const ports = { PORT: new URL(server.ready.url).port, BOXHUB_MQTT_PORT: new URL(server.ready.mqttUrl!).port };
      await storm('server restart (kill -9, started again on the same ports)', boxes, async () => {
        const old = server;
        const gone = new Promise<void>((r) => old.proc.once('exit', () => r()));
        old.proc.kill('SIGKILL');
        await gone;
        children.delete(old);
        const t = Date.now();
        server = await startServer(ports);
        if (process.env.BENCH_DEBUG) console.log(server.tail());
        return `server down ${((Date.now() - t) / 1000).toFixed(1)} s (start-up of the new process)`;
      });
      for (const b of boxes.all) {
        await b.stop();
        children.delete(b);
      }
    }
    if (PASSES.includes('broker')) {
      await server.stop();
      children.delete(server);
      const mosq = await startPrivateMosquitto(brokerDir, devs);
      server = await startServer({ PORT: '0', MQTT_URL: mosq.serverUrl });
      const boxes = await startBoxes(mosq.boxUrl);
      await storm(
        'external broker restart (Mosquitto 2.0, persistence on, SIGTERM and started again)',
        boxes,
        async () => {
          const r = await mosq.restart();
          return `broker down ${(r.downMs / 1000).toFixed(1)} s`;
        },
      );
      for (const b of boxes.all) {
        await b.stop();
        children.delete(b);
      }
      await server.stop();
      children.delete(server);
      await mosq.stop();
    }
    console.log('');
    for (const r of results) console.log(r);
    console.log(`reconnect storm: ${verdict(allOk)}`);
  } finally {
    clearTimeout(watchdog);
    for (const c of children) await c.stop().catch(() => undefined);
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(brokerDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
