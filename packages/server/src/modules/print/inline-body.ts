// The body of POST /api/print/create, read so that a file sent inline costs its body's size in
// memory once (docs/configuration.md "Document and image work"). Read the usual way, a 64 MiB
// body was held four times at once: its chunks, the body as one string, `file_content` as
// another string and the decoded file. Here:
//
// - a body of LARGE_BODY_BYTES or more first waits for a slot of the node-wide work gate
//   (work-gate.ts), before any of it is read, and keeps it through its document check (which so
//   takes no second slot) until the file is stored or the request ends;
// - the body is read into one buffer of its Content-Length (a chunked body, without one, waits
//   for its slot once LARGE_BODY_BYTES have come, and its chunks are joined once at the end);
// - `file_content`'s string is found in the bytes and replaced by a placeholder before the rest
//   is parsed as JSON, and the service decodes the Base64 in place, inside that same buffer (the
//   decoded bytes are shorter than the text, so writing never overtakes reading).
//
// Anything unusual (a string with \u escapes or non-ASCII characters, the key twice or nested
// only, a syntax error anywhere) goes the ordinary way: the whole body parsed as a string and
// file_content decoded by decodeBase64, so every answer, message and code stays what it was.
import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { parseJsonText } from '../../http/json-body.ts';
import { REQUEST_TIMEOUT_MS } from '../../http/edge.ts';
import { LARGE_BODY_BYTES } from '../../http/release-memory.ts';
import type { Lease, WorkGate } from '../../work-gate.ts';
import { base64TooLarge, decodeBase64, notBase64 } from './fetch-file.ts';

/** What stands in for file_content in the parsed body when the file is decoded in place. */
export const INLINE_PLACEHOLDER = 'AAAA';
const PLACEHOLDER = INLINE_PLACEHOLDER;
/** A large body waits this long for its slot at most: the whole request must arrive within
 *  REQUEST_TIMEOUT_MS, and the rest is left for sending it. */
export const BODY_WAIT_MS = REQUEST_TIMEOUT_MS / 2;

/** The print create's request body beyond its parsed JSON: the work slot it holds and the file
 *  still in the request's bytes. */
export class HeldBody {
  lease: Lease | undefined;
  /** Waits for the slot (set by waitForSlot). */
  takeSlot: (() => Promise<void>) | undefined;
  private file:
    | { buf: Buffer; start: number; end: number; chars: number; valid: boolean; plain?: boolean; decoded?: boolean }
    | undefined;

  /** Takes file_content out of `buf` (start..end: its characters between the quotes); false
   *  when it has anything that needs the ordinary decoding. */
  hold(buf: Buffer, start: number, end: number): boolean {
    // An empty string is the schema's to refuse (minLength), which the placeholder would pass.
    const s = end > start ? scanBase64(buf, start, end) : undefined;
    if (!s) return false;
    this.file = { buf, start, end, ...s };
    return true;
  }

  /** A file that came as it is (the console's form): create takes it with file_content
   *  `INLINE_PLACEHOLDER`, without a Base64 copy of it. */
  holdFile(file: Buffer): void {
    this.file = { buf: file, start: 0, end: file.length, chars: 0, valid: true, decoded: true };
  }

  /** file_content goes the ordinary way after all. */
  drop(): void {
    this.file = undefined;
  }

  /** The file's bytes: decodeBase64(file_content) without copying the text. Errors as decodeBase64's. */
  decode(fileContent: string, maxBytes: number): Buffer {
    const f = this.file;
    if (!f || fileContent !== PLACEHOLDER) return decodeBase64(fileContent, maxBytes);
    this.file = undefined;
    if (f.decoded) return f.buf;
    if (!f.valid) throw notBase64();
    if ((f.chars / 4) * 3 > maxBytes + 2) throw base64TooLarge(maxBytes);
    return decodeInPlace(f.buf, f.start, f.end, f.plain);
  }

  /** The slot and the request's bytes go (the file is stored, or the request is over). */
  release(): void {
    this.file = undefined;
    const l = this.lease;
    this.lease = undefined;
    l?.release();
  }
}

const bodies = new WeakMap<object, HeldBody>();
const requests = new WeakMap<FastifyRequest, HeldBody>();
/** The HeldBody of a parsed print create body. */
export function heldBody(body: unknown): HeldBody | undefined {
  return typeof body === 'object' && body !== null ? bodies.get(body) : undefined;
}

/**
 * The print create route's preParsing hook: a body of LARGE_BODY_BYTES or more waits for its
 * work slot before any of it is read (10429 past the queue or after BODY_WAIT_MS). The slot goes
 * back when the file is stored, or at the latest when the answer is sent or the client goes away.
 */
export function waitForSlot(gate: WorkGate) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const hold = new HeldBody();
    requests.set(req, hold);
    const gone = new AbortController();
    reply.raw.once('close', () => {
      gone.abort();
      hold.release();
    });
    hold.takeSlot = async () => {
      try {
        hold.lease = await gate.acquire('reading the request body', {
          maxWaitMs: Math.min(gate.s.maxWaitMs, BODY_WAIT_MS),
          signal: gone.signal,
        });
      } catch (e) {
        // The body is not read: the connection closes after the answer.
        reply.header('connection', 'close');
        throw e;
      }
      if (gone.signal.aborted) hold.release();
    };
    const declared = Number(req.headers['content-length']);
    if (declared >= LARGE_BODY_BYTES && declared <= (req.routeOptions.bodyLimit ?? Infinity)) await hold.takeSlot();
  };
}

/** The content-type parser of POST /api/print/create (the API's JSON types). */
export async function parsePrintBody(req: FastifyRequest, payload: Readable): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  const limit = req.routeOptions.bodyLimit ?? Infinity;
  if (declared > limit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  const hold = requests.get(req) ?? new HeldBody();
  const buf = await readBody(payload, declared, limit, hold.lease ? undefined : hold.takeSlot);
  const body = parseHeld(buf, hold);
  if (typeof body === 'object' && body !== null) bodies.set(body, hold);
  return body;
}

/** The body parsed, file_content held in `buf` where it can be. */
function parseHeld(buf: Buffer, hold: HeldBody): unknown {
  const span = findFileContent(buf);
  if (span && hold.hold(buf, span.start, span.end)) {
    try {
      const body = parseJsonText(
        buf.toString('utf8', 0, span.start) + PLACEHOLDER + buf.toString('utf8', span.end),
      ) as Record<string, unknown>;
      if (body.file_content === PLACEHOLDER) return body;
    } catch {
      /* the ordinary way below says what is wrong, in its own words */
    }
  }
  hold.drop();
  return parseJsonText(buf.toString('utf8'));
}

/** The body's bytes, in one buffer of its Content-Length; a chunked body of LARGE_BODY_BYTES
 *  waits for its slot (`whenLarge`) once that much has come. Errors as Fastify's own reader's. */
function readBody(
  payload: Readable,
  declared: number,
  limit: number,
  whenLarge: (() => Promise<void>) | undefined,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const known = Number.isFinite(declared) && declared >= 0;
    const buf = known ? Buffer.allocUnsafeSlow(declared) : undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let waiting = false;
    const stop = (err: Error) => {
      off();
      reject(err);
    };
    const off = () => {
      payload.off('data', onData);
      payload.off('end', onEnd);
      payload.off('error', onEnd);
    };
    function onData(chunk: Buffer | string) {
      const c = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (received + c.length > limit) {
        stop(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
        return;
      }
      if (buf) {
        if (received + c.length > buf.length) {
          stop(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
          return;
        }
        c.copy(buf, received);
      } else {
        chunks.push(c);
      }
      received += c.length;
      if (whenLarge && received >= LARGE_BODY_BYTES && !waiting) {
        waiting = true;
        payload.pause();
        whenLarge().then(() => {
          whenLarge = undefined;
          payload.resume();
        }, stop);
      }
    }
    function onEnd(err?: Error & { statusCode?: number }) {
      off();
      if (err) {
        if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
        reject(err);
        return;
      }
      if (known && received !== declared) {
        reject(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
        return;
      }
      resolve(buf ?? Buffer.concat(chunks, received));
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onEnd);
    payload.resume();
  });
}

const WS = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const skipWs = (b: Buffer, i: number) => {
  while (WS(b[i])) i++;
  return i;
};

/** Index of the quote closing the string whose characters start at `from` (-1: none). */
function stringEnd(b: Buffer, from: number): number {
  for (let j = from; ; ) {
    const q = b.indexOf(0x22, j);
    if (q < 0) return -1;
    let n = 0;
    for (let k = q - 1; k >= from && b[k] === 0x5c; k--) n++;
    if (n % 2 === 0) return q;
    j = q + 1;
  }
}

/** Past the value starting at i (an object, array, string or scalar); -1 when it does not end. */
function skipValue(b: Buffer, i: number): number {
  let depth = 0;
  for (;;) {
    const c = b[i];
    if (c === undefined) return -1;
    if (c === 0x22) {
      const e = stringEnd(b, i + 1);
      if (e < 0) return -1;
      i = e + 1;
      if (depth === 0) return i;
      continue;
    }
    if (depth === 0 && (c === 0x2c || c === 0x7d || WS(c))) return i;
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return i + 1;
    }
    i++;
  }
}

/** Where the top-level "file_content" string's characters are; undefined when it is not there
 *  exactly once as a string, or the body is not a plain object (the ordinary way decides). */
export function findFileContent(b: Buffer): { start: number; end: number } | undefined {
  let i = skipWs(b, 0);
  if (b[i] !== 0x7b) return undefined;
  i = skipWs(b, i + 1);
  let found: { start: number; end: number } | undefined;
  let twice = false;
  while (b[i] === 0x22) {
    const keyEnd = stringEnd(b, i + 1);
    if (keyEnd < 0) return undefined;
    const key = b.toString('latin1', i + 1, Math.min(keyEnd, i + 40));
    if (key.includes('\\')) return undefined; // an escaped key might spell file_content
    i = skipWs(b, keyEnd + 1);
    if (b[i] !== 0x3a) return undefined;
    i = skipWs(b, i + 1);
    if (key === 'file_content' && b[i] === 0x22) {
      const end = stringEnd(b, i + 1);
      if (end < 0) return undefined;
      twice ||= found !== undefined;
      found = { start: i + 1, end };
      i = end + 1;
    } else {
      if (key === 'file_content') twice = true;
      i = skipValue(b, i);
      if (i < 0) return undefined;
    }
    i = skipWs(b, i);
    if (b[i] === 0x2c) {
      i = skipWs(b, i + 1);
      continue;
    }
    break;
  }
  return twice ? undefined : found;
}

// Byte classes in a JSON string of Base64: 1 Base64 letter, 2 '=', 3 a space, 4 backslash,
// 5 any other printable ASCII character (valid JSON, not Base64); 0 anything else (a control
// character, which JSON refuses, or non-ASCII, which might be a Unicode space `\s` strips).
const CLASS = new Uint8Array(256);
const VALUE = new Uint8Array(256).fill(255);
for (let c = 0x21; c < 0x7f; c++) CLASS[c] = 5;
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((ch, v) => {
  CLASS[ch.charCodeAt(0)] = 1;
  VALUE[ch.charCodeAt(0)] = v;
});
CLASS[0x3d] = 2;
CLASS[0x20] = 3;
CLASS[0x5c] = 4;

/** Reads the string's characters as decodeBase64 would see them after JSON.parse: how many
 *  Base64 characters, and whether they are valid Base64; undefined when an escape or character
 *  needs the ordinary way (\u, \", \\, \b, non-ASCII). */
function scanBase64(
  b: Buffer,
  start: number,
  end: number,
): { chars: number; valid: boolean; plain?: boolean } | undefined {
  let chars = 0;
  let pad = 0;
  let bad = false;
  let plain = true;
  for (let i = start; i < end; i++) {
    const t = CLASS[b[i]!];
    if (t === 1) {
      if (pad) bad = true;
      chars++;
    } else if (t === 2) {
      pad++;
      chars++;
    } else if (t === 3) {
      plain = false; /* whitespace: skipped */
    } else if (t === 4) {
      plain = false;
      const e = b[++i];
      if (e === 0x2f) {
        if (pad) bad = true;
        chars++;
      } // \/ is /
      else if (e !== 0x6e && e !== 0x72 && e !== 0x74 && e !== 0x66) return undefined; // \n \r \t \f are whitespace
    } else if (t === 5) bad = true;
    else return undefined;
  }
  const valid = !bad && chars > 0 && chars % 4 === 0 && pad <= 2;
  return { chars, valid, plain: valid && plain };
}

/** Plain Base64 is decoded by Node in slices of this many characters (a multiple of 4): several
 *  times faster than the loop over the bytes here. */
const SLICE = 1 << 16;

/** Decodes valid Base64 (as scanBase64 found it) in place: the file is b[start .. returned end). */
function decodeInPlace(b: Buffer, start: number, end: number, plain = false): Buffer {
  if (plain) {
    // Each slice is read as a string (a copy) and written back at or before where it was read.
    let o = start;
    for (let i = start; i < end; i += SLICE)
      o += b.write(b.toString('latin1', i, Math.min(i + SLICE, end)), o, 'base64');
    return b.subarray(start, o);
  }
  let o = start;
  let acc = 0;
  let n = 0;
  for (let i = start; i < end; i++) {
    let c = b[i]!;
    if (c === 0x5c) {
      c = b[++i]!;
      if (c !== 0x2f) continue;
    }
    const v = VALUE[c]!;
    if (v === 255) {
      if (c === 0x3d) break;
      continue;
    }
    acc = (acc << 6) | v;
    if (++n === 4) {
      b[o++] = acc >> 16;
      b[o++] = (acc >> 8) & 255;
      b[o++] = acc & 255;
      acc = 0;
      n = 0;
    }
  }
  if (n === 2) b[o++] = (acc >> 4) & 255;
  else if (n === 3) {
    b[o++] = (acc >> 10) & 255;
    b[o++] = (acc >> 2) & 255;
  }
  return b.subarray(start, o);
}
