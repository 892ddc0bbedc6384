// A real S3 server on loopback for tests: s3rver (npm) on a free port, in a process of its own
// (s3rver-process.ts), with its files in a temp dir and one bucket. Its own process because
// s3rver makes ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its legacy
// provider: that process runs with --openssl-legacy-provider, the tests' own does not.
// What s3rver does not do, a test cannot show with it: it checks neither SigV4 signatures
// (storage/sigv4.test.ts checks ours against AWS's examples and the AWS SDK) nor Content-MD5
// (S3 answers 400 BadDigest to other bytes; here they are stored, and it is the server's
// stat-and-compare that refuses them). It does check presigned URLs' expiry.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { S3Target } from '../storage/s3-client.ts';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** Path-style target with s3rver's only credentials (it knows no others). */
  target: S3Target;
  /** The BOXHUB_S3_* settings that point a server at this bucket. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'boxhub'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'boxhub-s3-'));
  const child = fork(fileURLToPath(new URL('./s3rver-process.ts', import.meta.url)), [directory, bucket], {
    execArgv: ['--import', 'tsx', '--openssl-legacy-provider'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  const ready = once(child, 'message') as Promise<[{ port: number }]>;
  const first = await Promise.race([
    ready,
    exited.then(([code]) => {
      throw new Error(`s3rver exited with ${String(code)} before listening`);
    }),
  ]);
  const { port } = first[0];
  const endpoint = `http://127.0.0.1:${port}`;
  const target: S3Target = {
    endpoint,
    region: 'us-east-1',
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    pathStyle: true,
  };
  return {
    endpoint,
    bucket,
    target,
    env: {
      BOXHUB_S3_ENDPOINT: endpoint,
      BOXHUB_S3_REGION: 'us-east-1',
      BOXHUB_S3_BUCKET: bucket,
      BOXHUB_S3_ACCESS_KEY: 'S3RVER',
      BOXHUB_S3_SECRET_KEY: 'S3RVER',
      BOXHUB_S3_PATH_STYLE: '1',
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.send('close');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
