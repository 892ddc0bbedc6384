// Fills AMC's sheets with the bench's marks (fillCard with the bench's mark mixes), scans
// them with the bench's scan effects (renderScan, effectsFor, showThroughFor), runs AMC's
// analyse on the images and scores AMC's ticked boxes against the ground truth.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Layout, LayoutSide } from '../../../packages/recognizer/src/layout.ts';
import type { CardDrawing } from '../../../packages/recognizer/src/template-pdf.ts';
import type { DrawOp } from '../../../packages/recognizer/src/page-drawing.ts';
import { fillCard, type AreaTruth } from '../../../packages/recognizer/src/synthetic/filled-card.ts';
import { renderScan } from '../../../packages/recognizer/src/synthetic/render-scan.ts';
import { mulberry32 } from '../../../packages/recognizer/src/synthetic/random.ts';
import { MIXES, effectsFor, showThroughFor, type SetName } from '../bench-card.ts';
import { run, type AmcPage, type AmcProject } from './sheet.ts';

/** AMC's default darkness threshold (project option seuil) and upper bound (seuil_up). */
export const AMC_THRESHOLD = 0.15;
export const AMC_THRESHOLD_UP = 1.0;

export interface AmcSetResult {
  label: string;
  dpi: number;
  hard: boolean;
  pages: number;
  pagesUnread: number;
  pagesMisidentified: number;
  boxes: number;
  right: number;
  wrong: number;
  unread: number;
  wrongKinds: Map<string, number>;
  /** Wall time of `auto-multiple-choice analyse --n-procs 1` divided by the pages. */
  msPerPage: number;
  renderMs: number;
}

/** AMC's copy (two pages) as a boxhub Layout/CardDrawing pair so fillCard marks it. */
function asCard(pages: AmcPage[], ops: DrawOp[][]): { layout: Layout; drawing: CardDrawing } {
  const sides: LayoutSide[] = pages.map((p, k) => ({
    sheet: 1,
    side: k === 0 ? 'front' : 'back',
    fiducials: [],
    id_code: { x: 0, y: 0, w: 0, h: 0, cols: 0, rows: 0, cell: 0, bits: [] },
    areas: p.boxes.map((b) => ({ chapter: b.question, index: b.answer, x: b.x, y: b.y, w: b.w, h: b.h })),
    student_cells: [],
  }));
  const layout: Layout = {
    format: 'boxhub-card-layout',
    version: 1,
    layout_id: '0a3c0000',
    card_id: 'amc-sheet',
    title: 'AMC sheet',
    page: { size: 'A4', width_mm: 210, height_mm: 297 },
    duplex: true,
    sheets: 1,
    qrcode: '',
    student_number: { type: 'barcode' },
    chapters: [],
    sides,
  };
  const drawing: CardDrawing = {
    sides: pages.map((p, k) => ({ sheet: 1, side: k === 0 ? 'front' : 'back', ops: ops[p.subjectPage - 1]! })),
  };
  return { layout, drawing };
}

interface ScanTruth {
  file: string;
  student: number;
  page: number;
  truth: AreaTruth[];
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

export async function runSet(
  project: AmcProject,
  ops: DrawOp[][],
  workDir: string,
  spec: { label: string; dpi: number; hard: boolean },
  copies: number,
  seedBase: number,
): Promise<AmcSetResult> {
  const set: SetName = spec.hard ? 'hard' : 'clean';
  mkdirSync(join(workDir, 'scans'), { recursive: true });
  mkdirSync(join(workDir, 'data'), { recursive: true });
  mkdirSync(join(workDir, 'cr'), { recursive: true });
  copyFileSync(join(project.dataDir, 'layout.sqlite'), join(workDir, 'data', 'layout.sqlite'));

  const t0 = performance.now();
  const scans: ScanTruth[] = [];
  for (let c = 1; c <= copies; c++) {
    const pages = project.pages.filter((p) => p.student === c).sort((a, b) => a.page - b.page);
    const { layout, drawing } = asCard(pages, ops);
    const seed = seedBase + c;
    const card = fillCard(layout, drawing, mulberry32(seed), MIXES[set]);
    for (let k = 0; k < card.sides.length; k++) {
      const s = card.sides[k]!,
        other = card.sides[1 - k];
      const fx = effectsFor(set, spec.dpi, seed * 2 + k);
      const st = showThroughFor(set, seed * 2 + k);
      const jpeg = await renderScan(
        s.ops,
        s.marks,
        st > 0 && other ? { ...fx, showThrough: { ops: other.ops, marks: other.marks, strength: st } } : fx,
      );
      const file = join(workDir, 'scans', `c${String(c).padStart(3, '0')}-p${k + 1}.jpg`);
      writeFileSync(file, jpeg);
      scans.push({ file, student: c, page: pages[k]!.page, truth: s.truth });
    }
  }
  const renderMs = performance.now() - t0;

  // AMC's analysis as a user runs it, on one process so the time is per core.
  const t1 = performance.now();
  run(
    'auto-multiple-choice',
    [
      'analyse',
      '--projet',
      workDir,
      '--data',
      join(workDir, 'data'),
      '--cr',
      join(workDir, 'cr'),
      '--n-procs',
      '1',
      ...scans.map((s) => s.file),
    ],
    workDir,
    `AMC analyse (${spec.label})`,
  );
  const analyseMs = performance.now() - t1;

  const res: AmcSetResult = {
    label: spec.label,
    dpi: spec.dpi,
    hard: spec.hard,
    pages: scans.length,
    pagesUnread: 0,
    pagesMisidentified: 0,
    boxes: 0,
    right: 0,
    wrong: 0,
    unread: 0,
    wrongKinds: new Map(),
    msPerPage: analyseMs / scans.length,
    renderMs,
  };
  const db = new Database(join(workDir, 'data', 'capture.sqlite'), { readonly: true });
  try {
    const pageOf = db.prepare('SELECT student, page, copy FROM capture_page WHERE src = ? OR src = ?');
    const zones = db.prepare(
      `SELECT id_a AS question, id_b AS answer, total, black, manual FROM capture_zone WHERE student = ? AND page = ? AND copy = ? AND type = 4`,
    );
    for (const s of scans) {
      res.boxes += s.truth.length;
      const rel = s.file.slice(workDir.length + 1);
      const got = pageOf.get(`%PROJET/${rel}`, rel) as { student: number; page: number; copy: number } | undefined;
      if (!got) {
        res.pagesUnread++;
        res.unread += s.truth.length;
        continue;
      }
      const read = new Map<string, boolean>();
      for (const z of zones.all(got.student, got.page, got.copy) as Array<{
        question: number;
        answer: number;
        total: number;
        black: number;
        manual: number;
      }>) {
        // AMC's own rule (DataModule/capture.pm, statement "ticked").
        const ticked =
          z.manual >= 0
            ? z.manual > 0
            : z.total <= 0
              ? false
              : z.black >= AMC_THRESHOLD * z.total && z.black <= AMC_THRESHOLD_UP * z.total;
        read.set(`${z.question}:${z.answer}`, ticked);
      }
      const misidentified = got.student !== s.student || got.page !== s.page;
      if (misidentified) res.pagesMisidentified++;
      for (const t of s.truth) {
        const ticked = misidentified ? undefined : read.get(`${t.chapter}:${t.index}`);
        if (ticked === t.filled) res.right++;
        else {
          res.wrong++;
          bump(
            res.wrongKinds,
            misidentified
              ? 'page misidentified'
              : ticked === undefined
                ? 'box missing'
                : `${t.kind}->${ticked ? 'ticked' : 'empty'}`,
          );
        }
      }
    }
  } finally {
    db.close();
  }
  return res;
}
