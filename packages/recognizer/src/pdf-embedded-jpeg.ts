// The embedded JPEG of a scanned PDF page, taken byte for byte (docs/cards.md, "Scanned files"):
// scanPages' fast path for PDF pages, which needs no decoding and no poppler.
//
// No library at hand extracts a page's embedded image: pdf-lib writes and edits PDFs and
// exposes objects and streams but does not interpret content streams; poppler's pdfimages
// lists a page's images but not how they are placed, and this fast path should not need
// poppler at all. So this walks just far enough, on pdf-lib's objects: the page's
// content stream operators (to see that it draws exactly one image, upright) and that
// image's dictionary (to see that its stream is a plain JPEG). Anything else is rasterised.
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream, PDFRef, decodePDFRawStream, type PDFPage } from 'pdf-lib';

/** Bound on a page's decoded content stream read here; scanners write a few dozen bytes. */
const MAX_CONTENT_BYTES = 1 << 20;

/**
 * The page's JPEG when the page is exactly one upright DCT image, else undefined. A damaged
 * object may make it throw; the caller then leaves the page to pdftoppm.
 */
export function embeddedJpeg(page: PDFPage): Uint8Array | undefined {
  if (((page.getRotation().angle % 360) + 360) % 360 !== 0) return undefined; // the JPEG is unrotated
  const content = pageContent(page);
  if (!content) return undefined;
  const name = singleUprightImage(content);
  if (!name) return undefined;
  const xobjects = page.node.Resources()?.lookup(PDFName.of('XObject'));
  if (!(xobjects instanceof PDFDict)) return undefined;
  const image = xobjects.lookup(PDFName.of(name));
  return image instanceof PDFRawStream ? plainJpeg(image) : undefined;
}

/** The page's content streams, decoded and joined, or undefined if too large or undecodable. */
function pageContent(page: PDFPage): Uint8Array | undefined {
  const contents = page.node.Contents();
  const streams =
    contents instanceof PDFArray
      ? contents.asArray().map((o) => (o instanceof PDFRef ? page.doc.context.lookup(o) : o))
      : [contents];
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const s of streams) {
    if (!(s instanceof PDFRawStream)) return undefined;
    let data: Uint8Array | Uint8ClampedArray;
    try {
      data = decodePDFRawStream(s).getBytes(MAX_CONTENT_BYTES + 1);
    } catch {
      return undefined;
    }
    total += data.length + 1;
    if (total > MAX_CONTENT_BYTES) return undefined;
    parts.push(new Uint8Array(data.buffer, data.byteOffset, data.length), new Uint8Array([0x0a])); // streams of an array are joined as if by whitespace
  }
  return Buffer.concat(parts);
}

/** The image XObject's stream is a JPEG that decodes to what the page shows. */
function plainJpeg(image: PDFRawStream): Uint8Array | undefined {
  const d = image.dict;
  if (d.lookup(PDFName.of('Subtype')) !== PDFName.of('Image')) return undefined;
  const filter = d.lookup(PDFName.of('Filter'));
  const dct =
    filter === PDFName.of('DCTDecode') ||
    (filter instanceof PDFArray && filter.size() === 1 && filter.lookup(0) === PDFName.of('DCTDecode'));
  if (!dct) return undefined;
  // These change what is shown relative to the JPEG's own pixels (inverted or remapped values,
  // masks, a colour transform override); such pages are rendered instead.
  for (const key of ['Decode', 'DecodeParms', 'SMask', 'Mask', 'ImageMask'])
    if (d.has(PDFName.of(key))) return undefined;
  if (!greyOrRgb(d.lookup(PDFName.of('ColorSpace')))) return undefined;
  const jpeg = image.contents;
  return jpeg.length > 3 && jpeg[0] === 0xff && jpeg[1] === 0xd8 && jpeg[2] === 0xff ? jpeg : undefined;
}

/** CMYK JPEGs in PDFs are often stored inverted (Adobe); indexed and separation spaces remap. */
function greyOrRgb(cs: unknown): boolean {
  if (cs instanceof PDFName) return cs === PDFName.of('DeviceGray') || cs === PDFName.of('DeviceRGB');
  if (!(cs instanceof PDFArray) || cs.size() < 2) return false;
  const family = cs.lookup(0);
  if (family === PDFName.of('CalGray') || family === PDFName.of('CalRGB')) return true;
  if (family !== PDFName.of('ICCBased')) return false;
  const icc = cs.lookup(1);
  const n = icc instanceof PDFRawStream ? icc.dict.lookup(PDFName.of('N')) : undefined;
  return n instanceof PDFNumber && (n.asNumber() === 1 || n.asNumber() === 3);
}

type Matrix = [number, number, number, number, number, number];

/**
 * The XObject name when the content draws exactly one XObject, with a matrix that keeps it
 * upright and unmirrored, and paints nothing else (no paths, shadings or inline images).
 * Text is allowed: scanners' "searchable PDF" adds an invisible OCR text layer.
 */
function singleUprightImage(content: Uint8Array): string | undefined {
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const saved: Matrix[] = [];
  let drawn: string | undefined;
  let operands: Array<number | string | null> = [];
  for (const t of contentTokens(content)) {
    if (t.kind !== 'op') {
      operands.push(t.value);
      continue;
    }
    switch (t.value) {
      case 'q':
        saved.push(ctm);
        break;
      case 'Q':
        ctm = saved.pop() ?? ctm;
        break;
      case 'cm': {
        const m = operands.slice(-6);
        if (m.length !== 6 || !m.every((x) => typeof x === 'number')) return undefined;
        ctm = multiply(m as Matrix, ctm);
        break;
      }
      case 'Do': {
        const name = operands[operands.length - 1];
        if (drawn !== undefined || typeof name !== 'string' || !upright(ctm)) return undefined;
        drawn = name;
        break;
      }
      case 'S':
      case 's':
      case 'f':
      case 'F':
      case 'f*':
      case 'B':
      case 'B*':
      case 'b':
      case 'b*':
      case 'sh':
      case 'BI':
        return undefined;
      default:
        break;
    }
    operands = [];
  }
  return drawn;
}

/** m × n for PDF's row-vector matrices [a b c d e f] (the new CTM is cm × CTM). */
function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2],
    m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2],
    m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4],
    m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

/** Scaled and moved only: the image's unit square maps to the page without turning or flipping. */
function upright(m: Matrix): boolean {
  const eps = 1e-6 * (Math.abs(m[0]) + Math.abs(m[3]));
  return m[0] > 0 && m[3] > 0 && Math.abs(m[1]) <= eps && Math.abs(m[2]) <= eps;
}

type Token = { kind: 'op'; value: string } | { kind: 'operand'; value: number | string | null };

const WHITE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIM = new Set([...'()<>[]{}/%'].map((c) => c.charCodeAt(0)));

/**
 * The tokens of a content stream (ISO 32000-1, 7.2 and 7.8.2), as far as singleUprightImage
 * needs them: numbers and names as values, strings, arrays and dictionaries as null operands,
 * everything else as operators. An inline image (BI) ends the walk, as its data is binary.
 */
function* contentTokens(s: Uint8Array): Generator<Token> {
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (WHITE.has(c)) {
      i++;
      continue;
    }
    if (c === 0x25) {
      while (i < s.length && s[i] !== 0x0a && s[i] !== 0x0d) i++;
      continue;
    } // % comment
    if (c === 0x28) {
      i = skipLiteralString(s, i);
      yield { kind: 'operand', value: null };
      continue;
    }
    if (c === 0x3c && s[i + 1] === 0x3c) {
      i += 2;
      yield { kind: 'operand', value: null };
      continue;
    } // <<
    if (c === 0x3e && s[i + 1] === 0x3e) {
      i += 2;
      yield { kind: 'operand', value: null };
      continue;
    } // >>
    if (c === 0x3c) {
      while (i < s.length && s[i] !== 0x3e) i++;
      i++;
      yield { kind: 'operand', value: null };
      continue;
    } // <hex>
    if (c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x29 || c === 0x3e) {
      i++;
      yield { kind: 'operand', value: null };
      continue;
    }
    const start = c === 0x2f ? i + 1 : i;
    let j = start;
    while (j < s.length && !WHITE.has(s[j]!) && !DELIM.has(s[j]!)) j++;
    const word = latin1(s.subarray(start, j));
    i = Math.max(j, i + 1);
    if (c === 0x2f) yield { kind: 'operand', value: decodeName(word) };
    else if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) yield { kind: 'operand', value: Number(word) };
    else if (word === 'true' || word === 'false' || word === 'null') yield { kind: 'operand', value: null };
    else {
      yield { kind: 'op', value: word };
      if (word === 'BI') return;
    }
  }
}

/** Index after a literal string starting at i: balanced parentheses, backslash escapes. */
function skipLiteralString(s: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === 0x5c) i++;
    else if (c === 0x28) depth++;
    else if (c === 0x29 && --depth === 0) return i + 1;
  }
  return i;
}

/** Names may escape bytes as #xx (ISO 32000-1, 7.3.5). */
function decodeName(raw: string): string {
  return raw.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
