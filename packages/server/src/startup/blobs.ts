// The blob-store step of a start (server.ts): S3 when BOXHUB_S3_BUCKET is set, otherwise local
// files under the data directory (docs/storage.md). Several server nodes need S3: a local
// store's files are on one node's disk only.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { LocalBlobStore } from '../storage/local-store.ts';
import { S3BlobStore } from '../storage/s3-store.ts';
import { blobSecret } from '../storage/secret.ts';
import { dataDirError } from '../startup-error.ts';
import type { Cleanup } from './cleanup.ts';

export interface OpenedBlobs {
  blobs: BlobStore;
  /** The local store, which the /blobs routes serve; undefined with S3 (URLs point at the bucket). */
  local: LocalBlobStore | undefined;
}

export async function openBlobs(
  config: Config,
  clock: Clock,
  log: Logger,
  cleanup: Cleanup,
  baseUrl: () => string,
): Promise<OpenedBlobs> {
  if (config.s3) {
    const s3 = config.s3;
    const store = new S3BlobStore({
      target: {
        endpoint: s3.endpoint,
        region: s3.region,
        bucket: s3.bucket,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        pathStyle: s3.pathStyle,
      },
      clock,
      spoolDir: join(config.dataDir, 'spool'),
    });
    cleanup.push(() => store.close());
    log.info(
      { endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, pathStyle: s3.pathStyle },
      'blobs are stored in S3',
    );
    return { blobs: store, local: undefined };
  }
  // Made here, owner-only: the file server wants its root to exist.
  try {
    mkdirSync(join(config.dataDir, 'blobs'), { recursive: true, mode: 0o700 });
  } catch (e) {
    throw dataDirError(e, config.dataDir);
  }
  const local = new LocalBlobStore({
    root: join(config.dataDir, 'blobs'),
    secret: config.blobSecret ?? (await blobSecret(config.dataDir)),
    baseUrl,
    clock,
  });
  return { blobs: local, local };
}
