// `boxhub card template|recognize|run`: the feedback-card engine from the command line
// (docs/cards.md). template and recognize load only @boxhub/recognizer; run uses the service.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { common, defineCommand, defineGroup, intFlag, lazy } from '../command.ts';
import { errnoCode, EXIT, messageOf, UsageError } from '../exit.ts';
import { emit, Progress } from '../progress.ts';
import { studentLine } from './card-text.ts';

async function readJson(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${path}: ${messageOf(e)}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${what} ${path} is not JSON: ${messageOf(e)}`);
  }
}

const template = defineCommand({
  summary: "make a card's printable PDF and its layout from a definition (no service needed)",
  usage: '--definition FILE --out DIR [--students FILE] [--json]',
  description:
    'Writes DIR/card.pdf (A4: print at 100 %) and DIR/layout.json, which card recognize reads.\nWith --students (a JSON array of {"student_id", "name"?} or of strings): one card per\nstudent, with the name and number printed on it (docs/cards.md, section 2).',
  flags: {
    definition: {
      type: 'string',
      arg: 'FILE',
      required: true,
      help: 'the card definition (JSON; docs/cards.md, docs/examples/card.json)',
    },
    out: { type: 'string', arg: 'DIR', required: true, help: 'where card.pdf and layout.json go (made if missing)' },
    students: { type: 'string', arg: 'FILE', help: 'JSON array of students: one personalised card each' },
    json: common.json,
  },
  json: '{layout_id, sheets, sides, chapters, pdf, layout} (pdf and layout: the files written)',
  examples: [
    'boxhub card template --definition docs/examples/card.json --out cards/',
    'boxhub card template --definition card.json --out cards/ --students class-4b.json',
  ],
  async run(ctx) {
    const values = ctx.values;
    const rec = await import('@boxhub/recognizer');
    const definition = await readJson(values.definition, 'definition');
    const problems = rec.validateCardDefinition(definition);
    if (problems.length > 0) throw new UsageError(`invalid definition ${values.definition}: ${problems.join('; ')}`);
    let students: Array<{ student_id: string; name?: string }> | undefined;
    if (values.students) {
      const raw = await readJson(values.students, 'students file');
      if (!Array.isArray(raw)) throw new UsageError(`--students ${values.students}: a JSON array`);
      students = raw.map((s: unknown) =>
        typeof s === 'string' ? { student_id: s } : (s as { student_id: string; name?: string }),
      );
    }
    let out;
    try {
      out = await rec.generateTemplate(definition, students ? { students } : {});
    } catch (e) {
      if (e instanceof rec.LayoutError) throw new UsageError(e.message);
      throw e;
    }
    await mkdir(values.out, { recursive: true });
    const pdf = join(values.out, 'card.pdf');
    const layout = join(values.out, 'layout.json');
    await writeFile(pdf, out.pdf);
    await writeFile(layout, `${JSON.stringify(out.layout, null, 2)}\n`);
    const l = out.layout;
    emit(
      ctx.json,
      { layout_id: l.layout_id, sheets: l.sheets, sides: l.sides.length, chapters: l.chapters.length, pdf, layout },
      `layout ${l.layout_id}: ${l.sheets} sheet(s), ${l.sides.length} printed side(s), ${l.chapters.length} chapters; wrote ${pdf} and layout.json`,
    );
    return EXIT.ok;
  },
});

type Recognizer = typeof import('@boxhub/recognizer');
type PageReading = import('@boxhub/recognizer').PageReading;
type PageSource = import('@boxhub/recognizer').PageSource;
type StudentResult = import('@boxhub/recognizer').StudentResult;

const recognize = defineCommand({
  summary: "read scanned cards with the local engine and print each student's result (no service needed)",
  usage: '--layouts DIR [--layouts DIR ...] [options] FILE...',
  description:
    'Reads the scanned sides in scan order (file order, then page order) and prints one result per\nstudent. Each FILE is an image (JPEG, PNG, WebP, TIFF), a multi-page TIFF or a PDF; PDF pages\nthat are not a single embedded JPEG are rasterised with pdftoppm (poppler-utils) when it is\ninstalled, else with the built-in engine (printing.md, "PDF engines"). Exit 1 when a student\ncould not be read (its result says why); a FILE that does not exist or is a directory is a\nusage error (exit 2) before anything is read.',
  args: { name: 'FILE', min: 1, max: Infinity },
  flags: {
    layouts: {
      type: 'string',
      arg: 'DIR',
      multiple: true,
      required: true,
      help: 'a directory with a layout.json (card template --out); repeatable',
    },
    duplex: { type: 'boolean', help: 'the pages alternate front and back of each sheet' },
    workers: { type: 'string', arg: 'N', help: 'pages read in parallel, 1-64 (default 2)' },
    json: {
      ...common.json,
      help: 'print the JSON array of per-student results (the recognition callback\nbody without uuid, finish and download URLs)',
    },
  },
  json: '[{error_code, pages: [{paper_number, page_number, front, item_id}], result: {student_id, qrcode, fills, uncertain?} | null, detail?}]',
  examples: [
    'boxhub card recognize --layouts cards/ --duplex scan.pdf',
    'boxhub card recognize --layouts cards/ --layouts other-card/ --json page-*.jpg > results.json',
  ],
  async run(ctx) {
    const values = ctx.values;
    const workers = intFlag('workers', values.workers, 1, 64);
    // A FILE that is not there is a mistake on the command line (exit 2), not a student whose
    // page could not be read: checked before anything is recognised (docs/cli.md).
    for (const path of ctx.args) {
      let st;
      try {
        st = await stat(path);
      } catch (e) {
        const code = errnoCode(e);
        throw new UsageError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? messageOf(e))}`);
      }
      if (st.isDirectory())
        throw new UsageError(`${path} is a directory: give the scanned files in it (${path.replace(/\/$/, '')}/*.pdf)`);
    }
    const rec = await import('@boxhub/recognizer');
    let layouts;
    try {
      layouts = await rec.loadLayoutDirs(values.layouts);
    } catch (e) {
      throw new UsageError(messageOf(e));
    }
    const progress = new Progress({ json: ctx.json });
    // A PDF or TIFF may hold many pages, so the page count is not known here.
    const pool = new rec.PagePool({ layouts: layouts.all(), workers: workers ?? 2 });
    try {
      const assembler = new rec.StudentAssembler(layouts);
      const results: StudentResult[] = [];
      const show = (got: StudentResult[]) => {
        results.push(...got);
        if (ctx.json) return;
        progress.clear();
        for (const r of got) process.stdout.write(`${studentLine(r)}\n`);
      };
      // Pages are recognised in parallel, a bounded number ahead (each waiting page holds its
      // image); the assembler still sees them in scan order: file order, then page order.
      const ahead = pool.size * 2;
      const pending: Array<{ source: PageSource; reading: Promise<PageReading> }> = [];
      let read = 0;
      const settle = async (keep: number) => {
        // Nothing is added while this runs: the loop below awaits it before reading on.
        for (const p of pending.splice(0, Math.max(0, pending.length - keep))) {
          const reading = await p.reading;
          read++;
          show(assembler.push(p.source, reading));
          progress.status(
            `read ${read} page${read === 1 ? '' : 's'}; ${results.length} student${results.length === 1 ? '' : 's'}`,
          );
        }
      };
      let n = 0;
      for (const path of ctx.args) {
        for await (const page of filePages(rec, path)) {
          n++;
          const source = values.duplex
            ? { paper_number: Math.ceil(n / 2), page_number: n, front: n % 2 === 1, item_id: 1 }
            : { paper_number: n, page_number: n, front: true, item_id: 1 };
          // A page the pool fails on (its worker died, say) is unreadable like any other. The catch
          // is attached at once: a later page failing while an earlier one is awaited would
          // otherwise be an unhandled rejection that ends the process with a stack trace.
          const reading =
            'image' in page
              ? pool.recognize(page.image).catch((e: Error) => unreadable(rec, `${page.name}: ${e.message}`))
              : Promise.resolve(unreadable(rec, page.error));
          pending.push({ source, reading });
          await settle(ahead);
        }
      }
      await settle(0);
      show(assembler.end());
      progress.clear();
      if (ctx.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
      return results.some((r) => r.error_code !== 0) ? EXIT.failed : EXIT.ok;
    } finally {
      progress.clear();
      await pool.close();
    }
  },
});

/** The pages of one scanned file; a file that cannot be read is one page that fails. */
async function* filePages(
  rec: Recognizer,
  path: string,
): AsyncGenerator<{ image: Uint8Array; name: string } | { error: string }> {
  let bytes: Uint8Array;
  try {
    // Checked before reading, so a huge file is refused without being loaded.
    const { size } = await stat(path);
    if (size > rec.SCAN_LIMITS.maxBytes) {
      yield { error: `${path}: file too large (${size} bytes; at most ${rec.SCAN_LIMITS.maxBytes})` };
      return;
    }
    bytes = await readFile(path);
  } catch (e) {
    yield { error: `cannot read ${path}: ${messageOf(e)}` };
    return;
  }
  for await (const page of rec.scanPages(bytes)) {
    yield 'image' in page
      ? { image: page.image, name: `${path}#${page.page}` }
      : { error: `${path}#${page.page}: ${page.error}` };
  }
}

/** Exactly what recognizePage says about an image it cannot decode (1004). */
function unreadable(rec: Recognizer, detail: string): PageReading {
  return { status: 'unreadable', error_code: rec.RECOGNITION_ERRORS.imageAcquisition, detail, ms: 0 };
}

export const command = defineGroup({
  summary: 'feedback cards: run a class stack, make templates, recognize scans',
  description:
    'card run uses the service (docs/cards.md, section 10); card template and card recognize work\nalone, with the same engine the service uses (@boxhub/recognizer).',
  examples: [
    'boxhub card template --definition docs/examples/card.json --out cards/',
    'boxhub card run --device BX0042 --template $TEMPLATE',
    'boxhub card recognize --layouts cards/ --duplex scan.pdf',
  ],
  subcommands: {
    run: lazy(
      "scan a class's cards on a box and print each student's result as it comes",
      () => import('./card-run.ts'),
    ),
    template,
    recognize,
  },
});
