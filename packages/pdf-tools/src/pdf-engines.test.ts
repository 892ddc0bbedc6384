// Which PDF engine does the work (pdf-engines.ts; docs/printing.md, "PDF engines"): the system
// tools when they are on PATH, the built-in engine otherwise or when asked, and the start line.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath, pdfEnginesLine, renderEngine, structureEngine } from './pdf-engines.ts';

const bins: string[] = [];
after(() => {
  for (const d of bins) rmSync(d, { recursive: true, force: true });
});

function binWith(...names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-engines-'));
  bins.push(dir);
  for (const n of names) {
    writeFileSync(join(dir, n), '#!/bin/sh\n');
    chmodSync(join(dir, n), 0o755);
  }
  return dir;
}

test('the system tools when they are on PATH (qpdf with prlimit), else the built-in engine', () => {
  const all = binWith('qpdf', 'prlimit', 'pdftoppm');
  const none = binWith();
  const qpdfOnly = binWith('qpdf');
  assert.equal(onPath('qpdf', all), true);
  assert.equal(onPath('qpdf', none), false);
  assert.equal(structureEngine({ PATH: all }), 'system');
  assert.equal(structureEngine({ PATH: qpdfOnly }), 'builtin', 'qpdf runs under prlimit');
  assert.equal(renderEngine({ PATH: all }), 'system');
  assert.equal(renderEngine({ PATH: none }), 'builtin');
  assert.equal(renderEngine({ PATH: none }, join(all, 'pdftoppm')), 'system', 'a path is taken as it is');
  assert.equal(structureEngine({ PATH: all, BOXHUB_PDF_ENGINE: 'builtin' }), 'builtin');
  assert.equal(renderEngine({ PATH: all, BOXHUB_PDF_ENGINE: 'builtin' }), 'builtin');
});

test('the start line names the engines and the Debian packages that bring the system tools', () => {
  assert.equal(
    pdfEnginesLine({ PATH: binWith('qpdf', 'prlimit', 'pdftoppm') }),
    'PDF engines: qpdf (checks, page work) and pdftoppm (rendering) from the system',
  );
  assert.equal(
    pdfEnginesLine({ PATH: binWith() }),
    'PDF engines: built-in pdf-lib for checks and page work, built-in pdf.js for rendering (every feature works; install the Debian packages qpdf and poppler-utils for the faster system tools)',
  );
  assert.equal(
    pdfEnginesLine({ PATH: binWith('qpdf', 'prlimit') }),
    'PDF engines: qpdf for checks and page work, built-in pdf.js for rendering (every feature works; install the Debian package poppler-utils for the faster system tools)',
  );
  assert.match(
    pdfEnginesLine({ PATH: binWith('qpdf', 'prlimit', 'pdftoppm'), BOXHUB_PDF_ENGINE: 'builtin' }),
    /\(BOXHUB_PDF_ENGINE=builtin\)$/,
  );
});
