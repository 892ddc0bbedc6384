// Pages reach the application while the stack is still scanning (docs/scanning.md, "Items as
// the stack scans"): the time from the first page the box's scanner hands over to the first
// scan.item_data callback the application receives, on the demo's scanner (sim, 60 pages a
// minute, text on both sides, as `boxhub serve --demo` has it) at 200 dpi, target under 5 s;
// side by side in the same run, the rule before items were cut as the stack scans (one item a
// batch of paper: item_pages 200, item_seconds 0). Then the box's memory: peak RSS of the agent
// process scanning a 200-page stack (100 sheets duplex, 200 dpi colour) to its end with the
// default rule, target ≤ 150 MB: on the sources (tsx, as the tests run), and on the build as a
// box runs it (dist/, after `npm run build`), side by side with one item a batch, and with
// MALLOC_MMAP_THRESHOLD_=131072 or MALLOC_ARENA_MAX=2 (docs/scanning.md, "Figures").
//
// Three processes: the server, the box agent (bench/scan/agent-process.mjs: the real BoxAgent
// with the simulated scanner; a fresh one for each memory run, so its high-water mark is that
// stack's), and this one, which creates the scans and receives the callbacks. The two clocks
// compared are the same machine's.
// Knobs: BENCH_FIRST_ROUNDS (5), BENCH_FIRST_OLD_SHEETS (10: 20 pages, about 20 s),
// BENCH_FIRST_MEM_SHEETS (100), BENCH_FIRST_BASELINE (a built checkout to compare with) and
// BENCH_FIRST_MEM_RUNS (3).
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SimScanner } from '../../packages/agent/src/drivers/sim/scanner.ts';
import { forkChild, header, median, sleep, tempDir, verdict, type Child } from '../support/child.ts';

const ROUNDS = Number(process.env.BENCH_FIRST_ROUNDS ?? 5);
const OLD_SHEETS = Number(process.env.BENCH_FIRST_OLD_SHEETS ?? 10);
const MEM_SHEETS = Number(process.env.BENCH_FIRST_MEM_SHEETS ?? 100);
/** Another checkout (built) whose agent is measured beside this one's, and how many runs each. */
const BASELINE = process.env.BENCH_FIRST_BASELINE;
const MEM_RUNS = Number(process.env.BENCH_FIRST_MEM_RUNS ?? 3);
/** The memory runs' scanner: 240 sides a minute is a fast departmental duplex ADF (60 sheets a
 *  minute); `sim:` (unpaced, ~50 sides a second here) is a stress no scanner makes. */
const MEM_SCANNER = process.env.BENCH_FIRST_MEM_SCANNER ?? 'sim:?ppm=240';
const DPI = 200;
const MB = 1024 * 1024;

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Two printed sides at 200 dpi colour, quality 90, drawn once (the memory run's pages). */
async function drawSides(): Promise<{ front: string; back: string }> {
  const dir = tempDir();
  const sim = new SimScanner('sim:');
  sim.load([{ front: { text: { seed: 0 } }, back: { text: { seed: 1 } } }]);
  const files: string[] = [];
  for await (const p of sim.scan(
    { duplex: true, resolution: DPI, color: 'color', jpegQuality: 90 },
    new AbortController().signal,
  )) {
    const f = join(dir, `side-${files.length}.jpg`);
    writeFileSync(f, p.image.data);
    files.push(f);
  }
  await sim.close();
  return { front: files[0]!, back: files[1]! };
}

header(
  'scan: first page to first scan.item_data callback (demo scanner, 200 dpi), and box memory on a 200-page stack',
  [
    `${ROUNDS} scans with the default item rule and 1 with one item a batch (${OLD_SHEETS} sheets), sim:?ppm=60&back=text (the demo's pacing, generated pages)`,
    `memory: ${MEM_SHEETS} sheets duplex, 200 dpi colour quality 90 (pages drawn beforehand), ${MEM_SCANNER}, a fresh agent process each`,
  ],
);

// The application's callback receiver: when each event of each task arrived.
const events: Array<{ at: number; event: string; uuid: string; item_id?: number; pages?: number }> = [];
const receiver = createServer((req, res) => {
  void body(req).then((text) => {
    const at = Date.now();
    res.writeHead(200).end();
    const e = JSON.parse(text) as { event: string; uuid: string; item_id?: number; pages?: number };
    events.push({ at, ...e });
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const callbackUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/scan`;

const server = await forkChild('server-process.ts', ['boxhub'], {
  env: {
    PORT: '0',
    HOST: '127.0.0.1',
    BOXHUB_MQTT_PORT: '0',
    BOXHUB_DATA_DIR: tempDir(),
    LOG_LEVEL: 'warn',
    BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
  },
});
const children: Child[] = [server];
const waitFor = async <T>(what: string, get: () => T | undefined, ms = 600_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`no ${what} within ${ms} ms`);
    await sleep(20);
  }
};
try {
  const app = await server.call<{ id: string; api_key: string }>('createApp', { name: 'first-item' });
  const [demo, mem] = await server.call<{ uuid: string; secret: string }[]>('register', { n: 2 });
  const api = async (path: string, json: unknown) => {
    const r = await fetch(`${server.ready.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    const b = (await r.json()) as { code: number; msg: string; data: Record<string, unknown> };
    if (b.code !== 0) throw new Error(`${path}: ${b.code} ${b.msg}`);
    return b.data;
  };
  for (const d of [demo!, mem!]) await api('/api/client/bind', { uuid: d.uuid, name: 'bench' });

  // --- first page → first item callback, on the demo's scanner ------------------------------
  const box = await forkChild('../scan/agent-process.mjs', []);
  children.push(box);
  await box.call('connect', {
    url: server.ready.mqttUrl,
    uuid: demo!.uuid,
    secret: demo!.secret,
    scanner: 'sim:?ppm=60&back=text',
  });
  const scanOnce = async (sheets: number, options: Record<string, unknown>) => {
    await box.call('load', { sheets });
    await sleep(1500); // the server hears of the loaded feeder from the box's next state
    const before = (await box.call<number[]>('firstPages')).length;
    const uuid = String(
      (
        await api('/api/scan/create', {
          client_uuid: demo!.uuid,
          options: { callback_url: callbackUrl, resolution: DPI, ...options },
        })
      ).uuid,
    );
    const first = await waitFor('scan.item_data callback', () =>
      events.find((e) => e.uuid === uuid && e.event === 'scan.item_data'),
    );
    const firstPage = (await box.call<number[]>('firstPages'))[before]!;
    // What is left of the stack is not needed: stopped, and the feeder emptied by scanning it out.
    await api('/api/scan/stop', { client_uuid: demo!.uuid });
    await waitFor('scan.finish', () => events.find((e) => e.uuid === uuid && e.event === 'scan.finish'));
    return { ms: first.at - firstPage, pages: first.pages ?? 0 };
  };
  const now: Array<{ ms: number; pages: number }> = [];
  for (let r = 0; r < ROUNDS; r++) now.push(await scanOnce(20, {}));
  if (ROUNDS > 0) {
    const old = await scanOnce(OLD_SHEETS, { item_pages: 200, item_seconds: 0 });
    const med = median(now.map((x) => x.ms));
    console.log(
      `default rule (item_pages 20, item_seconds 3): ${now.map((x) => `${(x.ms / 1000).toFixed(2)} s (${x.pages} pages)`).join(', ')}`,
    );
    console.log(
      `one item a batch, ${OLD_SHEETS} sheets: ${(old.ms / 1000).toFixed(2)} s (${old.pages} pages in the first item)`,
    );
    console.log(
      `first page → first scan.item_data callback: median ${(med / 1000).toFixed(2)} s, max ${(Math.max(...now.map((x) => x.ms)) / 1000).toFixed(2)} s (target < 5 s: ${verdict(Math.max(...now.map((x) => x.ms)) < 5000)}); ${(old.ms / med).toFixed(1)}× sooner than one item a batch`,
    );
  }
  await box.stop();

  // --- box memory on a 200-page stack ---------------------------------------------------------
  const sides = await drawSides();
  const built = existsSync(new URL('../../packages/agent/dist/index.js', import.meta.url));
  // Side by side: the same stack in one item (the rule before items were cut as it scans).
  const variants: Array<{
    name: string;
    built: boolean;
    env: Record<string, string>;
    options?: Record<string, unknown>;
    script?: string;
  }> = [
    { name: 'sources (tsx)', built: false, env: {} },
    ...(built
      ? [
          { name: 'build (dist/)', built: true, env: {} },
          { name: 'build, one item a batch', built: true, env: {}, options: { item_pages: 200, item_seconds: 0 } },
          { name: 'build, MALLOC_MMAP_THRESHOLD_=131072', built: true, env: { MALLOC_MMAP_THRESHOLD_: '131072' } },
          // Fewer glibc arenas for the threads that touch page buffers (libuv's pool, libvips).
          { name: 'build, MALLOC_ARENA_MAX=2', built: true, env: { MALLOC_ARENA_MAX: '2' } },
        ]
      : []),
  ];
  if (!built) console.log('(no packages/agent/dist: run `npm run build` first to measure the agent as a box runs it)');
  // BENCH_FIRST_BASELINE=<another checkout, built>: instead, that checkout's agent and this one's
  // in alternating runs (BENCH_FIRST_MEM_RUNS each), to compare two versions side by side.
  if (BASELINE) {
    variants.splice(0, variants.length);
    for (let r = 0; r < MEM_RUNS; r++)
      variants.push(
        {
          name: `baseline ${BASELINE}`,
          built: true,
          env: {},
          script: resolve(BASELINE, 'bench/scan/agent-process.mjs'),
        },
        { name: 'build (dist/)', built: true, env: {} },
      );
  }
  for (const v of variants) {
    const agent = await forkChild(v.script ?? '../scan/agent-process.mjs', [], { built: v.built, env: v.env });
    children.push(agent);
    await agent.call('connect', {
      url: server.ready.mqttUrl,
      uuid: mem!.uuid,
      secret: mem!.secret,
      scanner: MEM_SCANNER,
    });
    await agent.call('load', { sheets: MEM_SHEETS, images: sides });
    await sleep(1500);
    const base = await agent.call<{ rss: number; maxRss: number }>('rss');
    const t0 = performance.now();
    const uuid = String(
      (
        await api('/api/scan/create', {
          client_uuid: mem!.uuid,
          options: { callback_url: callbackUrl, resolution: DPI, blank_page_skip: false, ...v.options },
        })
      ).uuid,
    );
    await waitFor('scan.finish of the 200-page stack', () =>
      events.find((e) => e.uuid === uuid && e.event === 'scan.finish'),
    );
    const seconds = (performance.now() - t0) / 1000;
    const peak = await agent.call<{ rss: number; maxRss: number }>('rss');
    const items = events.filter((e) => e.uuid === uuid && e.event === 'scan.item_data');
    const pages = items.reduce((n, e) => n + (e.pages ?? 0), 0);
    console.log(
      `200-page stack, agent on the ${v.name}: ${pages} pages in ${items.length} items (${items.map((e) => e.pages).join(', ')}) in ${seconds.toFixed(1)} s; RSS ${(base.rss / MB).toFixed(0)} MB before the scan, peak ${(peak.maxRss / MB).toFixed(0)} MB (target ≤ 150 MB: ${verdict(peak.maxRss <= 150 * MB)})`,
    );
    await agent.stop();
  }
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  receiver.close();
}
