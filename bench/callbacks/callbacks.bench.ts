// Callback delivery benchmarks (issue "Callback delivery that never loses a message"):
//   1. sustained deliveries per second to a loopback receiver (own process), embedded defaults
//      (SQLite) and PostgreSQL: N callbacks are recorded with the worker stopped, then the
//      worker drains them; rate = N / time until the last one is recorded delivered.
//   2. retry timing accuracy on the API's real schedule (5 s, 8/13/21 s; docs/api.md): probes that always
//      fail, started over 10 s while 10,000 other failing callbacks are pending; deviation =
//      arrival of retry k - (answer of attempt k-1 + delay k), measured by the receiver.
// Env: BENCH_N (20000), BENCH_PG_N (10000), BENCH_SKIP_TIMING=1, BOXHUB_TEST_DATABASE_URL.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import pg from 'pg';
import { loadConfig } from '../../packages/server/src/config.ts';
import { startServer, type RunningServer } from '../../packages/server/src/server.ts';

type Rec = { path: string; id: string; at: number; answeredAt: number };
const here = new URL('.', import.meta.url).pathname;
const pgUrl = process.env.BOXHUB_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function receiver(): Promise<{
  child: ChildProcess;
  origin: string;
  dump(): Promise<Rec[]>;
  close(): Promise<void>;
}> {
  const child = fork(join(here, 'receiver-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const origin = await new Promise<string>((resolve) =>
    child.once('message', (m) => resolve((m as { url: string }).url)),
  );
  return {
    child,
    origin,
    dump: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { dump: Rec[] }).dump));
        child.send('dump');
      }),
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send('close');
      }),
  };
}

async function server(
  env: Record<string, string>,
  pgSchema?: string,
): Promise<{ s: RunningServer; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'boxhub-bench-'));
  const s = await startServer(
    loadConfig({
      PORT: '0',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
      ...env,
    }),
    { logger: pino({ level: 'warn' }), ...(pgSchema ? { pgSchema } : {}) },
  );
  return {
    s,
    async close() {
      await s.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (pgSchema) {
        const c = new pg.Client({ connectionString: pgUrl });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${pgSchema} CASCADE`).finally(() => c.end());
      }
    },
  };
}

async function enqueueMany(
  s: RunningServer,
  appId: string,
  url: string,
  n: number,
  batch = 500,
  spreadMs = 0,
): Promise<void> {
  const start = Date.now();
  for (let i = 0; i < n; i += batch) {
    await s.db.kysely.transaction().execute(async (trx) => {
      for (let j = i; j < Math.min(n, i + batch); j++) {
        await s.services.callbacks.enqueue(trx, {
          appId,
          url,
          method: 'POST',
          event: 'bench',
          body: { uuid: 'bench', finish: false, error_code: 0, n: j },
          ...(spreadMs ? { notBefore: start + Math.floor((j / n) * spreadMs) } : {}),
        });
      }
    });
  }
}

async function countStatus(s: RunningServer, status: string): Promise<number> {
  const r = await s.db.kysely
    .selectFrom('callbacks')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', status)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function throughput(label: string, n: number, pgSchema?: string): Promise<number> {
  const rx = await receiver();
  const { s, close } = await server(pgSchema ? { DATABASE_URL: pgUrl } : {}, pgSchema);
  try {
    const app = await s.services.applications.create({ name: 'bench' });
    await s.jobRunner.stop();
    const t0 = performance.now();
    await enqueueMany(s, app.id, `${rx.origin}/ok`, n);
    const enqMs = performance.now() - t0;
    const t1 = performance.now();
    s.jobRunner.start();
    while ((await countStatus(s, 'delivered')) < n) await new Promise((r) => setTimeout(r, 50));
    const ms = performance.now() - t1;
    const got = (await rx.dump()).length;
    const rate = n / (ms / 1000);
    console.log(
      `${label}: ${n} callbacks delivered in ${(ms / 1000).toFixed(2)} s = ${rate.toFixed(0)} deliveries/s ` +
        `(target 2000/s: ${(rate / 2000).toFixed(2)}x); receiver saw ${got}; enqueue ${(n / (enqMs / 1000)).toFixed(0)}/s in transactions of 500`,
    );
    return rate;
  } finally {
    await close();
    await rx.close();
  }
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function timing(mode: 'burst' | 'spread'): Promise<void> {
  const delays = [8000, 13000, 21000];
  const rx = await receiver();
  const { s, close } = await server({});
  try {
    const app = await s.services.applications.create({ name: 'bench-timing' });
    const t0 = performance.now();
    // burst: all 10,000 due at once (their 4 attempts then come in waves at full capacity);
    // spread: first attempts due evenly over 20 s, so the node works at a fraction of capacity.
    await enqueueMany(s, app.id, `${rx.origin}/bg`, 10_000, 500, mode === 'spread' ? 20_000 : 0);
    console.log(
      `timing[${mode}]: 10,000 background callbacks (always 500) recorded in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const probes = 200;
    const held: Rec[] = [];
    for (let i = 0; i < probes; i++) {
      await s.db.kysely.transaction().execute((trx) =>
        s.services.callbacks.enqueue(trx, {
          appId: app.id,
          url: `${rx.origin}/probe`,
          method: 'POST',
          event: 'bench.probe',
          body: { i },
        }),
      );
      await new Promise((r) => setTimeout(r, 50));
    }
    const pendingAtStart = await countStatus(s, 'pending');
    console.log(
      `timing[${mode}]: ${probes} probes started over 10 s; ${pendingAtStart} callbacks pending; waiting for the full schedule (~45-65 s)`,
    );
    while (
      (await countStatus(s, 'pending')) > 0 ||
      (await rx.dump().then((d) => {
        held.push(...d);
        return false;
      }))
    )
      await new Promise((r) => setTimeout(r, 500));
    const recs = [...held, ...(await rx.dump())];
    const byId = new Map<string, Rec[]>();
    for (const r of recs) if (r.path.startsWith('/probe')) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
    const dev: number[] = [];
    for (const rs of byId.values()) {
      rs.sort((a, b) => a.at - b.at);
      for (let k = 1; k < rs.length; k++) dev.push(rs[k]!.at - rs[k - 1]!.answeredAt - delays[k - 1]!);
    }
    const bgAttempts = recs.filter((r) => r.path.startsWith('/bg')).length;
    const abs = dev.map(Math.abs);
    console.log(
      `timing[${mode}]: ${dev.length} retries measured (expected ${probes * 3}); background attempts during the run: ${bgAttempts} (expected 40000)`,
    );
    console.log(
      `timing[${mode}]: deviation from schedule ms: p50 ${pct(dev, 50).toFixed(1)}, p99 ${pct(dev, 99).toFixed(1)}, max ${Math.max(...dev).toFixed(1)}, min ${Math.min(...dev).toFixed(1)}; ` +
        `p99 |dev| ${pct(abs, 99).toFixed(1)} ms (target <= 250: ${(pct(abs, 99) / 250).toFixed(2)}x of budget)`,
    );
  } finally {
    await close();
    await rx.close();
  }
}

console.log(`callbacks bench on ${cpus().length} CPUs, Node ${process.version}`);
await throughput('SQLite (embedded defaults)', Number(process.env.BENCH_N ?? 20000));
let pgOk = false;
try {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  await c.end();
  pgOk = true;
} catch (e) {
  console.log(`PostgreSQL not reachable at ${pgUrl}: ${(e as Error).message}; skipping its figure`);
}
if (pgOk)
  await throughput('PostgreSQL', Number(process.env.BENCH_PG_N ?? 10000), `bench_${randomBytes(4).toString('hex')}`);
if (!process.env.BENCH_SKIP_TIMING) {
  await timing('spread');
  await timing('burst');
}
