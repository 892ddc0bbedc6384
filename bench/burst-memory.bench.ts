// Server memory under the bursts that found the missing node-wide bound on document and image
// work (docs/configuration.md "Document and image work"): for each burst, the server's peak RSS
// and the peak of the server with its child processes (the qpdf runs), sampled from /proc every
// 50 ms, and the server's RSS once the burst is over and the node has been idle for
// BENCH_SETTLE_S seconds (no forced GC: what an operator would see).
//
//   bombs   BENCH_BOMBS (6) print creates at once, each a PDF whose content stream inflates to
//           1 GiB (a compression bomb: qpdf runs into its 512 MiB limit);
//   pixels  one direct-transfer batch to a recognition address with three 16000 × 16000 JPEGs
//           (about 1.5 MB each), and the recognition that follows;
//   inline  BENCH_INLINE (3) print creates at once, each a body of about 64 MiB (a 47 MiB file
//           inline in Base64; not a readable PDF, so it is refused after the check).
//
// The last columns are the server's RSS after a forced garbage collection (the server runs with
// --expose-gc for it): what is still held, not merely not yet collected; and of it V8's heap
// (heapTotal) and the memory outside it that V8 knows of (external: Buffers). What RSS has
// beyond those two is code, native libraries and whatever the C allocator keeps (try
// MALLOC_ARENA_MAX=2 on the bench: the server inherits the environment).
//
// Each burst runs on a fresh server (its own process, SQLite, aedes, local files) with one
// bound simulated box (printer and scanner). Run it on a checkout before the bound to get the
// "before" figures (bench/README.md gives both).
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import sharp from 'sharp';
import { contentBomb } from '../packages/pdf-tools/src/testing/hostile-pdf.ts';
import { pagesManifest, sendDirect, type DirectPage } from '../packages/e2e/src/direct-sender.ts';
import { forkChild, header, LIMITS_OUT_OF_REACH, sleep, tempDir, type Child } from './support/child.ts';

const BOMBS = Number(process.env.BENCH_BOMBS ?? 6);
const INLINE = Number(process.env.BENCH_INLINE ?? 3);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 20);
/** BENCH_ONLY=bombs,inline: those bursts only. */
const ONLY = new Set((process.env.BENCH_ONLY ?? 'bombs,pixels,inline').split(','));
const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;

/** RSS of a process (bytes), 0 once it is gone. */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
/** The process's descendants (children, their children …), from /proc/<pid>/stat's ppid. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent)
      if (pp === p) {
        out.push(c);
        walk(c);
      }
  };
  walk(root);
  return out;
}

class Sampler {
  server = 0;
  tree = 0;
  children = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly pid: number;
  constructor(pid: number) {
    this.pid = pid;
  }
  start(): void {
    this.timer = setInterval(() => {
      const s = rssOf(this.pid);
      const kids = descendants(this.pid);
      const t = s + kids.reduce((a, p) => a + rssOf(p), 0);
      this.server = Math.max(this.server, s);
      this.tree = Math.max(this.tree, t);
      this.children = Math.max(this.children, kids.length);
    }, 50);
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

interface Rig {
  server: Child;
  boxes: Child;
  pool: Pool;
  key: string;
  box: string;
  post(path: string, body: unknown): Promise<{ code: number; msg: string; data: Record<string, unknown> }>;
}

async function withRig(fn: (r: Rig) => Promise<string>): Promise<{
  before: number;
  peakServer: number;
  peakTree: number;
  processes: number;
  settled: number;
  gced: number;
  heap: number;
  external: number;
  what: string;
}> {
  const server = await forkChild('server-process.ts', ['boxhub'], {
    // Only for the last column (a forced collection after the settled figure): the server
    // itself never calls gc().
    execArgv: ['--expose-gc'],
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: tempDir(),
      LOG_LEVEL: 'warn',
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
      ...LIMITS_OUT_OF_REACH,
    },
  });
  const boxes = await forkChild('boxes-process.ts', []);
  const pool = new Pool(server.ready.url, { connections: 16, bodyTimeout: 120_000, headersTimeout: 120_000 });
  try {
    const app = await server.call<{ id: string; api_key: string }>('createApp', { name: 'burst', ess: true });
    const [device] = await server.call<{ uuid: string; secret: string }[]>('register', { n: 1 });
    const post = async (path: string, body: unknown) => {
      const r = await pool.request({
        method: 'POST',
        path,
        headers: { authorization: `Bearer ${app.api_key}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return JSON.parse(await r.body.text()) as { code: number; msg: string; data: Record<string, unknown> };
    };
    await post('/api/client/bind', { uuid: device!.uuid, name: 'bench' });
    await boxes.call(
      'connect',
      { url: server.ready.mqttUrl, boxes: [device], printer: 'sim:?side_ms=3600000', scanner: 'sim:?ppm=1' },
      60_000,
    );
    for (let i = 0; ; i++) {
      const res = await pool.request({
        method: 'GET',
        path: `/api/print/capability?client_uuid=${device!.uuid}`,
        headers: { authorization: `Bearer ${app.api_key}` },
      });
      const c = JSON.parse(await res.body.text()) as { code: number; msg: string };
      if (c.code === 0) break;
      if (i > 100) throw new Error(`the box's printer never became ready: ${c.code} ${c.msg}`);
      await sleep(100);
    }
    await sleep(2000);
    const before = rssOf(server.pid);
    const s = new Sampler(server.pid);
    s.start();
    const what = await fn({ server, boxes, pool, key: app.api_key, box: device!.uuid, post });
    await sleep(SETTLE_S * 1000);
    s.stop();
    const settled = rssOf(server.pid);
    const m = await server.call<{ rss: number; heapTotal: number; external: number }>('mem');
    return {
      before,
      peakServer: s.server,
      peakTree: s.tree,
      processes: s.children,
      settled,
      gced: m.rss,
      heap: m.heapTotal,
      external: m.external,
      what,
    };
  } finally {
    await pool.close();
    await boxes.stop();
    await server.stop();
  }
}

const codes = (xs: Array<{ code: number }>) => {
  const n = new Map<number, number>();
  for (const x of xs) n.set(x.code, (n.get(x.code) ?? 0) + 1);
  return [...n].map(([c, k]) => `${k}× ${c}`).join(', ');
};

async function main(): Promise<void> {
  header('server memory under bursts of document and image work', [
    `bombs: ${BOMBS} compression-bomb PDF print creates at once; pixels: one direct batch of three 16000 × 16000 JPEGs; inline: ${INLINE} print creates of about 64 MiB at once`,
    `RSS from /proc every 50 ms: the server alone and with its child processes (qpdf); settled = the server's RSS ${SETTLE_S} s after the burst (no forced GC)`,
  ]);
  const rows: Array<[string, Awaited<ReturnType<typeof withRig>>]> = [];

  const bomb = contentBomb(1024 ** 3).toString('base64');
  if (ONLY.has('bombs'))
    rows.push([
      'bombs',
      await withRig(async (r) => {
        const t0 = performance.now();
        const a = await Promise.all(
          Array.from({ length: BOMBS }, () =>
            r.post('/api/print/create', { client_uuid: r.box, file_type: 'pdf', file_content: bomb }),
          ),
        );
        return `${codes(a)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
      }),
    ]);

  const huge = await sharp({
    create: { width: 16000, height: 16000, channels: 3, background: { r: 250, g: 250, b: 245 } },
  })
    .jpeg({ quality: 90 })
    .toBuffer();
  if (ONLY.has('pixels'))
    rows.push([
      'pixels',
      await withRig(async (r) => {
        await r.boxes.call('load', { sheets: 1 });
        await sleep(500);
        const task = (await r.post('/api/application/ess/create', { callback_url: 'http://127.0.0.1:9/cb' })).data as {
          direct_addr: string;
        };
        let scan: { uuid: string; direct_secret: string } | undefined;
        for (let i = 0; i < 60 && !scan; i++) {
          const e = await r.post('/api/scan/create', {
            client_uuid: r.box,
            options: { direct_mode: 1, direct_addr: task.direct_addr, continuous: true, continuous_wait: 0 },
          });
          if (e.code === 0) scan = e.data as unknown as typeof scan;
          else await sleep(250);
        }
        if (!scan) throw new Error('scan create kept failing');
        const pages: DirectPage[] = [1, 2, 3].map((n) => ({
          jpeg: huge,
          source: { item_id: n, paper_number: n, page_number: n, front: true } as DirectPage['source'],
        }));
        const sent = await sendDirect(task.direct_addr, scan.direct_secret, pagesManifest(scan.uuid, 1, pages), pages);
        // Recognition runs after the answer: wait until this node is idle again.
        for (let i = 0; i < 240; i++) {
          await sleep(500);
          const w = await r.server
            .call<{ rows: number }>('pendingJobs', { kind: 'recognition.page' })
            .catch(() => ({ rows: -1 }));
          if (w.rows === 0) break;
        }
        return `${(huge.length / 1e6).toFixed(1)} MB each; HTTP ${sent.status} ${sent.text.trim().slice(0, 90)}`;
      }),
    ]);

  const junk = Buffer.alloc(47 * 2 ** 20, 0x41);
  junk.write('%PDF-1.4\n', 0);
  const inline = JSON.stringify({ client_uuid: '', file_type: 'pdf', file_content: junk.toString('base64') });
  if (ONLY.has('inline'))
    rows.push([
      'inline',
      await withRig(async (r) => {
        const body = inline.replace('"client_uuid":""', `"client_uuid":"${r.box}"`);
        const a = await Promise.all(Array.from({ length: INLINE }, () => r.post('/api/print/create', body)));
        return `${(body.length / 2 ** 20).toFixed(1)} MiB bodies: ${codes(a)}`;
      }),
    ]);

  console.log('');
  console.log(
    `  ${'burst'.padEnd(7)} ${'RSS before'.padStart(11)} ${'peak server'.padStart(12)} ${'peak +children'.padStart(15)} ${'processes'.padStart(9)} ${'settled'.padStart(9)} ${'forced GC'.padStart(10)} ${'V8 heap'.padStart(8)} ${'external'.padStart(9)}   answers`,
  );
  for (const [name, x] of rows) {
    console.log(
      `  ${name.padEnd(7)} ${mib(x.before).padStart(11)} ${mib(x.peakServer).padStart(12)} ${mib(x.peakTree).padStart(15)} ${String(x.processes).padStart(9)} ${mib(x.settled).padStart(9)} ${mib(x.gced).padStart(10)} ${mib(x.heap).padStart(8)} ${mib(x.external).padStart(9)}   ${x.what}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
