// s3rver in a process of its own (forked by testing/s3rver.ts with an IPC channel and
// --openssl-legacy-provider). argv: directory, bucket. Sends { port } once listening; a
// 'close' message or the parent going away stops it.
// @ts-expect-error s3rver ships no types; the fixture is its only user.
import S3rver from 's3rver';

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  store: { deleteObject(bucket: string, key: string): Promise<void> };
}

const [directory, bucket] = process.argv.slice(2);
if (!process.send || !directory || !bucket)
  throw new Error('s3rver-process.ts must be forked with an IPC channel, a directory and a bucket');

const server = new (S3rver as new (o: object) => S3rverInstance)({
  address: '127.0.0.1',
  port: 0,
  silent: process.env.S3RVER_DEBUG !== '1',
  directory,
  configureBuckets: [{ name: bucket }],
});
// s3rver 3.7.1 deletes the keys of one DeleteObjects request concurrently, and each delete then
// removes the directories it emptied: two racing for one directory fail with ENOENT, and the
// request with 500, although every object is gone. The files are unlinked before that cleanup
// (stores/filesystem.js deleteObject), so an ENOENT there only means "removed already".
const store = server.store;
const deleteObject = store.deleteObject.bind(store);
store.deleteObject = async (b, key) => {
  try {
    await deleteObject(b, key);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
};
const { port } = await server.run();
process.send({ port });
let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await server.close().catch(() => undefined);
  process.disconnect?.();
  process.exit(0);
};
process.on('message', (m) => {
  if (m === 'close') void stop();
});
process.on('disconnect', () => void stop());
