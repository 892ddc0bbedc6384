// Memory back after large request bodies (docs/configuration.md "Document and image work").
// A print create may bring 64 MiB inline. Its body is read into one buffer and its file decoded
// inside it (modules/print/inline-body.ts), so once it is answered that buffer is the garbage;
// V8 collects only when more is allocated, so a node left idle after a burst would keep it. So
// once such requests have been answered and none has come for a second, one full collection
// runs (at most one every 5 s): the buffers, each its own mmap in glibc's allocator, go back to
// the system at once (`npm run bench burst-memory`).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

/** A body at least this large schedules a collection after its answer. */
export const LARGE_BODY_BYTES = 8 * 1024 * 1024;
const QUIET_MS = 1000;
const MIN_INTERVAL_MS = 5000;

let collect: (() => void) | undefined;
/** V8's full collection, made callable once (the flag applies to contexts created after it). */
function fullGc(): () => void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  return collect;
}

export function installMemoryRelease(app: FastifyInstance, log: FastifyBaseLogger): void {
  let timer: NodeJS.Timeout | undefined;
  let last = 0;
  const run = () => {
    timer = undefined;
    const wait = last + MIN_INTERVAL_MS - Date.now();
    if (wait > 0) {
      timer = setTimeout(run, wait).unref();
      return;
    }
    last = Date.now();
    const before = process.memoryUsage().rss;
    const t0 = performance.now();
    fullGc()();
    log.debug(
      { ms: Math.round(performance.now() - t0), rssBefore: before, rssAfter: process.memoryUsage().rss },
      'memory released after large request bodies',
    );
  };
  app.addHook('onResponse', (req, _reply, done) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (
      declared >= LARGE_BODY_BYTES ||
      (req.headers['transfer-encoding'] !== undefined && req.raw.socket.bytesRead >= LARGE_BODY_BYTES)
    ) {
      if (timer) clearTimeout(timer);
      timer = setTimeout(run, QUIET_MS).unref();
    }
    done();
  });
}
