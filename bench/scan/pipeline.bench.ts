// Box CPU per scanned page: from the scanner's page to an item uploaded by HTTP PUT, at 200 dpi
// colour duplex (quality 90, the API's default; the scanner's JPEG passes through), target
// ≤ 15 ms per page on this machine; the cost of blank-page detection reported apart.
// Then box memory: peak RSS of the box-side process scanning a 200-page 600 dpi colour duplex
// stack (pages streamed to disk and uploaded, never the stack in memory), target ≤ 150 MB.
//
// The box side runs in its own process (scan-process.ts), the receiver in another
// (receiver-process.ts): CPU and RSS are the box's alone. The scanner's pages (text, and blank
// with show-through) are drawn here beforehand by the simulated scanner and handed to the box
// process as JPEG files its sim delivers byte for byte, as an eSCL scanner hands over its JPEG.
// Knobs: BENCH_SCAN_SHEETS (100 at 200 dpi), BENCH_SCAN_ROUNDS (3), BENCH_SCAN_BIG_SHEETS (100).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimScanner } from '../../packages/agent/src/drivers/sim/scanner.ts';
import { forkChild, header, median, tempDir, verdict, type Child } from '../support/child.ts';

/** The scanner's pages at `dpi`, colour, quality 90: a text side, another, a blank side. */
async function drawPages(dpi: number): Promise<{ text: string; text2: string; blank: string }> {
  const dir = tempDir();
  const sim = new SimScanner('sim:');
  sim.load([
    { front: { text: { seed: 0 } }, back: { text: { seed: 1 } } },
    { front: { blank: { showThrough: true } } },
  ]);
  const files: string[] = [];
  for await (const p of sim.scan(
    { duplex: true, resolution: dpi, color: 'color', jpegQuality: 90 },
    new AbortController().signal,
  )) {
    const f = join(dir, `p${dpi}-${files.length}.jpg`);
    writeFileSync(f, p.image.data);
    files.push(f);
  }
  await sim.close();
  return { text: files[0]!, text2: files[1]!, blank: files[2]! };
}

interface Run {
  sides: number;
  kept: number;
  passed: number;
  items: number;
  bytes: number;
  cpuMs: number;
  wallMs: number;
  uploadMs: number;
  rssBefore: number;
  peakRss: number;
}

const sheets = Number(process.env.BENCH_SCAN_SHEETS ?? 100);
const rounds = Number(process.env.BENCH_SCAN_ROUNDS ?? 3);
const bigSheets = Number(process.env.BENCH_SCAN_BIG_SHEETS ?? 100);
const MB = 1024 * 1024;

header('scan pipeline on the box: CPU per page (200 dpi colour) and peak RSS (600 dpi colour stack)', [
  `sim scanner → assembleItems (JPEG pass-through, PDF items written page by page) → PUT to a loopback receiver (separate process)`,
  `200 dpi: ${sheets} sheets duplex × ${rounds} rounds; 600 dpi: ${bigSheets} sheets duplex, one fresh process`,
]);

const receiver = await forkChild('../scan/receiver-process.ts', []);
const children: Child[] = [receiver];
try {
  // --- CPU per page at 200 dpi -----------------------------------------------------------------
  const box = await forkChild('../scan/scan-process.ts', []);
  children.push(box);
  const pages = await drawPages(200);
  const base = { dpi: 200, sheets, quality: 90, receiver: receiver.ready.url, front: pages.text };
  const plain: Run[] = [],
    skip: Run[] = [];
  for (let r = 0; r < rounds; r++) {
    // Text on both sides, no blank detection: every page goes through JPEG → PDF → upload.
    plain.push(await box.call<Run>('run', { ...base, back: pages.text2, blankSkip: false }, 600_000));
    // Single-sided paper scanned duplex with blank_page_skip (the API's default): every page is
    // judged, half are dropped.
    skip.push(await box.call<Run>('run', { ...base, back: pages.blank, blankSkip: true }, 600_000));
  }
  const blank = await box.call<{ pages: number; blanks: number; cpuMs: number }>(
    'blank',
    { dpi: 200, pages: 40, front: pages.text, back: pages.blank },
    600_000,
  );
  await box.stop();

  const perPage = (r: Run) => r.cpuMs / r.sides;
  const p = plain.map(perPage),
    s = skip.map(perPage);
  const first = plain[0]!;
  console.log(
    `\n## 200 dpi colour duplex, quality 90: ${first.sides} pages in ${first.items} item(s) of ${(first.bytes / first.items / MB).toFixed(1)} MB, ${first.passed}/${first.kept} passed through`,
  );
  console.log(
    `  runs, box CPU per page (no blank detection): ${p.map((x) => x.toFixed(2)).join(' ')} ms → median ${median(p).toFixed(2)} ms`,
  );
  console.log(
    `  wall per page ${(first.wallMs / first.sides).toFixed(2)} ms; upload ${(first.bytes / MB / (first.uploadMs / 1000)).toFixed(0)} MB/s on loopback`,
  );
  console.log(
    `  blank-page detection alone: ${(blank.cpuMs / blank.pages).toFixed(2)} ms per page (${blank.pages} pages, ${blank.blanks} blank)`,
  );
  console.log(
    `  with blank_page_skip on single-sided paper (half the sides dropped), per side scanned: ${s.map((x) => x.toFixed(2)).join(' ')} ms → median ${median(s).toFixed(2)} ms (${skip[0]!.kept}/${skip[0]!.sides} kept)`,
  );
  const ok1 = median(p) <= 15;
  console.log(`  target: box CPU per page ≤ 15 ms with pass-through JPEG → ${median(p).toFixed(2)} ms ${verdict(ok1)}`);
  console.log(
    `  (a 120 images-per-minute duplex ADF gives a page every 500 ms: ${(median(p) / 5).toFixed(1)}% of one core, ${(median(s) / 5).toFixed(1)}% with blank detection)`,
  );

  // --- peak RSS at 600 dpi --------------------------------------------------------------------
  const big600 = await drawPages(600);
  const big = async (env: Record<string, string>) => {
    const child = await forkChild('../scan/scan-process.ts', [], { env });
    children.push(child);
    const r = await child.call<Run>(
      'run',
      {
        dpi: 600,
        sheets: bigSheets,
        quality: 90,
        receiver: receiver.ready.url,
        front: big600.text,
        back: big600.text2,
        blankSkip: true,
      },
      1_800_000,
    );
    await child.stop();
    return r;
  };
  const m = await big({});
  console.log(
    `\n## 600 dpi colour duplex, quality 90, blank_page_skip on: ${m.sides} pages, ${m.items} items, ${(m.bytes / MB).toFixed(0)} MB uploaded`,
  );
  console.log(
    `  page JPEGs ${(m.bytes / m.kept / MB).toFixed(1)} MB on average; RSS before the stack (node, tsx; sharp loads at the first page): ${(m.rssBefore / MB).toFixed(0)} MB`,
  );
  console.log(`  box CPU per page ${(m.cpuMs / m.sides).toFixed(1)} ms, wall ${(m.wallMs / m.sides).toFixed(1)} ms`);
  // glibc raises its mmap threshold after the first large free, so later page buffers come from
  // the heap and their memory is kept after V8 frees them; a fixed threshold returns it at once.
  const tuned = await big({ MALLOC_MMAP_THRESHOLD_: '131072' });
  const ok2 = m.peakRss <= 150 * MB;
  console.log(`  target: peak RSS ≤ 150 MB → ${(m.peakRss / MB).toFixed(0)} MB ${verdict(ok2)}`);
  console.log(
    `  with MALLOC_MMAP_THRESHOLD_=131072 in the agent's environment: ${(tuned.peakRss / MB).toFixed(0)} MB ${verdict(tuned.peakRss <= 150 * MB)}`,
  );
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
}
