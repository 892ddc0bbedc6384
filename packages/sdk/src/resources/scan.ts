// Remote scanning (docs/api.md, "Scanning"; tag `scan` in /openapi.json; docs/scanning.md), with the
// helpers an application needs around it: waiting for a scan to end, walking all its items,
// and downloading an item with its MD5 and size checked.
import { sleep } from '../sleep.ts';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Body, PostResult } from '../api-types.ts';
import { DownloadError, WaitTimeoutError } from '../helpers-errors.ts';
import type { CallOptions, Transport } from '../transport.ts';

export type ScanInfo = PostResult<'/api/scan/info'>;
export type ScanItem = PostResult<'/api/scan/item_data'>['items'][number];

export interface WaitOptions {
  /** Time between looks (default 1000 ms). */
  intervalMs?: number;
  /** Give up after this long (default: never). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each status seen (progress). */
  onProgress?: (info: ScanInfo) => void;
}

export class Scan {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** Starts a scan on a device: one at a time per device (30204 and data.exist_uuid otherwise). */
  create(body: Body<'/api/scan/create'>, o?: CallOptions) {
    return this.#t.post('/api/scan/create', body, o);
  }
  /** Stops the device's scan now. */
  stop(body: Body<'/api/scan/stop'>, o?: CallOptions) {
    return this.#t.post('/api/scan/stop', body, o);
  }
  current(body: Body<'/api/scan/current'>, o?: CallOptions) {
    return this.#t.post('/api/scan/current', body, o);
  }
  info(body: Body<'/api/scan/info'>, o?: CallOptions) {
    return this.#t.post('/api/scan/info', body, o);
  }
  /** One page (20) of items with fresh 1-hour download links. */
  itemData(body: Body<'/api/scan/item_data'>, o?: CallOptions) {
    return this.#t.post('/api/scan/item_data', body, o);
  }

  /** Every item of a scan task so far, page after page. */
  async *items(body: { client_uuid: string; scan_uuid: string }, o?: CallOptions): AsyncGenerator<ScanItem> {
    for (let page = 1; page <= 1000; page++) {
      const r = await this.itemData({ ...body, page }, o);
      yield* r.items;
      if (page * r.page_size >= r.total) return;
    }
  }

  /**
   * Resolves with the task's final status once it has finished (or rejects when the timeout or
   * the signal comes first). The scan.finish callback says the same sooner; this is for
   * scripts and for applications without a public address.
   */
  async waitForFinish(body: { client_uuid: string; scan_uuid: string }, w: WaitOptions = {}): Promise<ScanInfo> {
    const until = w.timeoutMs === undefined ? Infinity : Date.now() + w.timeoutMs;
    for (;;) {
      const info = await this.info(body, w.signal ? { signal: w.signal } : {});
      w.onProgress?.(info);
      if (info.finished) return info;
      if (Date.now() >= until)
        throw new WaitTimeoutError(`scan ${body.scan_uuid} did not finish within ${w.timeoutMs} ms`);
      await sleep(w.intervalMs ?? 1000, w.signal);
    }
  }

  /**
   * Downloads an item's PDF to `path`, checking its MD5 (check_sum) and size as it streams; the
   * file appears at `path` only when both match. Encrypted items are stored as downloaded
   * (ciphertext); direct_mode 1 items have no file.
   */
  async download(
    item: ScanItem,
    path: string,
    o: { signal?: AbortSignal; fetch?: typeof fetch } = {},
  ): Promise<{ path: string; bytes: number; md5: string }> {
    if (!item.temp_download_url || !item.check_sum)
      throw new DownloadError(`item ${item.item_id} has no file (direct_mode 1)`);
    const res = await (o.fetch ?? fetch)(item.temp_download_url, o.signal ? { signal: o.signal } : {});
    if (res.status !== 200 || !res.body)
      throw new DownloadError(
        `download of item ${item.item_id} answered HTTP ${res.status}${res.status === 403 ? ' (the link expired: get a fresh one from itemData)' : ''}`,
        res.status,
      );
    const hash = createHash('md5');
    let bytes = 0;
    const part = `${path}.part`;
    try {
      await pipeline(
        Readable.fromWeb(res.body as unknown as WebReadableStream),
        new Transform({
          transform(chunk: Buffer, _e, done) {
            bytes += chunk.length;
            hash.update(chunk);
            done(null, chunk);
          },
        }),
        createWriteStream(part),
      );
      const md5 = hash.digest('hex');
      if (md5 !== item.check_sum.toLowerCase())
        throw new DownloadError(`item ${item.item_id}: downloaded MD5 ${md5} is not its check_sum ${item.check_sum}`);
      if (item.file_size !== undefined && Math.ceil(bytes / 1024) !== item.file_size)
        throw new DownloadError(
          `item ${item.item_id}: downloaded ${bytes} bytes, its file_size is ${item.file_size} KB`,
        );
      await rename(part, path);
      return { path, bytes, md5 };
    } catch (e) {
      await rm(part, { force: true });
      throw e;
    }
  }
}
