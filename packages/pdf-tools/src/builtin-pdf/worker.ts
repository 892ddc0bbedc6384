// The built-in PDF engine's worker thread (run.ts starts one per task, with a heap limit and a
// clock): what qpdf and pdftoppm do for boxhub, with pdf-lib (structure, page rearranging) and
// pdf.js + @napi-rs/canvas (rendering), all from the npm registry (docs/printing.md, "PDF
// engines"). Every task first passes the Flate guard (flate-guard.ts), so no library inflates a
// stream past the memory limit.
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import {
  PDFArray,
  PDFBool,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  PDFRef,
  PDFStream,
  PDFString,
  type PDFObject,
} from 'pdf-lib';
import { checkFlateStreams } from './flate-guard.ts';
import type { BuiltinTask, InspectResult, Json } from './tasks.ts';

const task = workerData as BuiltinTask;
const port = parentPort;
if (!port) throw new Error('builtin-pdf/worker.ts runs in a worker thread (run.ts starts it)');

async function bytesOf(path: string, maxInflate: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(await readFile(path));
  checkFlateStreams(bytes, maxInflate);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// inspect: the page list, encryption and each page's box dictionaries, in the shape of
// `qpdf --json=2` (pages[].object, qpdf[1]["obj:N G R"].value), so the server's page-size check
// reads either engine's answer the same way.

const refText = (r: PDFRef) => `${r.objectNumber} ${r.generationNumber} R`;

function toJson(o: PDFObject | undefined, depth = 0): Json {
  if (o === undefined || o === PDFNull || depth > 8) return null;
  if (o instanceof PDFRef) return refText(o);
  if (o instanceof PDFNumber) return o.asNumber();
  if (o instanceof PDFName) return o.asString();
  if (o instanceof PDFBool) return o.asBoolean();
  if (o instanceof PDFString || o instanceof PDFHexString) return `u:${o.decodeText()}`;
  if (o instanceof PDFArray)
    return o
      .asArray()
      .slice(0, 64)
      .map((x) => toJson(x, depth + 1));
  if (o instanceof PDFDict) {
    const out: Record<string, Json> = {};
    // Only what the page-size check reads: the boxes, the unit and the way up the tree.
    for (const key of ['/Type', '/MediaBox', '/CropBox', '/UserUnit', '/Parent']) {
      const v = o.get(PDFName.of(key.slice(1)));
      if (v !== undefined) out[key] = toJson(v, depth + 1);
    }
    return out;
  }
  return null;
}

async function inspect(t: Extract<BuiltinTask, { kind: 'inspect' }>): Promise<InspectResult> {
  const doc = await PDFDocument.load(await bytesOf(t.path, t.maxInflateBytes), {
    ignoreEncryption: true,
    updateMetadata: false,
    throwOnInvalidObject: true,
  });
  if (doc.isEncrypted) return { encrypted: true, pages: [], objects: {} };
  const objects: Record<string, { value: Json }> = {};
  const add = (ref: PDFRef, hops = 0): void => {
    const key = `obj:${refText(ref)}`;
    if (objects[key] || hops > 1000) return;
    const o = doc.context.lookup(ref);
    const value = toJson(o instanceof PDFStream ? o.dict : o);
    objects[key] = { value };
    // The objects the kept values point at: the boxes' numbers, the parent chain.
    if (o instanceof PDFDict) {
      for (const k of ['MediaBox', 'CropBox', 'UserUnit', 'Parent']) {
        const v = o.get(PDFName.of(k));
        if (v instanceof PDFRef) add(v, hops + 1);
        if (v instanceof PDFArray) for (const x of v.asArray()) if (x instanceof PDFRef) add(x, hops + 1);
      }
    }
  };
  const pages = doc.getPages().map((p) => {
    add(p.ref);
    return { object: refText(p.ref) };
  });
  return { encrypted: false, pages, objects };
}

// ---------------------------------------------------------------------------------------------
// build: the pages of `source` in `sequence` order ('blank' = the blank file's page), as
// `qpdf --empty --pages …` does; each occurrence is its own page object, as qpdf makes them.

async function build(t: Extract<BuiltinTask, { kind: 'build' }>): Promise<void> {
  const src = await PDFDocument.load(await bytesOf(t.source, t.maxInflateBytes), { updateMetadata: false });
  const blank = t.blank ? await PDFDocument.load(await readFile(t.blank)) : undefined;
  const out = await PDFDocument.create({ updateMetadata: false });
  for (const item of t.sequence) {
    if (item === 'blank') {
      if (!blank) throw new Error('a blank page is needed but none was made');
      const [p] = await out.copyPages(blank, [0]);
      out.addPage(p);
    } else {
      const [p] = await out.copyPages(src, [item - 1]);
      out.addPage(p);
    }
  }
  await writeFile(t.out, await out.save());
}

// ---------------------------------------------------------------------------------------------
// render: pages as PNG at `dpi` with pdf.js drawing on @napi-rs/canvas (the canvas package pdf.js
// itself loads, so both speak the same Path2D).

async function render(t: Extract<BuiltinTask, { kind: 'render' }>): Promise<Uint8Array[]> {
  const bytes = await bytesOf(t.path, t.maxInflateBytes);
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const require = createRequire(import.meta.url);
  const pdfjsDir = require.resolve('pdfjs-dist/package.json').replace(/package\.json$/, '');
  const { createCanvas } = createRequire(`${pdfjsDir}package.json`)(
    '@napi-rs/canvas',
  ) as typeof import('@napi-rs/canvas');
  const doc = await pdfjs.getDocument({
    data: bytes,
    standardFontDataUrl: `${pdfjsDir}standard_fonts/`,
    cMapUrl: `${pdfjsDir}cmaps/`,
    cMapPacked: true,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
  try {
    const out: Uint8Array[] = [];
    let total = 0;
    const last = Math.min(doc.numPages, t.lastPage ?? doc.numPages);
    for (let n = t.firstPage ?? 1; n <= last; n++) {
      const page = await doc.getPage(n);
      const vp = page.getViewport({ scale: t.dpi / 72 });
      const [w, h] = [Math.max(1, Math.round(vp.width)), Math.max(1, Math.round(vp.height))];
      if (w * h > t.maxPixels)
        throw new Error(`page ${n} would be ${w} × ${h} pixels at ${t.dpi} dpi, over ${t.maxPixels}`);
      const canvas = createCanvas(w, h);
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, w, h);
      // The types name the DOM's canvas; @napi-rs/canvas is the same API in Node (the one pdf.js loads).
      type Params = Parameters<typeof page.render>[0];
      await page.render({
        canvasContext: ctx as unknown as NonNullable<Params['canvasContext']>,
        viewport: vp,
        canvas: canvas as unknown as Params['canvas'],
      }).promise;
      page.cleanup();
      const png = await canvas.encode('png');
      total += png.length;
      if (total > t.maxOutputBytes) throw new Error(`the rendered pages are over ${t.maxOutputBytes >> 20} MiB`);
      if (t.outPrefix) await writeFile(`${t.outPrefix}-${n}.png`, png);
      else out.push(new Uint8Array(png.buffer, png.byteOffset, png.byteLength));
    }
    return out;
  } finally {
    await doc.destroy();
  }
}

async function main(): Promise<unknown> {
  switch (task.kind) {
    case 'inspect':
      return inspect(task);
    case 'build':
      return build(task);
    case 'render':
      return render(task);
  }
}

main().then(
  (value) => {
    const transfer = Array.isArray(value)
      ? value.flatMap((v) => (v instanceof Uint8Array && v.buffer instanceof ArrayBuffer ? [v.buffer] : []))
      : [];
    port.postMessage({ ok: true, value }, transfer);
  },
  (e: unknown) => {
    const thrown = typeof e === 'object' && e !== null ? e : {};
    port.postMessage({
      ok: false,
      name: ('name' in thrown ? thrown.name : undefined) ?? 'Error',
      message: ('message' in thrown ? thrown.message : undefined) ?? String(e),
    });
  },
);
