// The box side of the scan benches, in its own process (forked with an IPC channel, protocol of
// bench/support/child.ts), so its CPU time and peak RSS are the box's alone: the simulated
// scanner → assembleItems (blank-page skip, JPEG pass-through, PDF items on disk) → each item
// PUT (putFile) to the loopback receiver as soon as it is complete (while scanning goes on), its MD5
// checked against what the receiver got, then deleted — what the agent's job runner does.
//
// The scanner's pages are JPEG files the bench drew beforehand (the sim delivers a given image
// of the right resolution and colour byte for byte, as an eSCL scanner hands over its JPEG):
// this process does the box's work only, not the drawing.
//
// Ops: 'run' {dpi, sheets, front, back, blankSkip, quality, receiver, encryptTo?} → figures of one batch
//      (encryptTo: an X25519 public key, hex: items encrypted as the agent does, bench/encryption;
//      copyItems: every item's bytes copied through the same sealer interface with no cipher, the
//      floor of any transform that writes new bytes, bench/encryption's control);
//      'blank' {dpi, front, back, pages} → CPU of detectBlank alone per page; 'close'.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimScanner, type SimSide } from '../../packages/agent/src/drivers/sim/scanner.ts';
import type { ScannedPage, ScanRequest } from '../../packages/agent/src/drivers/types.ts';
import { assembleItems, type AssembledItem } from '../../packages/agent/src/scan/assemble.ts';
import { detectBlank } from '../../packages/agent/src/media/blank.ts';
import { putFile } from '../../packages/agent/src/transfer/put-file.ts';
import { e2eInfo, FileSealer, newContentKey, wrapContentKey } from '../../packages/protocol/src/e2e.ts';

if (!process.send) throw new Error('scan-process.ts must be forked with an IPC channel');
const send = (m: unknown) => process.send!(m);

interface RunArgs {
  dpi: number;
  sheets: number;
  front: string;
  back: string;
  blankSkip: boolean;
  quality: number;
  receiver: string;
  encryptTo?: string;
  copyItems?: boolean;
}

/** Each item encrypted as it is written, as the agent's scan job does (docs/encryption.md). */
const sealer = (publicKey: string) => async (item: number) => {
  const key = newContentKey();
  return {
    sealer: new FileSealer(key),
    cipher: await wrapContentKey(publicKey, e2eInfo.scan('bench-scan', item), key),
  };
};

/** The control of bench/encryption: the sealer's path through the PDF writer (the same slices,
 *  one writev a page) with a copy where the cipher would be. Not a cipher: bench use only. */
const copier = async () => ({
  sealer: { header: Buffer.alloc(12), update: (c: Buffer) => Buffer.from(c), final: () => Buffer.alloc(16) },
  cipher: '',
});

async function put(url: string, item: AssembledItem): Promise<{ md5: string; size: number }> {
  const r = await putFile(url, item.path, { headers: { 'content-type': 'application/pdf' } });
  if (r.status !== 200) throw new Error(`PUT → ${r.status}`);
  return JSON.parse(r.body) as { md5: string; size: number };
}

const sheet = (dpi: number, front: string, back: string): { front: SimSide; back: SimSide } => ({
  front: { image: front, dpi },
  back: { image: back, dpi },
});

async function run(a: RunArgs) {
  const dir = await mkdtemp(join(tmpdir(), 'boxhub-bench-scan-'));
  const sim = new SimScanner('sim:');
  const req: ScanRequest = { duplex: true, resolution: a.dpi, color: 'color', jpegQuality: a.quality };
  try {
    const rssBefore = process.memoryUsage().rss;
    sim.load(Array.from({ length: a.sheets }, () => sheet(a.dpi, a.front, a.back)));
    let kept = 0,
      sides = 0,
      passed = 0,
      uploadMs = 0,
      bytes = 0,
      items = 0;
    let uploads = Promise.resolve();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for await (const item of assembleItems(sim.scan(req, new AbortController().signal), {
      dir,
      request: req,
      blankPageSkip: a.blankSkip,
      ...(a.encryptTo ? { seal: sealer(a.encryptTo) } : a.copyItems ? { seal: copier } : {}),
      onPage: (e) => {
        sides++;
        if (e.kept) kept++;
        if (e.passedThrough) passed++;
      },
    })) {
      items++;
      // One upload at a time, while the scan goes on.
      uploads = uploads.then(async () => {
        const u0 = performance.now();
        const got = await put(`${a.receiver}/${item.item}.pdf`, item);
        uploadMs += performance.now() - u0;
        if (got.md5 !== item.md5 || got.size !== item.size || (await stat(item.path)).size !== item.size)
          throw new Error(
            `item ${item.item}: uploaded ${got.size} bytes md5 ${got.md5}, wrote ${item.size} md5 ${item.md5}`,
          );
        bytes += item.size;
        await rm(item.path);
      });
    }
    await uploads;
    const wallMs = performance.now() - t0;
    const c = process.cpuUsage(cpu0);
    return {
      sides,
      kept,
      passed,
      items,
      bytes,
      cpuMs: (c.user + c.system) / 1000,
      wallMs,
      uploadMs,
      rssBefore,
      peakRss: process.resourceUsage().maxRSS * 1024,
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function blank(a: { dpi: number; pages: number; front: string; back: string }) {
  const sim = new SimScanner('sim:');
  const req: ScanRequest = { duplex: true, resolution: a.dpi, color: 'color', jpegQuality: 90 };
  sim.load(Array.from({ length: Math.ceil(a.pages / 2) }, () => sheet(a.dpi, a.front, a.back)));
  const pages: ScannedPage[] = [];
  for await (const p of sim.scan(req, new AbortController().signal)) pages.push(p);
  await detectBlank(pages[0]!);
  let blanks = 0;
  const cpu0 = process.cpuUsage();
  for (const p of pages) if ((await detectBlank(p)).blank) blanks++;
  const c = process.cpuUsage(cpu0);
  await sim.close();
  return { pages: pages.length, blanks, cpuMs: (c.user + c.system) / 1000 };
}

send({ ready: true, url: '' });
process.on('message', (m: { id: number; op: string } & Record<string, unknown>) => {
  const done = (p: Promise<unknown>) =>
    p.then(
      (result) => send({ id: m.id, result }),
      (e: unknown) => send({ id: m.id, error: (e as Error).stack ?? String(e) }),
    );
  if (m.op === 'run') void done(run(m as unknown as RunArgs));
  else if (m.op === 'blank')
    void done(blank(m as unknown as { dpi: number; pages: number; front: string; back: string }));
  else if (m.op === 'close') {
    send({ id: m.id, result: true });
    setImmediate(() => process.exit(0));
  }
});
