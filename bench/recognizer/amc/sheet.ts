// AMC's side of the comparison: a LaTeX sheet of AMC's own with as many boxes per page as the
// boxhub bench card (rows of 15 oval boxes the size of boxhub's areas), compiled with AMC's
// CLI (prepare, meptex); its layout read from AMC's layout.sqlite; its printed pages turned
// into the renderer's drawing primitives so the same scan pipeline draws them.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { DrawOp } from '../../../packages/recognizer/src/page-drawing.ts';

/** Boxes per row: boxhub lays chapters out in rows of 15 areas. */
export const BOXES_PER_ROW = 15;
/** Raster resolution of AMC's PDF before it becomes drawing primitives. */
const RASTER_DPI = 300;

export interface AmcBox {
  question: number;
  answer: number /** centre and size, mm */;
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface AmcPage {
  student: number;
  page: number /** 1-based page number in the subject PDF */;
  subjectPage: number;
  boxes: AmcBox[];
}
export interface AmcProject {
  dir: string;
  dataDir: string;
  pages: AmcPage[];
  subjectPdf: string;
}

export function run(cmd: string, args: string[], cwd: string, what: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}\n${r.stderr ?? ''}`.trim().split('\n').slice(-25).join('\n');
    throw new Error(`${what} failed (${cmd} exit ${r.status ?? r.signal}):\n${out}`);
  }
  return r.stdout;
}

/**
 * The LaTeX source: `copies` copies of `rowsPerPage.length` pages; page k holds rowsPerPage[k]
 * multiple-answer questions of 15 boxes each, answers in print order ([o]). AMC's own page
 * frame (its default 3 cm margins, corner discs, binary page codes) is left as it is.
 */
export function latexSource(copies: number, rowsPerPage: readonly number[]): string {
  const boxes = `\\correctchoice{}${'\\wrongchoice{}'.repeat(BOXES_PER_ROW - 1)}`;
  let q = 0;
  const pages = rowsPerPage.map((rows, k) => {
    const lines = [`{\\large\\bfseries Benchmark sheet} \\hfill page ${k + 1}\\par\\vspace{4mm}`];
    for (let i = 0; i < rows; i++) lines.push(`\\row{q${String(++q).padStart(3, '0')}}`);
    return lines.join('\n');
  });
  return `\\documentclass[a4paper]{article}
\\usepackage[utf8]{inputenc}
\\usepackage[T1]{fontenc}
\\usepackage{tikz}
\\usepackage[box]{automultiplechoice}
% Oval boxes the size of boxhub's areas (7 x 4.4 mm); AMC's default rule and threshold.
\\AMCboxStyle{shape=oval,width=7mm,height=4.4mm}
\\setlength{\\parindent}{0pt}
\\setlength{\\AMCinterBquest}{4.6mm}
% One line per question: its number, then 15 boxes 2.4 mm apart (AMC's text width is 15 cm).
\\def\\AMCbeginQuestion#1#2{\\noindent\\makebox[7mm][l]{\\small\\bfseries #1}}
\\def\\AMCanswer#1#2{\\unskip#1\\kern2.4mm\\ignorespaces}
\\def\\AMCbeginAnswer{\\mbox\\bgroup}\\def\\AMCendAnswer{\\unskip\\egroup}
\\newcommand\\row[1]{\\begin{questionmult}{#1}\\begin{choicescustom}[o]${boxes}\\end{choicescustom}\\end{questionmult}}
\\begin{document}
\\onecopy{${copies}}{
${pages.join('\n\\clearpage\n')}
}
\\end{document}
`;
}

/** prepare --mode s, then meptex: the subject PDF and data/layout.sqlite. */
export function buildProject(dir: string, copies: number, rowsPerPage: readonly number[]): AmcProject {
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(join(dir, 'cr'), { recursive: true });
  writeFileSync(join(dir, 'src.tex'), latexSource(copies, rowsPerPage));
  const subjectPdf = join(dir, 'subject.pdf');
  run(
    'auto-multiple-choice',
    [
      'prepare',
      '--mode',
      's',
      '--prefix',
      dir,
      '--out-sujet',
      subjectPdf,
      '--out-corrige',
      join(dir, 'corrige.pdf'),
      '--out-calage',
      join(dir, 'calage.xy'),
      '--data',
      dataDir,
      join(dir, 'src.tex'),
    ],
    dir,
    'AMC prepare',
  );
  run('auto-multiple-choice', ['meptex', '--src', join(dir, 'calage.xy'), '--data', dataDir], dir, 'AMC meptex');
  return { dir, dataDir, subjectPdf, pages: readLayout(dataDir) };
}

/** Pages and boxes from layout.sqlite (pixels at the layout's dpi, y down) in millimetres. */
function readLayout(dataDir: string): AmcPage[] {
  const db = new Database(join(dataDir, 'layout.sqlite'), { readonly: true });
  try {
    const pages = db
      .prepare('SELECT student, page, subjectpage, dpi FROM layout_page ORDER BY subjectpage')
      .all() as Array<{ student: number; page: number; subjectpage: number; dpi: number }>;
    const boxStmt = db.prepare(
      'SELECT question, answer, xmin, xmax, ymin, ymax FROM layout_box WHERE student = ? AND page = ? AND role = 1 ORDER BY question, answer',
    );
    // AMC's box is the outer bound of the drawn oval; its nominal size excludes the 0.5 pt rule.
    const rule = (0.5 * 25.4) / 72;
    return pages.map((p) => {
      const mm = 25.4 / p.dpi;
      const boxes = (
        boxStmt.all(p.student, p.page) as Array<{
          question: number;
          answer: number;
          xmin: number;
          xmax: number;
          ymin: number;
          ymax: number;
        }>
      ).map((b) => ({
        question: b.question,
        answer: b.answer,
        x: ((b.xmin + b.xmax) / 2) * mm,
        y: ((b.ymin + b.ymax) / 2) * mm,
        w: (b.xmax - b.xmin) * mm - rule,
        h: (b.ymax - b.ymin) * mm - rule,
      }));
      return { student: p.student, page: p.page, subjectPage: p.subjectpage, boxes };
    });
  } finally {
    db.close();
  }
}

/**
 * Every page of the subject PDF as drawing primitives: rasterised by pdftoppm at 300 dpi in
 * grey, then runs of equal (quantised) grey per row, merged down identical rows, as
 * rectangles in millimetres. The scan renderer then places, blurs and degrades AMC's print
 * exactly as it does boxhub's own drawing.
 */
export function pagesAsOps(pdf: string, dir: string): DrawOp[][] {
  const prefix = join(dir, 'raster');
  run('pdftoppm', ['-gray', '-r', String(RASTER_DPI), pdf, prefix], dir, 'pdftoppm');
  const files = readdirSync(dir)
    .filter((f) => f.startsWith('raster-') && f.endsWith('.pgm'))
    .sort((a, b) => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, '')));
  return files.map((f) => pgmToOps(readFileSync(join(dir, f))));
}

function pgmToOps(buf: Buffer): DrawOp[] {
  // P5 header: magic, width, height, maxval, one whitespace byte, then the pixels.
  let pos = 0;
  const fields: number[] = [];
  const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
  if (buf.toString('latin1', 0, 2) !== 'P5') throw new Error('pdftoppm: not a PGM (P5) file');
  pos = 2;
  while (fields.length < 3) {
    while (isSpace(buf[pos]!)) pos++;
    if (buf[pos] === 0x23) {
      while (buf[pos] !== 0x0a) pos++;
      continue;
    }
    let n = 0;
    while (!isSpace(buf[pos]!)) n = n * 10 + (buf[pos++]! - 48);
    fields.push(n);
  }
  pos++;
  const [W, H, maxval] = fields as [number, number, number];
  const px = buf.subarray(pos, pos + W * H);
  const mm = 25.4 / RASTER_DPI;
  // 17 grey levels; near-white is paper. A hair of overlap hides seams between rectangles
  // when the renderer anti-aliases them at another resolution.
  const level = (v: number) => Math.round((v / maxval) * 16);
  const ops: DrawOp[] = [];
  type Run = { x0: number; x1: number; q: number; y0: number };
  let open = new Map<string, Run>();
  const flush = (r: Run, yEnd: number) =>
    ops.push({
      op: 'rect',
      x: r.x0 * mm,
      y: r.y0 * mm,
      w: (r.x1 - r.x0) * mm + 0.02,
      h: (yEnd - r.y0) * mm + 0.02,
      grey: r.q / 16,
    });
  for (let y = 0; y <= H; y++) {
    const next = new Map<string, Run>();
    if (y < H) {
      const row = y * W;
      let x = 0;
      while (x < W) {
        const q = level(px[row + x]!);
        if (q >= 16) {
          x++;
          continue;
        }
        const x0 = x;
        while (x < W && level(px[row + x]!) === q) x++;
        const key = `${x0},${x},${q}`;
        const prev = open.get(key);
        if (prev) {
          open.delete(key);
          next.set(key, prev);
        } else next.set(key, { x0, x1: x, q, y0: y });
      }
    }
    for (const r of open.values()) flush(r, y);
    open = next;
  }
  return ops;
}
