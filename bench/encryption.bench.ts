// End-to-end encryption on the box (issue 10, docs/encryption.md): box CPU with and without
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
// Knobs: BENCH_ENC_SHEETS (100), BENCH_ENC_ROUNDS (4), BENCH_ENC_PRINTS (10 per round),
//        BENCH_ENC_PRINT_PAGES (10), BENCH_ENC_PRINT_MB (4).
import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Pool } from 'undici';
import { SimScanner } from '../packages/agent/src/drivers/sim/scanner.ts';
import { e2eInfo, generateKeyPair, sealBuffer } from '../packages/protocol/src/e2e.ts';
import { forkChild, header, LIMITS_OUT_OF_REACH, median, sleep, tempDir, verdict, type Child } from './support/child.ts';
import { scannedPdf } from './print/pdf.ts';

const SHEETS = Number(process.env.BENCH_ENC_SHEETS ?? 100);
const ROUNDS = Number(process.env.BENCH_ENC_ROUNDS ?? 4);
const PRINTS = Number(process.env.BENCH_ENC_PRINTS ?? 10);
const PRINT_PAGES = Number(process.env.BENCH_ENC_PRINT_PAGES ?? 10);
const PRINT_MB = Number(process.env.BENCH_ENC_PRINT_MB ?? 4);
const TARGET = 1.10;
const MB = 1024 * 1024;

interface Run { sides: number; items: number; bytes: number; cpuMs: number }

async function drawPages(): Promise<{ front: string; back: string }> {
  const dir = tempDir();
  const sim = new SimScanner('sim:');
  sim.load([{ front: { text: { seed: 0 } }, back: { text: { seed: 1 } } }]);
  const files: string[] = [];
  for await (const p of sim.scan({ duplex: true, resolution: 200, color: 'color', jpegQuality: 90 }, new AbortController().signal)) {
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
  // ratio) and the spec's defaults (blank_page_skip on; both sides printed, so none dropped).
  for (const blankSkip of [false, true]) {
    const args = { dpi: 200, sheets: SHEETS, quality: 90, receiver: receiver.ready.url, front: pages.front, back: pages.back, blankSkip };
    // The control, on the cheapest pipeline: the same items written through the sealer's path
    // with a plain copy where the cipher would be. Its ratio is the floor of any encryption done
    // in JavaScript's memory model (a cipher writes new bytes; node:crypto cannot write them
    // into a buffer we reuse), so the cipher's own cost is encrypted against copy.
    const control = !blankSkip;
    // A warm-up of each, then alternating rounds.
    await box.call<Run>('run', { ...args, sheets: 5 }, 600_000);
    await box.call<Run>('run', { ...args, sheets: 5, encryptTo: publicKey }, 600_000);
    if (control) await box.call<Run>('run', { ...args, sheets: 5, copyItems: true }, 600_000);
    const plain: Run[] = [], enc: Run[] = [], copy: Run[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      plain.push(await box.call<Run>('run', args, 600_000));
      enc.push(await box.call<Run>('run', { ...args, encryptTo: publicKey }, 600_000));
      if (control) copy.push(await box.call<Run>('run', { ...args, copyItems: true }, 600_000));
    }
    const p = median(plain.map(per)), e = median(enc.map(per));
    const f = plain[0]!;
    console.log(`\n## scan, ${blankSkip ? 'spec defaults (blank_page_skip on, no side blank)' : 'pass-through, no blank detection (worst case)'}: 200 dpi colour duplex, quality 90, ${f.sides} pages in ${f.items} item(s), ${(f.bytes / f.sides / 1024).toFixed(0)} KB a page`);
    console.log(`  box CPU per page, plain:     ${plain.map(per).map((x) => x.toFixed(2)).join(' ')} ms → median ${p.toFixed(2)} ms (${median(plain.map(perMb)).toFixed(2)} ms per MB)`);
    console.log(`  box CPU per page, encrypted: ${enc.map(per).map((x) => x.toFixed(2)).join(' ')} ms → median ${e.toFixed(2)} ms (${median(enc.map(perMb)).toFixed(2)} ms per MB)`);
    if (control) console.log(`  box CPU per page, copied:    ${copy.map(per).map((x) => x.toFixed(2)).join(' ')} ms → median ${median(copy.map(per)).toFixed(2)} ms (the control: no cipher)`);
    console.log(`  encryption adds ${(e - p).toFixed(2)} ms per page, ${(median(enc.map(perMb)) - median(plain.map(perMb))).toFixed(2)} ms per MB`);
    console.log(`  ratio encrypted/plain ${(e / p).toFixed(3)} (per round: ${plain.map((x, i) => (per(enc[i]!) / per(x)).toFixed(3)).join(' ')}); target ≤ ${TARGET} → ${verdict(e / p <= TARGET)}`);
    if (control) {
      const c = median(copy.map(per));
      console.log(`  control: copied/plain ${(c / p).toFixed(3)} (per round: ${plain.map((x, i) => (per(copy[i]!) / per(x)).toFixed(3)).join(' ')}), encrypted/copied ${(e / c).toFixed(3)}: the cipher's own share`);
    }
  }
  await box.stop();
  await receiver.stop();
}

async function printPart(children: Child[]): Promise<void> {
  const server = await forkChild('server-process.ts', ['boxhub'], {
    env: { PORT: '0', HOST: '127.0.0.1', BOXHUB_MQTT_PORT: '0', BOXHUB_DATA_DIR: tempDir(), LOG_LEVEL: 'warn', BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', ...LIMITS_OUT_OF_REACH },
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
      return { client_uuid: dev!.uuid, file_type: 'pdf', file_content: file.toString('base64'), file_check_sum: createHash('md5').update(file).digest('hex'), options: { encrypt: true, cipher } };
    };
    const printOne = async (body: Record<string, unknown>) => {
      for (let i = 0; ; i++) {
        const r = await post<{ uuid: string }>('/api/print/create', body);
        if (r.code === 0) {
          for (;;) {
            const info = await post<{ finished: boolean; error_code: number; pages?: number }>('/api/print/info', { client_uuid: dev!.uuid, print_uuid: r.data.uuid });
            if (info.data.finished) {
              if (info.data.error_code !== 0) throw new Error(`print ${r.data.uuid} ended with ${info.data.error_code}`);
              return;
            }
            await sleep(20);
          }
        }
        if (i > 100) throw new Error(`print create: ${r.code} ${r.msg}`);
        await sleep(100); // the capability arrives just after the box connects
      }
    };
    const round = async (bodies: Record<string, unknown>[]) => {
      const c0 = await boxes.call<{ ownMs: number; childrenMs: number }>('cpuWithChildren');
      for (const b of bodies) await printOne(b);
      const c1 = await boxes.call<{ ownMs: number; childrenMs: number }>('cpuWithChildren');
      return { own: (c1.ownMs - c0.ownMs) / bodies.length, children: (c1.childrenMs - c0.childrenMs) / bodies.length };
    };
    await round([plainBody, await encBody()]);
    const plain: { own: number; children: number }[] = [], enc: { own: number; children: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      plain.push(await round(Array.from({ length: PRINTS }, () => plainBody)));
      const bodies = [];
      for (let i = 0; i < PRINTS; i++) bodies.push(await encBody());
      enc.push(await round(bodies));
    }
    const tot = (x: { own: number; children: number }) => x.own + x.children;
    const p = median(plain.map(tot)), e = median(enc.map(tot));
    console.log(`\n## print: ${PRINT_PAGES}-page PDF of ${(doc.length / MB).toFixed(1)} MB, print.start → finished on the simulated printer (0 ms a side), ${PRINTS} files a round`);
    console.log(`  box CPU per file, plain:     ${plain.map((x) => `${tot(x).toFixed(1)} (${x.children.toFixed(0)} in tools)`).join(' ')} ms → median ${p.toFixed(1)} ms`);
    console.log(`  box CPU per file, encrypted: ${enc.map((x) => `${tot(x).toFixed(1)} (${x.children.toFixed(0)} in tools)`).join(' ')} ms → median ${e.toFixed(1)} ms`);
    console.log(`  ratio encrypted/plain ${(e / p).toFixed(3)}; target ≤ ${TARGET} → ${verdict(e / p <= TARGET)}`);
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
