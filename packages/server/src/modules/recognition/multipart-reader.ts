// Reads a multipart/form-data body part by part, in order, as an async iterator, keeping each
// field's text exactly as sent (the direct-transfer signature covers the manifest's bytes;
// @fastify/multipart would hand a JSON field over already parsed). Limits are busboy's: a part
// past them ends the iteration with a PartLimitError.
import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

export type Part =
  | { type: 'field'; name: string; value: string; truncated: boolean; mimeType: string }
  | { type: 'file'; name: string; mimeType: string; stream: BusboyFileStream };

export class PartLimitError extends Error {}

export interface PartLimits {
  fieldSize: number;
  fields: number;
  files: number;
  fileSize: number;
  parts: number;
}

/** Collects a file part; rejects with PartLimitError when it is over the file size limit. */
export async function readFile(p: Extract<Part, { type: 'file' }>, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of p.stream) chunks.push(c as Buffer);
  if (p.stream.truncated) throw new PartLimitError(`part ${p.name} is larger than the ${max} bytes accepted`);
  return Buffer.concat(chunks);
}

export async function* readParts(
  body: Readable,
  headers: IncomingHttpHeaders,
  limits: PartLimits,
): AsyncGenerator<Part> {
  const bb = Busboy({
    headers: headers as IncomingHttpHeaders & { 'content-type': string },
    limits: { ...limits, headerPairs: 100 },
  });
  const queue: Array<Part | Error | null> = [];
  let wake: (() => void) | undefined;
  const push = (x: Part | Error | null) => {
    queue.push(x);
    wake?.();
    wake = undefined;
  };
  bb.on('field', (name: string, value: string, _nt: boolean, truncated: boolean, _enc: string, mimeType: string) =>
    push({ type: 'field', name, value, truncated, mimeType }),
  );
  bb.on('file', (name: string, stream: BusboyFileStream, _fn: string, _enc: string, mimeType: string) =>
    push({ type: 'file', name, mimeType, stream }),
  );
  bb.on('partsLimit', () => push(new PartLimitError(`more than ${limits.parts} parts`)));
  bb.on('filesLimit', () => push(new PartLimitError(`more than ${limits.files} image parts`)));
  bb.on('fieldsLimit', () => push(new PartLimitError(`more than ${limits.fields} non-file parts`)));
  bb.on('error', (e: unknown) => push(e instanceof Error ? e : new Error(String(e))));
  bb.on('finish', () => push(null));
  body.on('error', (e) => push(e));
  body.pipe(bb);
  try {
    for (;;) {
      while (queue.length === 0)
        await new Promise<void>((r) => {
          wake = r;
        });
      const x = queue.shift()!;
      if (x === null) return;
      if (x instanceof Error) throw x;
      yield x;
    }
  } finally {
    body.unpipe(bb);
  }
}
