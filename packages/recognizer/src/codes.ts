// QR and Code128 through zxing-wasm. The .wasm is read from node_modules and handed over as
// wasmBinary: by default zxing-wasm fetches it from a CDN at run time, which fails offline.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { prepareZXingModule, readBarcodes, writeBarcode, type ReaderOptions } from 'zxing-wasm/full';
import type { GreyImage } from './grey-image.ts';

let ready: Promise<unknown> | undefined;

function ensureZxing(): Promise<unknown> {
  if (!ready) {
    const require = createRequire(import.meta.url);
    const bytes = readFileSync(require.resolve('zxing-wasm/full/zxing_full.wasm'));
    const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    ready = prepareZXingModule({ overrides: { wasmBinary }, fireImmediately: true });
  }
  return ready;
}

/** A module matrix, row-major, 1 = dark. */
export interface ModuleMatrix {
  cols: number;
  rows: number;
  data: Uint8Array;
}

async function write(content: string, format: 'QRCode' | 'Code128', ecLevel?: string): Promise<ModuleMatrix> {
  await ensureZxing();
  const opts = { format, ...(ecLevel ? { ecLevel } : {}) } as Parameters<typeof writeBarcode>[1];
  const r = await writeBarcode(content, opts);
  if (r.error) throw new Error(`cannot encode ${format}: ${r.error}`);
  const { width, height, data } = r.symbol;
  const out = new Uint8Array(width * height);
  for (let i = 0; i < out.length; i++) out[i] = data[i] === 0 ? 1 : 0;
  return { cols: width, rows: height, data: out };
}

/** QR with error correction M: room for the application's content, robust to pen marks. */
export function encodeQr(content: string): Promise<ModuleMatrix> {
  return write(content, 'QRCode', 'M');
}

/** Code128 bars as one row of modules. */
export async function encodeCode128(content: string): Promise<ModuleMatrix> {
  const m = await write(content, 'Code128');
  return { cols: m.cols, rows: 1, data: m.data.subarray(0, m.cols) };
}

type ReadInput = Parameters<typeof readBarcodes>[0];

/** zxing-wasm takes browser ImageData; an RGBA object of the same shape is what it reads. */
function toImageData(img: GreyImage): ReadInput {
  const rgba = new Uint8ClampedArray(img.width * img.height * 4);
  const g = img.data;
  for (let i = 0, j = 0; i < g.length; i++, j += 4) {
    rgba[j] = rgba[j + 1] = rgba[j + 2] = g[i]!;
    rgba[j + 3] = 255;
  }
  return { data: rgba, width: img.width, height: img.height, colorSpace: 'srgb' } as unknown as ReadInput;
}

export async function readCode(img: GreyImage, format: 'QRCode' | 'Code128', harder = false): Promise<string | null> {
  await ensureZxing();
  const opts: ReaderOptions = {
    formats: [format],
    tryHarder: harder,
    tryRotate: harder,
    tryInvert: false,
    tryDownscale: true,
    maxNumberOfSymbols: 1,
  };
  const res = await readBarcodes(toImageData(img), opts);
  const hit = res.find((r) => r.isValid && r.text.length > 0);
  return hit ? hit.text : null;
}
