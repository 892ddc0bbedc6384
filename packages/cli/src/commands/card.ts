// `boxhub card template|recognize`: the feedback-card engine from the command line
// (docs/cards.md). Loads only @boxhub/recognizer.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, guard, UsageError } from '../args.ts';

export const summary = 'feedback cards: print a template, recognize scanned cards';

const USAGE = `usage:
  boxhub card template --definition FILE --out DIR [--students FILE]
  boxhub card recognize --layouts DIR [--layouts DIR ...] [--duplex] [--workers N] --json FILE...

template   writes DIR/card.pdf (A4, print at 100 %) and DIR/layout.json; with --students
           (JSON array of {"student_id", "name"?} or of strings) one card per student
recognize  reads scanned sides in scan order and prints the per-student results as JSON
           (the recognition callback body without uuid, finish and download URLs).
           Each FILE is one image (JPEG, PNG, WebP, TIFF), a multi-page TIFF or a PDF;
           pages are taken in file order, then page order. PDF pages that are not a
           single embedded JPEG are rasterised with pdftoppm (poppler-utils).
           --duplex: the pages alternate front and back of each sheet
`;

async function readJson(path: string, what: string): Promise<unknown> {
  let text: string;
  try { text = await readFile(path, 'utf8'); } catch (e) { throw new UsageError(`cannot read ${what} ${path}: ${(e as Error).message}`); }
  try { return JSON.parse(text); } catch (e) { throw new UsageError(`${what} ${path} is not JSON: ${(e as Error).message}`); }
}

async function template(argv: string[]): Promise<number> {
  const { values } = parse(argv, { definition: { type: 'string' }, out: { type: 'string' }, students: { type: 'string' } });
  if (!values.definition || !values.out) throw new UsageError(`card template needs --definition and --out\n${USAGE}`);
  const rec = await import('@boxhub/recognizer');
  const definition = await readJson(values.definition, 'definition');
  const problems = rec.validateCardDefinition(definition);
  if (problems.length > 0) throw new UsageError(`invalid definition ${values.definition}:\n  ${problems.join('\n  ')}`);
  let students: Array<{ student_id: string; name?: string }> | undefined;
  if (values.students) {
    const raw = await readJson(values.students, 'students file');
    if (!Array.isArray(raw)) throw new UsageError('students file: a JSON array');
    students = raw.map((s: unknown) => (typeof s === 'string' ? { student_id: s } : s as { student_id: string; name?: string }));
  }
  let out;
  try { out = await rec.generateTemplate(definition, students ? { students } : {}); } catch (e) {
    if (e instanceof rec.LayoutError) throw new UsageError(e.message);
    throw e;
  }
  await mkdir(values.out, { recursive: true });
  await writeFile(join(values.out, 'card.pdf'), out.pdf);
  await writeFile(join(values.out, 'layout.json'), `${JSON.stringify(out.layout, null, 2)}\n`);
  const l = out.layout;
  process.stdout.write(`layout ${l.layout_id}: ${l.sheets} sheet(s), ${l.sides.length} printed side(s), ${l.chapters.length} chapters; wrote ${join(values.out, 'card.pdf')} and layout.json\n`);
  return 0;
}

type Recognizer = typeof import('@boxhub/recognizer');
type PageReading = import('@boxhub/recognizer').PageReading;
type PageSource = import('@boxhub/recognizer').PageSource;

async function recognize(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    layouts: { type: 'string', multiple: true }, json: { type: 'boolean' }, duplex: { type: 'boolean' }, workers: { type: 'string' },
  }, true);
  if (!values.layouts?.length) throw new UsageError(`card recognize needs --layouts DIR\n${USAGE}`);
  if (!values.json) throw new UsageError('card recognize prints JSON only: pass --json');
  if (positionals.length === 0) throw new UsageError('card recognize needs at least one FILE');
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1 || workers > 64)) throw new UsageError('--workers: integer 1-64');
  const rec = await import('@boxhub/recognizer');
  let layouts;
  try { layouts = await rec.loadLayoutDirs(values.layouts); } catch (e) { throw new UsageError((e as Error).message); }
  // A PDF or TIFF may hold many pages, so the page count is not known here.
  const pool = new rec.PagePool({ layouts: layouts.all(), workers: workers ?? 2 });
  try {
    const assembler = new rec.StudentAssembler(layouts);
    const results = [];
    // Pages are recognised in parallel, a bounded number ahead (each waiting page holds its
    // image); the assembler still sees them in scan order: file order, then page order.
    const ahead = pool.size * 2;
    const pending: Array<{ source: PageSource; reading: Promise<PageReading> }> = [];
    const settle = async (keep: number) => {
      while (pending.length > keep) {
        const p = pending.shift()!;
        results.push(...assembler.push(p.source, await p.reading));
      }
    };
    let n = 0;
    for (const path of positionals) {
      for await (const page of filePages(rec, path)) {
        n++;
        const source = values.duplex
          ? { paper_number: Math.ceil(n / 2), page_number: n, front: n % 2 === 1, item_id: 1 }
          : { paper_number: n, page_number: n, front: true, item_id: 1 };
        // A page the pool fails on (its worker died, say) is unreadable like any other. The catch
        // is attached at once: a later page failing while an earlier one is awaited would
        // otherwise be an unhandled rejection that ends the process with a stack trace.
        const reading = 'image' in page
          ? pool.recognize(page.image).catch((e: Error) => unreadable(rec, `${page.name}: ${e.message}`))
          : Promise.resolve(unreadable(rec, page.error));
        pending.push({ source, reading });
        await settle(ahead);
      }
    }
    await settle(0);
    results.push(...assembler.end());
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    return 0;
  } finally {
    await pool.close();
  }
}

/** The pages of one scanned file; a file that cannot be read is one page that fails. */
async function* filePages(rec: Recognizer, path: string): AsyncGenerator<{ image: Uint8Array; name: string } | { error: string }> {
  let bytes: Uint8Array;
  try {
    // Checked before reading, so a huge file is refused without being loaded.
    const { size } = await stat(path);
    if (size > rec.SCAN_LIMITS.maxBytes) { yield { error: `${path}: file too large (${size} bytes; at most ${rec.SCAN_LIMITS.maxBytes})` }; return; }
    bytes = await readFile(path);
  } catch (e) {
    yield { error: `cannot read ${path}: ${(e as Error).message}` };
    return;
  }
  for await (const page of rec.scanPages(bytes)) {
    yield 'image' in page ? { image: page.image, name: `${path}#${page.page}` } : { error: `${path}#${page.page}: ${page.error}` };
  }
}

/** Exactly what recognizePage says about an image it cannot decode (1004). */
function unreadable(rec: Recognizer, detail: string): PageReading {
  return { status: 'unreadable', error_code: rec.RECOGNITION_ERRORS.imageAcquisition, detail, ms: 0 };
}

export function run(argv: string[]): Promise<number> {
  return guard(async () => {
    const [sub, ...rest] = argv;
    if (sub === 'template') return template(rest);
    if (sub === 'recognize') return recognize(rest);
    if (sub === undefined || sub === 'help' || sub === '--help') { process.stdout.write(USAGE); return sub === undefined ? 2 : 0; }
    throw new UsageError(`unknown card subcommand '${sub}'\n${USAGE}`);
  });
}
