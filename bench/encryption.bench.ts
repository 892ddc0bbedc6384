// End-to-end encryption on the box (docs/encryption.md, "What it costs the box"): box CPU with and without
// encryption, measured side by side in alternating rounds, target: ratio ≤ 1.10.
//
// 1. Scan: box CPU per 200 dpi colour page (duplex, quality 90, pass-through JPEG, no blank
//    detection) from the scanner's page to the item uploaded by PUT, in the box-side process of
//    the scan benches (bench/scan/scan-process.ts), plain and with every item encrypted as it is
//    written (a fresh content key per item sealed with HPKE, AES-256-GCM streamed); also per MB.
//    On the pass-through pipeline also a control: the items copied through the same path with
//    no cipher, the floor of any encryption that writes new bytes.
// 2. Print: box CPU per print file, from print.start to the job finished on the simulated printer
//    (download, MD5, the box's page work, printing), on the real server and box link: plain, and
//    encrypted (the box also decrypts, checks the GCM tag and counts the pages the server could
//    not). The tools the box runs (qpdf) are counted with it.
// Rounds alternate the arms, in an order reversed every other round; each ratio is the median
// of the rounds' own ratios (paired), so a drift of the machine's speed cancels.
// Knobs: BENCH_ENC_SHEETS (100), BENCH_ENC_ROUNDS (6), BENCH_ENC_PRINTS (10 per round),
//        BENCH_ENC_PRINT_PAGES (10), BENCH_ENC_PRINT_MB (4).
import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Pool } from 'undici';
import { SimScanner } from '../packages/agent/src/drivers/sim/scanner.ts';
import { e2eInfo, generateKeyPair, sealBuffer } from '../packages/protocol/src/e2e.ts';
import {
  forkChild,
  header,
  LIMITS_OUT_OF_REACH,
  median,
  sleep,
  tempDir,
  verdict,
  type Child,
} from './support/child.ts';
import { scannedPdf } from './print/pdf.ts';

const SHEETS = Number(process.env.BENCH_ENC_SHEETS ?? 100);
const ROUNDS = Number(process.env.BENCH_ENC_ROUNDS ?? 6);
const PRINTS = Number(process.env.BENCH_ENC_PRINTS ?? 10);
const PRINT_PAGES = Number(process.env.BENCH_ENC_PRINT_PAGES ?? 10);
const PRINT_MB = Number(process.env.BENCH_ENC_PRINT_MB ?? 4);
const TARGET = 1.1;
const MB = 1024 * 1024;

interface Run {
  sides: number;
  items: number;
  bytes: number;
  cpuMs: number;
}

/**
 * Runs every arm once a round, in an order reversed every other round (A B C, C B A, …), so a
 * drift of the machine's speed falls on each arm alike; answers each arm's figures by round.
 * Ratios are then taken round by round (paired) and their median reported.
 */
async function alternate<K extends string, T>(
  rounds: number,
  arms: Record<K, () => Promise<T>>,
): Promise<Record<K, T[]>> {
  const names = Object.keys(arms) as K[];
  const out = Object.fromEntries(names.map((k) => [k, [] as T[]])) as Record<K, T[]>;
  for (let r = 0; r < rounds; r++) {
    for (const k of r % 2 ? [...names].reverse() : names) out[k][r] = await arms[k]();
  }
  return out;
}
const pairedRatio = (num: number[], den: number[]): { median: number; rounds: number[] } => {
  const rounds = num.map((x, i) => x / den[i]!);
  return { median: median(rounds), rounds };
};
const list = (xs: number[], digits = 2) => xs.map((x) => x.toFixed(digits)).join(' ');

async function drawPages(): Promise<{ front: string; back: string }> {
  const dir = tempDir();
  const sim = new SimScanner('sim:');
  sim.load([{ front: { text: { seed: 0 } }, back: { text: { seed: 1 } } }]);
  const files: string[] = [];
  for await (const p of sim.scan(
    { duplex: true, resolution: 200, color: 'color', jpegQuality: 90 },
    new AbortController().signal,
  )) {
    const f = join(dir, `p-${files.length}.jpg`);
    writeFileSync(f, p.image.data);
    files.push(f);
  }
  await sim.close();
  return { front: files[0]!, back: files[1]! };
}

async function scanPart(children: Child[]): Promise<void> {
  const receiver = await forkChild('../scan/receiver-process.ts', []);
  children.push(receiver);
  const box = await forkChild('../scan/scan-process.ts', []);
  children.push(box);
  const pages = await drawPages();
  const { publicKey } = await generateKeyPair();
  const per = (x: Run) => x.cpuMs / x.sides;
  const perMb = (x: Run) => x.cpuMs / (x.bytes / MB);
  // Two pipelines: the cheapest (JPEG passed through, no blank detection: encryption's worst
  // ratio) and the API's defaults (blank_page_skip on; both sides printed, so none dropped).
  for (const blankSkip of [false, true]) {
    const args = {
      dpi: 200,
      sheets: SHEETS,
      quality: 90,
      receiver: receiver.ready.url,
      front: pages.front,
      back: pages.back,
      blankSkip,
    };
    // The control, on the cheapest pipeline: the same items written through the sealer's path
    // with a plain copy where the cipher would be. Its ratio is the floor of any encryption done
    // in JavaScript's memory model (a cipher writes new bytes; node:crypto cannot write them
    // into a buffer we reuse), so the cipher's own cost is encrypted against copy.
    const control = !blankSkip;
    // A warm-up of each, then alternating rounds.
    const variants: Record<string, Record<string, unknown>> = {
      plain: {},
      encrypted: { encryptTo: publicKey },
      ...(control ? { copied: { copyItems: true } } : {}),
    };
    for (const v of Object.values(variants)) await box.call<Run>('run', { ...args, ...v, sheets: 5 }, 600_000);
    const runs = await alternate(
      ROUNDS,
      Object.fromEntries(
        Object.entries(variants).map(([k, v]) => [k, () => box.call<Run>('run', { ...args, ...v }, 600_000)]),
      ),
    );
    const perPage = Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, r.map(per)]));
    const mb = (k: string) => median(runs[k]!.map(perMb));
    const f = runs.plain![0]!;
    const ratio = pairedRatio(perPage.encrypted!, perPage.plain!);
    console.log(
      `\n## scan, ${blankSkip ? 'API defaults (blank_page_skip on, no side blank)' : 'pass-through, no blank detection (worst case)'}: 200 dpi colour duplex, quality 90, ${f.sides} pages in ${f.items} item(s), ${(f.bytes / f.sides / 1024).toFixed(0)} KB a page`,
    );
    for (const k of Object.keys(variants)) {
      console.log(
        `  box CPU per page, ${`${k}:`.padEnd(11)} ${list(perPage[k]!)} ms → median ${median(perPage[k]!).toFixed(2)} ms (${mb(k).toFixed(2)} ms per MB)${k === 'copied' ? ' (the control: no cipher)' : ''}`,
      );
    }
    console.log(
      `  encryption adds ${(median(perPage.encrypted!) - median(perPage.plain!)).toFixed(2)} ms per page, ${(mb('encrypted') - mb('plain')).toFixed(2)} ms per MB`,
    );
    console.log(
      `  ratio encrypted/plain ${ratio.median.toFixed(3)} (median of the rounds' ratios: ${list(ratio.rounds, 3)}); target ≤ ${TARGET} → ${verdict(ratio.median <= TARGET)}`,
    );
    if (control) {
      const c = pairedRatio(perPage.copied!, perPage.plain!),
        ec = pairedRatio(perPage.encrypted!, perPage.copied!);
      console.log(
        `  control: copied/plain ${c.median.toFixed(3)} (rounds: ${list(c.rounds, 3)}), encrypted/copied ${ec.median.toFixed(3)}: the cipher's own share`,
      );
    }
  }
  await box.stop();
  await receiver.stop();
}

async function printPart(children: Child[]): Promise<void> {
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
  });
  children.push(server);
  const boxes = await forkChild('boxes-process.ts', []);
  children.push(boxes);
  const pool = new Pool(server.ready.url, { connections: 4 });
  try {
    const app = await server.call<{ api_key: string }>('createApp', { name: 'enc-bench' });
    const [dev] = await server.call<{ uuid: string; secret: string }[]>('register', { n: 1 });
    const auth = { authorization: `Bearer ${app.api_key}`, 'content-type': 'application/json' };
    const post = async <T>(path: string, b: unknown): Promise<{ code: number; msg: string; data: T }> => {
      const r = await pool.request({ method: 'POST', path, headers: auth, body: JSON.stringify(b) });
      return JSON.parse(await r.body.text()) as { code: number; msg: string; data: T };
    };
    await post('/api/client/bind', { uuid: dev!.uuid, name: 'bench' });
    await boxes.call('connect', { url: server.ready.mqttUrl, boxes: [dev], printer: 'sim:?side_ms=0' }, 60_000);
    const boxKey = await boxes.call<string>('e2eKey');
    const doc = await scannedPdf(PRINT_PAGES, PRINT_MB * MB);
    const plainBody = { client_uuid: dev!.uuid, file_type: 'pdf', file_content: doc.toString('base64') };
    const encBody = async () => {
      const { file, cipher } = await sealBuffer(boxKey, e2eInfo.print(dev!.uuid), doc);
      return {
        client_uuid: dev!.uuid,
        file_type: 'pdf',
        file_content: file.toString('base64'),
        file_check_sum: createHash('md5').update(file).digest('hex'),
        options: { encrypt: true, cipher },
      };
    };
    const printOne = async (body: Record<string, unknown>) => {
      for (let i = 0; ; i++) {
        const r = await post<{ uuid: string }>('/api/print/create', body);
        if (r.code === 0) {
          for (;;) {
            const info = await post<{ finished: boolean; error_code: number; pages?: number }>('/api/print/info', {
              client_uuid: dev!.uuid,
              print_uuid: r.data.uuid,
            });
            if (info.data.finished) {
              if (info.data.error_code !== 0)
                throw new Error(`print ${r.data.uuid} ended with ${info.data.error_code}`);
              return;
            }
            await sleep(20);
          }
        }
        if (i > 100) throw new Error(`print create: ${r.code} ${r.msg}`);
        await sleep(100); // the capability arrives just after the box connects
      }
    };
    type Cpu = { own: number; children: number };
    const round = async (bodies: Record<string, unknown>[]): Promise<Cpu> => {
      const c0 = await boxes.call<{ ownMs: number; childrenMs: number }>('cpuWithChildren');
      for (const b of bodies) await printOne(b);
      const c1 = await boxes.call<{ ownMs: number; childrenMs: number }>('cpuWithChildren');
      return { own: (c1.ownMs - c0.ownMs) / bodies.length, children: (c1.childrenMs - c0.childrenMs) / bodies.length };
    };
    await round([plainBody, await encBody()]);
    const tot = (x: Cpu) => x.own + x.children;
    const cpu = await alternate(ROUNDS, {
      plain: () => round(Array.from({ length: PRINTS }, () => plainBody)),
      encrypted: async () => {
        const bodies = [];
        for (let i = 0; i < PRINTS; i++) bodies.push(await encBody());
        return round(bodies);
      },
    });
    const perFile = { plain: cpu.plain.map(tot), encrypted: cpu.encrypted.map(tot) };
    const ratio = pairedRatio(perFile.encrypted, perFile.plain);
    console.log(
      `\n## print: ${PRINT_PAGES}-page PDF of ${(doc.length / MB).toFixed(1)} MB, print.start → finished on the simulated printer (0 ms a side), ${PRINTS} files a round`,
    );
    for (const k of ['plain', 'encrypted'] as const) {
      console.log(
        `  box CPU per file, ${`${k}:`.padEnd(11)} ${cpu[k].map((x) => `${tot(x).toFixed(1)} (${x.children.toFixed(0)} in tools)`).join(' ')} ms → median ${median(perFile[k]).toFixed(1)} ms`,
      );
    }
    console.log(
      `  ratio encrypted/plain ${ratio.median.toFixed(3)} (median of the rounds' ratios: ${list(ratio.rounds, 3)}); target ≤ ${TARGET} → ${verdict(ratio.median <= TARGET)}`,
    );
  } finally {
    await pool.close();
  }
}

header('end-to-end encryption: box CPU with and without it, side by side', [
  `scan: ${SHEETS} sheets duplex at 200 dpi colour × ${ROUNDS} alternating rounds (scan-process.ts)`,
  `print: ${PRINTS} files × ${ROUNDS} alternating rounds on the real server and a simulated box (boxes-process.ts)`,
]);
const children: Child[] = [];
try {
  await scanPart(children);
  await printPart(children);
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
}
