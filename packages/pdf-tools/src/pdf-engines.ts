// Which PDF engine does the work: the system tools (qpdf and pdftoppm under prlimit: fast and
// long proven) when they are on PATH, else the built-in engine (builtin-pdf/: pdf-lib and pdf.js
// on worker threads, from the npm registry), so `npm ci && npm start` on a machine with Node
// alone prints, scans and reads cards (docs/printing.md, "PDF engines").
// BOXHUB_PDF_ENGINE=builtin uses the built-in engine even where the tools are installed.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `cmd` is an executable file in one of PATH's directories. */
export function onPath(cmd: string, path = process.env.PATH ?? ''): boolean {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return true;
    } catch {
      /* next */
    }
  }
  return false;
}

export type PdfEngine = 'system' | 'builtin';

/** The engine for qpdf's work (document checks, the box's page work): qpdf under prlimit. */
export function structureEngine(env: NodeJS.ProcessEnv = process.env): PdfEngine {
  return env.BOXHUB_PDF_ENGINE !== 'builtin' && onPath('qpdf', env.PATH) && onPath('prlimit', env.PATH)
    ? 'system'
    : 'builtin';
}

/** The engine for rendering pages (the simulated printer, card recognition): pdftoppm (the
 *  simulated printer runs it under prlimit, and also needs that). */
export function renderEngine(env: NodeJS.ProcessEnv = process.env, pdftoppm = 'pdftoppm'): PdfEngine {
  if (env.BOXHUB_PDF_ENGINE === 'builtin') return 'builtin';
  if (pdftoppm.includes('/')) {
    try {
      accessSync(pdftoppm, constants.X_OK);
      return 'system';
    } catch {
      return 'builtin';
    }
  }
  return onPath(pdftoppm, env.PATH) ? 'system' : 'builtin';
}

/** One line for a service's start: which engine does what, and the Debian packages that would
 *  put the system tools to work. */
export function pdfEnginesLine(env: NodeJS.ProcessEnv = process.env): string {
  const s = structureEngine(env);
  const r = renderEngine(env);
  if (s === 'system' && r === 'system')
    return 'PDF engines: qpdf (checks, page work) and pdftoppm (rendering) from the system';
  const missing = [
    s === 'builtin' && env.BOXHUB_PDF_ENGINE !== 'builtin' ? 'qpdf' : '',
    r === 'builtin' && env.BOXHUB_PDF_ENGINE !== 'builtin' ? 'poppler-utils' : '',
  ].filter(Boolean);
  return (
    `PDF engines: ${s === 'system' ? 'qpdf' : 'built-in pdf-lib'} for checks and page work, ${r === 'system' ? 'pdftoppm' : 'built-in pdf.js'} for rendering` +
    (missing.length
      ? ` (every feature works; install the Debian package${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} for the faster system tools)`
      : ' (BOXHUB_PDF_ENGINE=builtin)')
  );
}
