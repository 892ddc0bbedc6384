// Remote printing (docs/api.md, "Printing"; tag `print` in /openapi.json; docs/printing.md), with a
// helper to wait for a print to end and one to send a file from disk or memory.
import { sleep } from '../sleep.ts';
import { readFile } from 'node:fs/promises';
import type { Body, PostResult, Query } from '../api-types.ts';
import { WaitTimeoutError } from '../helpers-errors.ts';
import type { CallOptions, Transport } from '../transport.ts';

export type PrintInfo = PostResult<'/api/print/info'>;
type CreateOptions = NonNullable<Body<'/api/print/create'>['options']>;

export class Print {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** The printer's capability tree (30301 no printer, 30302 a printer the box cannot drive). */
  capability(query: Query<'/api/print/capability'>, o?: CallOptions) {
    return this.#t.get('/api/print/capability', query, o);
  }
  create(body: Body<'/api/print/create'>, o?: CallOptions) {
    return this.#t.post('/api/print/create', body, o);
  }
  /** Cancels every print task of the device and empties the box's queue. */
  cancel(body: Body<'/api/print/cancel'>, o?: CallOptions) {
    return this.#t.post('/api/print/cancel', body, o);
  }
  info(body: Body<'/api/print/info'>, o?: CallOptions) {
    return this.#t.post('/api/print/info', body, o);
  }

  /** Prints a PDF or JPEG held in memory or at a path: sent inline (Base64) with its MD5 checked. */
  async file(
    clientUuid: string,
    file: Uint8Array | string,
    o: { type?: 'pdf' | 'jpg'; options?: CreateOptions } & CallOptions = {},
  ) {
    const bytes = typeof file === 'string' ? await readFile(file) : Buffer.from(file);
    const type = o.type ?? (bytes[0] === 0xff && bytes[1] === 0xd8 ? 'jpg' : 'pdf');
    const { createHash } = await import('node:crypto');
    const { options, type: _t, ...call } = o;
    return this.create(
      {
        client_uuid: clientUuid,
        file_type: type,
        file_content: bytes.toString('base64'),
        file_check_sum: createHash('md5').update(bytes).digest('hex'),
        ...(options ? { options } : {}),
      },
      call,
    );
  }

  /** Resolves with the task's final status once it has finished (the print.finished callback says it sooner). */
  async waitForFinish(
    body: Body<'/api/print/info'>,
    w: { intervalMs?: number; timeoutMs?: number; signal?: AbortSignal; onProgress?: (i: PrintInfo) => void } = {},
  ): Promise<PrintInfo> {
    const until = w.timeoutMs === undefined ? Infinity : Date.now() + w.timeoutMs;
    for (;;) {
      const info = await this.info(body, w.signal ? { signal: w.signal } : {});
      w.onProgress?.(info);
      if (info.finished) return info;
      if (Date.now() >= until)
        throw new WaitTimeoutError(`print ${body.print_uuid} did not finish within ${w.timeoutMs} ms`);
      await sleep(w.intervalMs ?? 1000, w.signal);
    }
  }
}
