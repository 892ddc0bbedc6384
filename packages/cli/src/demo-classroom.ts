// The demo's class (`boxhub serve --demo`): when the demo box's printer has printed one of the
// demo application's card templates, simulated students fill in the printed cards and the stack
// goes into the demo box's scanner feeder, so the feedback-card flow (template → print → fill →
// scan → recognise → per-student callbacks, README "Feedback cards") runs on one machine with
// no paper. What they marked is written beside the printed pages, to compare with the results.
//
// Each student's card is the printed page itself (as the printer rendered it, so a personalised
// card keeps its student's strip and barcode) with marks drawn where the template's layout puts
// its areas, scanned with mild effects, by the recognizer's own synthetic generator.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SimPrinter, SimScanner } from '@boxhub/agent';
import { runLimited } from '@boxhub/pdf-tools/limited-tool.ts';
import {
  createLayoutSet,
  printedSides,
  recognizePage,
  scanPages,
  type Layout,
  type PageReading,
} from '@boxhub/recognizer';
import { studentKey, studentKeyHex } from '@boxhub/recognizer/id-strip.ts';
import { expectedFills, fillCard, type MarkMix } from '@boxhub/recognizer/synthetic/filled-card.ts';
import { renderScan } from '@boxhub/recognizer/synthetic/render-scan.ts';
import { mulberry32 } from '@boxhub/recognizer/synthetic/random.ts';
import { messageOf } from './exit.ts';

/** Clear pen and pencil marks, as a class that was told how to fill the cards: the demo shows
 *  the flow; the recognizer's hard cases are the benchmark's (docs/cards.md, section 8). */
const CLASS_MIX: MarkMix = {
  fillRate: 0.3,
  filled: ['pen', 'pencil', 'tick', 'cross'],
  emptyMarks: ['stray'],
  emptyMarkRate: 0.03,
  doubleDigitRate: 0,
  studentNumberKinds: ['pen', 'pencil'],
  hands: [
    ['pen', 1],
    ['pencil', 1],
  ],
};
const SCAN_DPI = 200;
/** A class is at most this many cards: the rest of a larger print run stays on the desk. */
const MAX_STUDENTS = 60;

export interface ClassroomOptions {
  printer: SimPrinter;
  scanner: SimScanner;
  /** The layouts of the demo application's card templates. */
  layouts: () => Promise<Layout[]>;
  /** Where the filled cards' truth goes (the printer's out directory). */
  dir: string;
  log: (line: string) => void;
}

export interface ClassTruth {
  template_id: string;
  /** student_id null: a personalised barcode card, whose student is printed on it. */
  students: Array<{ student_id: string | null; fills: number[][] }>;
}

/**
 * The sides the printer was sent, in the order a person takes them from its tray. The simulated
 * printer has no reverse delivery, so a job asking for reverse order (the API's default) reached
 * it reversed by the box, sheet by sheet when two-sided (media/document-plan.ts); a face-up tray
 * stacks that in reading order.
 */
export function trayOrder(pages: Uint8Array[], o: { reverse: boolean; duplex: boolean }): Uint8Array[] {
  if (!o.reverse) return pages;
  if (!o.duplex) return [...pages].reverse();
  const sheets: Uint8Array[][] = [];
  for (let i = 0; i < pages.length; i += 2) sheets.push(pages.slice(i, i + 2));
  return sheets.reverse().flat();
}

/**
 * The class's cards for a printed job: which template it is (read from its first page by the
 * recognizer, as any scan of it would be), then, per copy of each printed card, a student's
 * marks on the printed sides. Null when the job is not one of `layouts`' cards.
 */
export async function fillPrintedCards(
  pdfPath: string,
  job: { copies: number; reverse: boolean; duplex: boolean },
  layouts: Layout[],
  seed: number,
): Promise<{ sheets: Array<{ front: Uint8Array; back: Uint8Array }>; truth: ClassTruth } | null> {
  if (layouts.length === 0) return null;
  const sent: Uint8Array[] = [];
  for await (const p of scanPages(await readFile(pdfPath), { renderDpi: SCAN_DPI })) {
    if ('error' in p) return null;
    sent.push(p.image);
  }
  const pages = trayOrder(sent, job);
  const set = createLayoutSet(layouts);
  const first = pages[0] ? await recognizePage(pages[0], set) : undefined;
  if (first?.status !== 'ok') return null;
  const layout = layouts.find((l) => l.layout_id === first.layout_id);
  if (!layout) throw new Error(`page 1 was read as layout ${first.layout_id}, which is not among the demo's layouts`);
  const order = printedSides(layout);
  if (pages.length % order.length !== 0)
    throw new Error(
      `${pages.length} printed pages are not whole cards of ${order.length} pages (only some pages printed?)`,
    );
  const r = mulberry32(seed);
  const sides: Uint8Array[] = [];
  const truth: ClassTruth = { template_id: layout.layout_id, students: [] };
  const cards = Math.min(MAX_STUDENTS, (pages.length / order.length) * Math.max(1, job.copies));
  const ownNumber = await personalNumbers(pdfPath, layout);
  // Each printed page is recognized at most once (the first one already was; copies repeat pages).
  const readings = new Map<number, Promise<PageReading>>([[0, Promise.resolve(first)]]);
  const read = (i: number): Promise<PageReading> => {
    const known = readings.get(i);
    if (known) return known;
    const page = pages[i];
    if (!page) throw new Error(`no printed page ${i + 1} of ${pages.length}`);
    const reading = recognizePage(page, set);
    readings.set(i, reading);
    return reading;
  };
  for (let c = 0; c < cards; c++) {
    const at = (c * order.length) % pages.length;
    const studentId = ownNumber?.(await read(at));
    // Marks only: the printed page underneath is the card's drawing.
    const card = fillCard(
      layout,
      { sides: layout.sides.map((s) => ({ sheet: s.sheet, side: s.side, ops: [] })) },
      r,
      CLASS_MIX,
      studentId ? { studentId } : {},
    );
    for (const [k, i] of order.entries()) {
      const n = sides.length;
      sides.push(
        await renderScan([], i === null ? [] : card.sides[i]!.marks, {
          dpi: SCAN_DPI,
          printed: pages[at + k]!,
          rotationDeg: (((n * 7) % 11) - 5) / 10,
          noise: 2,
          jpegQuality: 85,
          seed: seed + n,
        }),
      );
    }
    truth.students.push({ student_id: card.studentId || null, fills: expectedFills(layout, card) });
  }
  // Printed one-sided, each side is a sheet of its own with a blank back.
  const blank =
    job.duplex && sides.length % 2 === 0
      ? undefined
      : await renderScan([], [], { dpi: SCAN_DPI, noise: 2, jpegQuality: 85, seed });
  const sheets: Array<{ front: Uint8Array; back: Uint8Array }> = [];
  if (job.duplex)
    for (let i = 0; i < sides.length; i += 2) sheets.push({ front: sides[i]!, back: sides[i + 1] ?? blank! });
  else for (const s of sides) sheets.push({ front: s, back: blank! });
  return { sheets, truth };
}

/**
 * On a personalised card with student-number bubbles, a student marks the number printed on
 * their card: the one among the PDF's numbers of the right length (its text, pdftotext) whose key
 * is the one the card's student strip carries (id-strip.ts). Undefined elsewhere: a random number.
 */
async function personalNumbers(
  pdfPath: string,
  layout: Layout,
): Promise<((firstPage: PageReading) => string | undefined) | undefined> {
  if (layout.student_number.type !== 'bubbles') return undefined;
  const text = await runLimited('pdftotext', [pdfPath, '-'], {
    memoryBytes: 512 << 20,
    cpuSeconds: 30,
    timeoutMs: 60_000,
    maxOutputBytes: 16 << 20,
  });
  if (text.code !== 0) return undefined;
  const byKey = new Map<string, string>();
  for (const m of text.stdout.toString('utf8').matchAll(new RegExp(`\\b\\d{${layout.student_number.digits}}\\b`, 'g')))
    byKey.set(studentKeyHex(studentKey(m[0])), m[0]);
  if (byKey.size === 0) return undefined;
  return (reading) => (reading.status === 'ok' && reading.student_key ? byKey.get(reading.student_key) : undefined);
}

/** Starts the class: returns the function that stops it. */
export function startClassroom(o: ClassroomOptions): () => void {
  let work = Promise.resolve();
  const off = o.printer.onJobEnd((job) => {
    if (job.state !== 'completed' || !job.rendered) return;
    const rendered = job.rendered;
    work = work
      .then(async () => {
        const duplex = job.options.duplex !== undefined && job.options.duplex !== 'SVC_DP_NONE';
        const filled = await fillPrintedCards(
          rendered,
          { copies: job.copies, reverse: job.options.reverse === true, duplex },
          await o.layouts(),
          job.id * 1000,
        );
        if (!filled) return;
        const { sheets, truth } = filled;
        await mkdir(o.dir, { recursive: true });
        const truthFile = join(o.dir, `${job.task.replace(/[^A-Za-z0-9._-]/g, '_')}-class.json`);
        // The class hands its cards in: they replace what was in the feeder. The truth file is
        // written after, so its existence means the cards are there (the README waits for it).
        o.scanner.unload();
        o.scanner.load(
          sheets.map((x) => ({ front: { image: x.front, dpi: SCAN_DPI }, back: { image: x.back, dpi: SCAN_DPI } })),
        );
        await writeFile(truthFile, `${JSON.stringify(truth, null, 2)}\n`);
        o.log(
          `classroom: ${truth.students.length} student(s) filled in card ${truth.template_id}; the ${sheets.length} sheet(s) are in the demo box's feeder (what they marked: ${truthFile})`,
        );
      })
      .catch((e: unknown) => o.log(`classroom: the printed cards were not filled in: ${messageOf(e)}`));
  });
  return off;
}
