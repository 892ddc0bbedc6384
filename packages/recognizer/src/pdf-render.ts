// Rasterising PDF pages with pdftoppm (poppler-utils), or the built-in engine where pdftoppm is
// not installed, for the pages that are not a single embedded JPEG (docs/cards.md, "Scanned
// files"), and the messages its failures become.
import { execFile, type ExecFileException } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderEngine } from '@boxhub/pdf-tools/pdf-engines.ts';
import { runBuiltin } from '@boxhub/pdf-tools/builtin-pdf/run.ts';
import type { ScanPagesOptions } from './scan-pages.ts';

/** The scanPages options the renderer uses. */
export type RenderLimits = Pick<Required<ScanPagesOptions>, 'maxRenderPx' | 'pdftoppm' | 'renderTimeoutMs'>;

/** Renders pages of one PDF; the PDF is written to a private temporary file once, on first use. */
export class PdfRenderer {
  readonly #bytes: Uint8Array;
  readonly #limits: RenderLimits;
  #dir: Promise<string> | undefined;

  constructor(bytes: Uint8Array, limits: RenderLimits) {
    this.#bytes = bytes;
    this.#limits = limits;
  }

  /** Pages are rendered one at a time (the generator awaits each), so one output name suffices. */
  async render(page: number, dpi: number): Promise<Uint8Array> {
    this.#dir ??= this.#writeFile();
    const dir = await this.#dir;
    if (renderEngine(process.env, this.#limits.pdftoppm) === 'builtin')
      return renderBuiltin(this.#limits, join(dir, 'scan.pdf'), page, dpi);
    const out = join(dir, 'page');
    try {
      await runPdftoppm(this.#limits, join(dir, 'scan.pdf'), page, dpi, out);
      // renderDpi bounds the size from the MediaBox; a page scaled by /UserUnit could still be
      // huge, so the file is checked before it is read (one byte per pixel, plus the header).
      const { size } = await stat(`${out}.tif`);
      const max = this.#limits.maxRenderPx ** 2 + (1 << 20);
      if (size > max) throw new Error(`rasterised page too large (${size} bytes; at most ${max})`);
      return await readFile(`${out}.tif`);
    } finally {
      await rm(`${out}.tif`, { force: true });
    }
  }

  async close(): Promise<void> {
    if (!this.#dir) return;
    const dir = await this.#dir.catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }

  // A file, not stdin: pdftoppm reads stdin whole for every call, once per page.
  async #writeFile(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'boxhub-scan-'));
    await writeFile(join(dir, 'scan.pdf'), this.#bytes, { mode: 0o600 });
    return dir;
  }
}

/** Without pdftoppm: the built-in engine (pdf.js on a worker thread, docs/printing.md "PDF
 *  engines") renders the page to PNG, within the same time limit and 512 MiB of memory. */
async function renderBuiltin(limits: RenderLimits, file: string, page: number, dpi: number): Promise<Uint8Array> {
  const r = await runBuiltin<Uint8Array[]>(
    {
      kind: 'render',
      path: file,
      dpi,
      firstPage: page,
      lastPage: page,
      maxPixels: limits.maxRenderPx ** 2,
      maxOutputBytes: limits.maxRenderPx ** 2 * 4,
    },
    {
      memoryBytes: 512 << 20,
      cpuSeconds: Math.ceil(limits.renderTimeoutMs / 1000),
      timeoutMs: limits.renderTimeoutMs,
      maxOutputBytes: limits.maxRenderPx ** 2 * 4,
    },
  );
  if (!r.ok)
    throw new Error(
      r.reason === 'timeout'
        ? `rendering the page took longer than ${limits.renderTimeoutMs} ms and was stopped`
        : `the PDF page cannot be rendered: ${r.message}`,
    );
  const png = r.value[0];
  if (!png) throw new Error(`the PDF has no page ${page}`);
  return png;
}

/**
 * One page as an uncompressed greyscale TIFF (OUT.tif): about ten times faster than pdftoppm's
 * PNG at 200 dpi, and sharp reads it directly. To a file, because libtiff cannot write a pipe.
 */
function runPdftoppm(limits: RenderLimits, file: string, page: number, dpi: number, out: string): Promise<void> {
  const args = [
    '-r',
    String(dpi),
    '-gray',
    '-tiff',
    '-tiffcompression',
    'none',
    '-f',
    String(page),
    '-l',
    String(page),
    '-singlefile',
    file,
    out,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      limits.pdftoppm,
      args,
      { encoding: 'buffer', maxBuffer: 1 << 20, timeout: limits.renderTimeoutMs },
      (err, _stdout, stderr) => {
        if (err) reject(new Error(pdftoppmError(err, stderr, limits)));
        else resolve();
      },
    );
  });
}

function pdftoppmError(err: ExecFileException, stderr: Buffer, limits: RenderLimits): string {
  if (err.code === 'ENOENT')
    return `this PDF page is not a single JPEG and must be rasterised, but ${limits.pdftoppm} was not found: install poppler-utils`;
  if (err.killed) return `pdftoppm took longer than ${limits.renderTimeoutMs} ms and was stopped`;
  const line = stderr
    .toString('utf8')
    .split('\n')
    .find((l) => l.trim() !== '');
  return `pdftoppm failed: ${line ?? err.message}`;
}
