// Where scanned items, print files and page images live (docs/storage.md). Two implementations:
// local files under the data dir (the default, one node) and S3-compatible object storage (the
// path past one machine). Neither ever hands out a permanent link: boxes and applications get
// short-lived signed URLs, and the server checks what was stored before it records anything.
import type { Readable } from 'node:stream';

export interface StoredBlob {
  size: number;
  /** MD5 of the stored bytes, lowercase hex. */
  md5: string;
}

export interface UploadGrant {
  url: string;
  method: 'PUT';
  /** Headers the upload must send exactly as given (they are part of the signature). */
  headers: Record<string, string>;
  expiresAt: number;
}

export interface BlobStore {
  /** A URL that accepts exactly one PUT of `size` bytes with this MD5 to `key`, until it expires. */
  uploadUrl(
    key: string,
    o: { size: number; md5: string; contentType: string; expiresInMs: number },
  ): Promise<UploadGrant>;
  /** A URL that serves `key` (ranges included) until it expires, as an attachment named `fileName`. */
  downloadUrl(key: string, o: { fileName: string; contentType: string; expiresInMs: number }): Promise<string>;
  /** Stores bytes the server holds itself (print files, page images). */
  put(key: string, body: Buffer | Readable, o: { contentType: string }): Promise<StoredBlob>;
  /** Size and MD5 of what is stored, or undefined when nothing is. */
  stat(key: string): Promise<StoredBlob | undefined>;
  get(key: string): Promise<Readable>;
  /** The whole blob in memory, for small ones the server works on itself (page images). */
  getBytes(key: string): Promise<Buffer>;
  /** Deletes every object under `prefix` (a task's files); missing objects are not an error. */
  deletePrefix(prefix: string): Promise<void>;
}

/** Keys are ours (e.g. `scan/{task}/1.pdf`), but they end up in paths and URLs: keep them plain. */
export function checkKey(key: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/.test(key) || key.length > 300) {
    throw new Error(`bad blob key '${key}'`);
  }
}
