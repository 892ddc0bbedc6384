// The built-in PDF engine's stand-in for `qpdf --check`'s memory bound: before any PDF library
// parses the file, every Flate stream in it is inflated once with a hard output cap (zlib's
// maxOutputLength), so a compression bomb is refused before pdf-lib or pdf.js would inflate it
// without one (docs/printing.md, "PDF engines"). The stream bodies are found by their keywords,
// not through the cross-reference table, so a damaged table hides nothing.
import { inflateSync } from 'node:zlib';

export class InflateBombError extends Error {
  override readonly name = 'InflateBombError';
}

const STREAM = Buffer.from('stream');
const END = Buffer.from('endstream');
/** How far back from `stream` the stream's dictionary is looked for. */
const DICT_WINDOW = 4096;

/** Throws InflateBombError when a Flate stream inflates past `maxBytes`. Streams that do not
 *  inflate at all (damaged, or encrypted) are left to the parser, as readers leave them. */
export function checkFlateStreams(pdf: Uint8Array, maxBytes: number): number {
  const buf = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  let checked = 0;
  for (let at = buf.indexOf(STREAM); at >= 0; at = buf.indexOf(STREAM, at + STREAM.length)) {
    // `endstream` contains `stream`: skip it; a real `stream` keyword is followed by an EOL.
    if (at >= 3 && buf.subarray(at - 3, at).toString('latin1') === 'end') continue;
    let start = at + STREAM.length;
    if (buf[start] === 0x0d) start++;
    if (buf[start] !== 0x0a && buf[start - 1] !== 0x0d) continue;
    if (buf[start] === 0x0a) start++;
    const end = buf.indexOf(END, start);
    if (end < 0) break;
    const dict = buf.subarray(Math.max(0, at - DICT_WINDOW), at).toString('latin1');
    const open = dict.lastIndexOf('<<');
    if (open >= 0 && /\/(FlateDecode|Fl)\b/.test(dict.slice(open))) {
      try {
        inflateSync(buf.subarray(start, end), {
          maxOutputLength: maxBytes,
          finishFlush: 2 /* Z_SYNC_FLUSH: a stream cut short still counts */,
        });
        checked++;
      } catch (e) {
        if (e instanceof Error && 'code' in e && e.code === 'ERR_BUFFER_TOO_LARGE') {
          throw new InflateBombError(`a stream inflates to more than ${maxBytes >> 20} MiB (a compression bomb?)`);
        }
      }
    }
    at = end;
  }
  return checked;
}
