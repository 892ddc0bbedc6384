// Auto Multiple Choice (Debian `auto-multiple-choice`) next to boxhub in the recognizer bench:
// only when AMC is installed (it pulls LaTeX; CI does not install it). See README.md here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTemplate } from '../../../packages/recognizer/src/index.ts';
import { BENCH_CARD } from '../bench-card.ts';
import { runSet, type AmcSetResult } from './compare.ts';
import { BOXES_PER_ROW, buildProject, pagesAsOps } from './sheet.ts';

export type { AmcSetResult } from './compare.ts';

/** AMC's seeds: apart from boxhub's tuning (1 000 000...) and evaluation (9 000 000...) seeds. */
export const AMC_SEED_BASE = 5_000_000;

export interface AmcSetSpec {
  label: string;
  dpi: number;
  hard: boolean;
}
/** The bench's sets AMC is run on (labels as in recognizer.bench.ts). */
export const AMC_SETS: readonly AmcSetSpec[] = [
  { label: 'A clean 300 dpi', dpi: 300, hard: false },
  { label: 'A mixed 100 dpi', dpi: 100, hard: true },
  { label: 'A mixed 200 dpi', dpi: 200, hard: true },
  { label: 'A mixed 300 dpi', dpi: 300, hard: true },
];
export interface AmcOptions {
  /** copies (two pages each) per set; default 12 = 24 pages */ copies?: number;
}

export function amcPath(): string | null {
  const r = spawnSync('sh', ['-c', 'command -v auto-multiple-choice'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

export function amcAvailable(): boolean {
  return amcPath() !== null;
}

export function amcVersion(): string {
  const r = spawnSync(
    'dpkg-query',
    ['-W', '-f', '$' + '{Version}', 'auto-multiple-choice'] /* dpkg-query's own format, not a template */,
    { encoding: 'utf8' },
  );
  return r.status === 0 ? r.stdout.trim() : 'unknown version';
}

/**
 * Builds AMC sheets with the bench card's number of areas per page (rows of 15), fills and
 * scans them like the bench's cards, and reads them with AMC. One temporary directory, removed.
 */
export async function runAmcComparison(sets: readonly AmcSetSpec[], opts: AmcOptions = {}): Promise<AmcSetResult[]> {
  const copies = opts.copies ?? 12;
  const { layout } = await planTemplate(BENCH_CARD);
  const rowsPerPage = layout.sides.map((s) => Math.ceil(s.areas.length / BOXES_PER_ROW));
  const root = mkdtempSync(join(tmpdir(), 'boxhub-amc-'));
  try {
    const project = buildProject(join(root, 'project'), copies, rowsPerPage);
    const rasterDir = join(root, 'raster');
    mkdirSync(rasterDir);
    const ops = pagesAsOps(project.subjectPdf, rasterDir);
    const out: AmcSetResult[] = [];
    for (const [i, spec] of sets.entries()) {
      out.push(await runSet(project, ops, join(root, `set-${i}`), spec, copies, AMC_SEED_BASE + i * 1000));
    }
    return out;
  } catch (e) {
    // AMC is optional: a broken install or LaTeX run must not fail boxhub's bench.
    console.log(`\n# Auto Multiple Choice comparison failed: ${e instanceof Error ? e.message : String(e)}`);
    return [];
  } finally {
    if (process.env.BOXHUB_AMC_KEEP === '1') console.log(`AMC work directory kept: ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

/** What the bench knows of boxhub's result for a set (its Tally fits). */
export interface BoxhubRow {
  pages: number;
  areas: number;
  correct: number;
  silent: number;
  uncertain: number;
  ms: number[];
}

const pct = (a: number, b: number) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(2)} %`);
const pad = (s: string, n: number) => s.padStart(n);

export function printSideBySide(boxhub: ReadonlyMap<string, BoxhubRow>, amc: readonly AmcSetResult[]): void {
  if (amc.length === 0) return;
  console.log(
    `\n# boxhub next to Auto Multiple Choice ${amcVersion()} (AMC on its own sheets, same marks and scan effects; see bench/recognizer/amc/README.md)`,
  );
  console.log(
    `  ${'set'.padEnd(14)}| ${'boxhub: pages'.padStart(13)} ${pad('right', 9)} ${pad('silent', 6)} ${pad('uncertain', 9)} ${pad('ms/page', 7)} | ${'AMC: pages'.padStart(10)} ${pad('right', 9)} ${pad('wrong', 5)} ${pad('unread', 6)} ${pad('ms/page', 7)}`,
  );
  for (const a of amc) {
    const b = boxhub.get(a.label);
    const bs = b
      ? `${pad(String(b.pages), 13)} ${pad(pct(b.correct, b.areas), 9)} ${pad(String(b.silent), 6)} ${pad(String(b.uncertain), 9)} ${pad((b.ms.reduce((x, y) => x + y, 0) / Math.max(1, b.ms.length)).toFixed(0), 7)}`
      : pad('(not run)', 47);
    console.log(
      `  ${a.label.padEnd(14)}| ${bs} | ${pad(String(a.pages), 10)} ${pad(pct(a.right, a.boxes), 9)} ${pad(String(a.wrong), 5)} ${pad(String(a.unread), 6)} ${pad(a.msPerPage.toFixed(0), 7)}`,
    );
  }
  for (const a of amc) {
    const kinds = [...a.wrongKinds.entries()]
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ×${v}`)
      .join(', ');
    const pages =
      a.pagesUnread || a.pagesMisidentified
        ? `; pages not read ${a.pagesUnread}, misidentified ${a.pagesMisidentified}`
        : '';
    console.log(`  AMC ${a.label}: ${a.boxes} boxes; wrong: ${kinds || '-'}${pages}`);
  }
  console.log(
    '  boxhub: uncertain areas are reported to the user, silent errors are not; AMC has no uncertain class, every wrong box is silent.',
  );
  console.log(
    '  AMC unread = boxes on pages AMC could not read (reported by AMC as failed pages, not silent). ms/page: boxhub in a worker; AMC analyse --n-procs 1 wall time.',
  );
}
