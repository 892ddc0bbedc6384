// `boxhub card template|recognize`: the feedback-card engine from the command line
// (docs/cards.md). Loads only @boxhub/recognizer.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, guard, UsageError } from '../args.ts';

export const summary = 'feedback cards: print a template, recognize scanned cards';

const USAGE = `usage:
  boxhub card template --definition FILE --out DIR [--students FILE]
  boxhub card recognize --layouts DIR [--layouts DIR ...] [--duplex] [--workers N] --json IMAGE...

template   writes DIR/card.pdf (A4, print at 100 %) and DIR/layout.json; with --students
           (JSON array of {"student_id", "name"?} or of strings) one card per student
recognize  reads scanned sides in scan order and prints the per-student results as JSON
           (the recognition callback body without uuid, finish and download URLs);
           --duplex: the images alternate front and back of each sheet
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

async function recognize(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    layouts: { type: 'string', multiple: true }, json: { type: 'boolean' }, duplex: { type: 'boolean' }, workers: { type: 'string' },
  }, true);
  if (!values.layouts?.length) throw new UsageError(`card recognize needs --layouts DIR\n${USAGE}`);
  if (!values.json) throw new UsageError('card recognize prints JSON only: pass --json');
  if (positionals.length === 0) throw new UsageError('card recognize needs at least one IMAGE');
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1 || workers > 64)) throw new UsageError('--workers: integer 1-64');
  const rec = await import('@boxhub/recognizer');
  let layouts;
  try { layouts = await rec.loadLayoutDirs(values.layouts); } catch (e) { throw new UsageError((e as Error).message); }
  const pool = new rec.PagePool({ layouts: layouts.all(), workers: Math.min(workers ?? 2, positionals.length) });
  try {
    // All pages are recognised in parallel; the assembler still sees them in scan order.
    const readings = positionals.map(async (path) => {
      let bytes: Uint8Array;
      try { bytes = await readFile(path); } catch (e) {
        return { status: 'unreadable' as const, error_code: rec.RECOGNITION_ERRORS.imageAcquisition, detail: `cannot read ${path}: ${(e as Error).message}`, ms: 0 };
      }
      return pool.recognize(bytes);
    });
    const assembler = new rec.StudentAssembler(layouts);
    const results = [];
    for (let i = 0; i < readings.length; i++) {
      const page = i + 1;
      const source = values.duplex
        ? { paper_number: Math.ceil(page / 2), page_number: page, front: page % 2 === 1, item_id: 1 }
        : { paper_number: page, page_number: page, front: true, item_id: 1 };
      results.push(...assembler.push(source, await readings[i]!));
    }
    results.push(...assembler.end());
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    return 0;
  } finally {
    await pool.close();
  }
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
