// Blob stores side by side (docs/storage.md): the CPU cost of one signed URL (local HMAC vs S3
// SigV4 through aws4fetch), and upload and download throughput through the signed URLs: the
// real server's /blobs routes (local files) against s3rver on loopback (S3). No target: the
// figures are for the docs. s3rver is a test server written for correctness, not speed, so its
// figure is a floor for "an S3 server on this machine", not a prediction for a real one.
//
// Three processes: the boxhub server (bench/support/server-process.ts), s3rver
// (packages/server/src/testing/s3rver-process.ts), and this one, which signs and transfers like a
// box (undici request, Content-Length, the grant's headers) with BENCH_CONCURRENCY transfers in
// flight. Env: BENCH_ITEMS (40), BENCH_ITEM_MB (2), BENCH_CONCURRENCY (4), BENCH_SIGN (5000).
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { systemClock } from '@boxhub/server/clock.ts';
import type { BlobStore } from '@boxhub/server/storage/blob-store.ts';
import { LocalBlobStore } from '@boxhub/server/storage/local-store.ts';
import { S3BlobStore } from '@boxhub/server/storage/s3-store.ts';
import { startS3 } from '@boxhub/server/testing/s3rver.ts';
import { forkChild, header, median, tempDir } from './support/child.ts';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 40);
const ITEM_MB = Number(process.env.BENCH_ITEM_MB ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const SIGN = Number(process.env.BENCH_SIGN ?? 5000);
const PDF = 'application/pdf';

async function signing(store: BlobStore, what: 'download' | 'upload'): Promise<number> {
  const md5 = createHash('md5').update('x').digest('hex');
  const one = (i: number) =>
    what === 'download'
      ? store.downloadUrl(`scan/00000000-0000-4000-8000-000000000000/${i}.pdf`, {
          fileName: `scan-${i}.pdf`,
          contentType: PDF,
          expiresInMs: 3_600_000,
        })
      : store.uploadUrl(`scan/00000000-0000-4000-8000-000000000000/${i}.pdf`, {
          size: 1_000_000,
          md5,
          contentType: PDF,
          expiresInMs: 900_000,
        });
  for (let i = 0; i < 500; i++) await one(i);
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    for (let i = 0; i < SIGN; i++) await one(i);
    runs.push(((performance.now() - t0) * 1000) / SIGN);
  }
  return median(runs);
}

async function pool<T>(n: number, items: T[], fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function transfer(
  name: string,
  store: BlobStore,
  bodies: Buffer[],
  dispatcher: Agent,
): Promise<{ up: number; down: number }> {
  const prefix = `scan/${randomBytes(8).toString('hex')}`;
  const jobs = bodies.map((b, i) => ({
    key: `${prefix}/${i + 1}.pdf`,
    body: b,
    md5: createHash('md5').update(b).digest('hex'),
  }));
  const mb = bodies.reduce((s, b) => s + b.length, 0) / 2 ** 20;
  let t0 = performance.now();
  await pool(CONCURRENCY, jobs, async (j) => {
    const g = await store.uploadUrl(j.key, { size: j.body.length, md5: j.md5, contentType: PDF, expiresInMs: 900_000 });
    const res = await request(g.url, {
      method: 'PUT',
      headers: { ...g.headers, 'content-length': String(j.body.length) },
      body: j.body,
      dispatcher,
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`${name}: upload answered ${res.statusCode}`);
  });
  const up = mb / ((performance.now() - t0) / 1000);
  for (const j of jobs) {
    const s = await store.stat(j.key);
    if (s?.md5 !== j.md5) throw new Error(`${name}: ${j.key} stored as ${JSON.stringify(s)}`);
  }
  t0 = performance.now();
  await pool(CONCURRENCY, jobs, async (j) => {
    const res = await request(
      await store.downloadUrl(j.key, { fileName: 'x.pdf', contentType: PDF, expiresInMs: 60_000 }),
      { dispatcher },
    );
    let n = 0;
    for await (const c of res.body) n += (c as Buffer).length;
    if (res.statusCode !== 200 || n !== j.body.length)
      throw new Error(`${name}: download answered ${res.statusCode} with ${n} bytes`);
  });
  const down = mb / ((performance.now() - t0) / 1000);
  await store.deletePrefix(prefix);
  return { up, down };
}

async function main(): Promise<void> {
  header('blob stores: signing cost and transfer throughput, local files vs S3 (s3rver)', [
    `signing: ${SIGN} URLs × 3 runs each, median; transfers: ${ITEMS} items of ${ITEM_MB} MiB, ${CONCURRENCY} in flight, upload then download`,
  ]);
  const dataDir = tempDir();
  const secret = randomBytes(32);
  const server = await forkChild('server-process.ts', ['boxhub'], {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      BOXHUB_BLOB_SECRET: secret.toString('hex'),
    },
  });
  const s3 = await startS3();
  // The same key, root and URL as the server's own store: these URLs are the ones it would sign.
  const local = new LocalBlobStore({
    root: join(dataDir, 'blobs'),
    secret,
    baseUrl: () => server.ready.url,
    clock: systemClock,
  });
  const remote = new S3BlobStore({ target: s3.target, clock: systemClock, spoolDir: join(dataDir, 'spool') });
  const dispatcher = new Agent({ connections: CONCURRENCY * 2 });
  try {
    console.log('\nsigning, µs per URL (this process, no I/O)');
    for (const what of ['download', 'upload'] as const) {
      const l = await signing(local, what);
      const r = await signing(remote, what);
      console.log(
        `  ${what.padEnd(8)}  local HMAC ${l.toFixed(1).padStart(6)}   S3 SigV4 ${r.toFixed(1).padStart(6)}   ratio S3/local ${(r / l).toFixed(1)}`,
      );
    }
    const bodies = Array.from({ length: ITEMS }, () => randomBytes(ITEM_MB << 20));
    console.log(`\ntransfers through signed URLs, MiB/s (runs alternate; median of 3)`);
    const res: Record<string, { up: number[]; down: number[] }> = {
      local: { up: [], down: [] },
      s3rver: { up: [], down: [] },
    };
    for (let r = 0; r < 3; r++) {
      for (const [name, store] of [
        ['local', local],
        ['s3rver', remote],
      ] as const) {
        const t = await transfer(name, store, bodies, dispatcher);
        res[name]!.up.push(t.up);
        res[name]!.down.push(t.down);
      }
    }
    const l = res.local!,
      s = res.s3rver!;
    console.log(
      `  upload    local ${median(l.up).toFixed(0).padStart(5)}   s3rver ${median(s.up).toFixed(0).padStart(5)}   ratio s3rver/local ${(median(s.up) / median(l.up)).toFixed(2)}`,
    );
    console.log(
      `  download  local ${median(l.down).toFixed(0).padStart(5)}   s3rver ${median(s.down).toFixed(0).padStart(5)}   ratio s3rver/local ${(median(s.down) / median(l.down)).toFixed(2)}`,
    );
    console.log('\nno target (figures for docs/storage.md)');
  } finally {
    await dispatcher.close();
    await remote.close();
    await s3.close();
    await server.stop();
  }
}

await main();
