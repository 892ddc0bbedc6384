// Test support: a generated corpus of hostile and broken documents, shared by the server's print
// document check tests and the box's document preparation tests, and by the print benches
// (docs/printing.md, "Document checks and limits", lists the kinds). Each is built byte by byte
// here, so the tests need no fixtures and every case says what it is. In src/testing/: not built,
// not packed, not used by any service.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';

type Part = string | Buffer;

/** A PDF from numbered objects with a classic cross-reference table. */
export function pdfOf(objects: Record<number, Part | Part[]>, trailer = '/Root 1 0 R'): Buffer {
  const parts: Buffer[] = [];
  let len = 0;
  const push = (p: Part) => {
    const b = typeof p === 'string' ? Buffer.from(p, 'latin1') : p;
    parts.push(b);
    len += b.length;
  };
  push('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  const ids = Object.keys(objects)
    .map(Number)
    .sort((a, b) => a - b);
  const size = (ids.at(-1) ?? 0) + 1;
  const offsets = new Map<number, number>();
  for (const id of ids) {
    offsets.set(id, len);
    push(`${id} 0 obj\n`);
    for (const p of ([] as Part[]).concat(objects[id]!)) push(p);
    push('\nendobj\n');
  }
  const xref = len;
  push(`xref\n0 ${size}\n0000000000 65535 f \n`);
  for (let id = 1; id < size; id++) {
    const o = offsets.get(id);
    push(o === undefined ? '0000000000 65535 f \n' : `${String(o).padStart(10, '0')} 00000 n \n`);
  }
  push(`trailer\n<< /Size ${size} ${trailer} >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

const A4 = '[0 0 595.28 841.89]';

/** A valid PDF of `pages` pages of one size (default A4), each with a line of text. */
export function plainPdf(pages: number, box = A4): Buffer {
  const objects: Record<number, Part | Part[]> = {
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    3: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  };
  const kids: string[] = [];
  for (let i = 0; i < pages; i++) {
    const page = 4 + i * 2;
    const text = `BT /F1 24 Tf 72 720 Td (page ${i + 1}) Tj ET`;
    objects[page] =
      `<< /Type /Page /Parent 2 0 R /MediaBox ${box} /Resources << /Font << /F1 3 0 R >> >> /Contents ${page + 1} 0 R >>`;
    objects[page + 1] = `<< /Length ${text.length} >>\nstream\n${text}\nendstream`;
    kids.push(`${page} 0 R`);
  }
  objects[2] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`;
  return pdfOf(objects);
}

/**
 * A zlib stream that inflates to `inflated` bytes: `prefix`, then zeros. Built without
 * compressing the zeros: each 1 MiB is a full-flush block (byte-aligned, independent of what
 * came before), so one compressed block of zeros is repeated; then the final empty block and the
 * Adler-32 (RFC 1950 §8: zeros leave a alone and add a to b each).
 */
export function zeroBomb(inflated: number, prefix: Buffer = Buffer.alloc(0)): Buffer {
  const chunk = 1 << 20;
  if (inflated % chunk !== 0 || prefix.length > chunk)
    throw new RangeError('a whole number of MiB, the prefix within the first');
  const first = Buffer.alloc(chunk);
  prefix.copy(first);
  const flush = { level: 9, finishFlush: 3 /* Z_FULL_FLUSH */ };
  const head = deflateSync(first, flush);
  const zeros = deflateSync(Buffer.alloc(chunk), flush).subarray(2); // without the zlib header
  let a = 1;
  let b = 0;
  for (const byte of prefix) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  b = (b + (inflated - prefix.length) * a) % 65521;
  const adler = Buffer.from([(b >>> 8) & 255, b & 255, (a >>> 8) & 255, a & 255]);
  return Buffer.concat([head, ...Array<Buffer>(inflated / chunk - 1).fill(zeros), Buffer.from([0x03, 0x00]), adler]);
}

/** One A4 page whose content stream inflates to `inflated` bytes. */
export function contentBomb(inflated: number): Buffer {
  const z = zeroBomb(inflated);
  return pdfOf({
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    3: `<< /Type /Page /Parent 2 0 R /MediaBox ${A4} /Contents 4 0 R >>`,
    4: [`<< /Length ${z.length} /Filter /FlateDecode >>\nstream\n`, z, '\nendstream'],
  });
}

/** One A4 page whose page object sits in an object stream that inflates to `inflated` bytes,
 *  found through a cross-reference stream: no reader gets the page without inflating it. */
export function objectStreamBomb(inflated: number): Buffer {
  // The stream: its header and the page, then NUL bytes (white space in PDF, ISO 32000 §7.2.2).
  const z = zeroBomb(inflated, Buffer.from(`3 0 << /Type /Page /Parent 2 0 R /MediaBox ${A4} >>`, 'latin1'));
  const parts: Buffer[] = [];
  const at: number[] = [];
  let len = 0;
  const push = (p: Part) => {
    const x = typeof p === 'string' ? Buffer.from(p, 'latin1') : p;
    parts.push(x);
    len += x.length;
  };
  push('%PDF-1.7\n');
  at[1] = len;
  push('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  at[2] = len;
  push('2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n');
  at[4] = len;
  push(`4 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${z.length} >>\nstream\n`);
  push(z);
  push('\nendstream\nendobj\n');
  at[5] = len;
  const row = (t: number, a: number, b: number) =>
    Buffer.from([t, (a >>> 24) & 255, (a >>> 16) & 255, (a >>> 8) & 255, a & 255, (b >>> 8) & 255, b & 255]);
  const rows = Buffer.concat([
    row(0, 0, 65535),
    row(1, at[1]!, 0),
    row(1, at[2]!, 0),
    row(2, 4, 0),
    row(1, at[4]!, 0),
    row(1, at[5]!, 0),
  ]);
  push(`5 0 obj\n<< /Type /XRef /Size 6 /W [1 4 2] /Root 1 0 R /Length ${rows.length} >>\nstream\n`);
  push(rows);
  push('\nendstream\nendobj\n');
  push(`startxref\n${at[5]}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/** The page tree points back at itself: Pages → Pages(2) → Pages(1). */
export function cyclicPageTree(): Buffer {
  return pdfOf({
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    2: '<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>',
    3: `<< /Type /Page /Parent 2 0 R /MediaBox ${A4} >>`,
    4: '<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>',
  });
}

/** /Count says a billion pages; there is one. */
export function absurdCount(): Buffer {
  return pdfOf({
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    2: '<< /Type /Pages /Kids [3 0 R] /Count 1000000000 >>',
    3: `<< /Type /Page /Parent 2 0 R /MediaBox ${A4} >>`,
  });
}

/** A page tree `depth` levels deep with one page at the bottom. */
export function deepPageTree(depth: number): Buffer {
  const objects: Record<number, Part | Part[]> = { 1: '<< /Type /Catalog /Pages 2 0 R >>' };
  for (let i = 0; i < depth; i++) {
    const id = 2 + i;
    objects[id] =
      `<< /Type /Pages ${i ? `/Parent ${id - 1} 0 R ` : ''}/Kids [${id + 1} 0 R] /Count 1 ${i === 0 ? `/MediaBox ${A4}` : ''}>>`;
  }
  objects[2 + depth] = `<< /Type /Page /Parent ${1 + depth} 0 R >>`;
  return pdfOf(objects);
}

export function mediaBox(box: string): Buffer {
  return pdfOf({
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    3: `<< /Type /Page /Parent 2 0 R /MediaBox ${box} >>`,
  });
}

export function noMediaBox(): Buffer {
  return pdfOf({
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    3: '<< /Type /Page /Parent 2 0 R >>',
  });
}

export function noPages(): Buffer {
  return pdfOf({ 1: '<< /Type /Catalog /Pages 2 0 R >>', 2: '<< /Type /Pages /Kids [] /Count 0 >>' });
}

/** An object made of `depth` nested arrays. */
export function nestedArrays(depth: number): Buffer {
  return pdfOf({
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    3: [`<< /Type /Page /Parent 2 0 R /MediaBox ${A4} /X `, '['.repeat(depth), ']'.repeat(depth), ' >>'],
  });
}

/** The trailer's /Prev points at its own cross-reference table. */
export function xrefLoop(): Buffer {
  const good = plainPdf(1).toString('latin1');
  const xref = /startxref\n(\d+)/.exec(good)![1]!;
  return Buffer.from(good.replace('/Root 1 0 R', `/Root 1 0 R /Prev ${xref}`), 'latin1');
}

/** An AES-256 encrypted copy made by qpdf: with a user password, or only an owner password. */
export function encrypted(userPassword: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-enc-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), plainPdf(1));
    execFileSync('qpdf', [
      '--encrypt',
      userPassword,
      'owner-secret',
      '256',
      '--',
      join(dir, 'in.pdf'),
      join(dir, 'out.pdf'),
    ]);
    return readFileSync(join(dir, 'out.pdf'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A minimal baseline JPEG header of any declared size (SOI, SOF0, SOS, a little data, EOI). */
export function jpegOf(width: number, height: number, o: { eoi?: boolean } = {}): Buffer {
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    0x03,
    0x01,
    0x22,
    0x00,
    0x02,
    0x11,
    0x01,
    0x03,
    0x11,
    0x01,
  ]);
  const sos = Buffer.from([0xff, 0xda, 0x00, 0x0c, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3f, 0x00]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    sof,
    sos,
    Buffer.alloc(64, 0x55),
    ...(o.eoi === false ? [] : [Buffer.from([0xff, 0xd9])]),
  ]);
}
