// SQLite's WAL checkpoints on a thread of their own, for the server's long-lived connection.
//
// Why: by default SQLite checkpoints inside the commit that takes the write-ahead log past 1000
// pages (wal_autocheckpoint): that commit copies the log into the database file and fsyncs both,
// on the event loop's thread, since better-sqlite3 is synchronous. In a fleet's return that was
// a single-row UPDATE or a COMMIT of 30-190 ms every few seconds, and every API request waiting
// behind it (bench/README.md, "reconnect-storm", run 74). SQLite's own answer is to turn the
// automatic checkpoint off and run them from another connection ("Checkpoint starvation" and
// "Application-initiated checkpoints", https://www.sqlite.org/wal.html); a PASSIVE checkpoint
// waits for no reader or writer, so the server's commits go on while it copies and fsyncs.
// With synchronous = NORMAL no commit fsyncs, so the event loop's thread does no fsync at all.
// The durability is SQLite's: committed transactions are in the log either way.
//
// The worker is a few lines of plain JavaScript evaluated as-is (no TypeScript, no project
// imports), so it starts the same from the sources and from the build.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
let timer;
const step = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ checkpointed: r.checkpointed, log: r.log, busy: r.busy });
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
  timer = setTimeout(step, workerData.intervalMs);
};
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearTimeout(timer);
  try { db.close(); } finally { parentPort.close(); }
});
step();
`;

export interface CheckpointerOptions {
  /** How often the worker checkpoints (ms). */
  intervalMs?: number;
  /** Told once if the worker fails; SQLite's automatic checkpoints are then back on. */
  onFailure?: (err: Error) => void;
}

export interface Checkpointer {
  /** The last checkpoint's report: log frames, frames copied (PRAGMA wal_checkpoint). */
  readonly last?: { log: number; checkpointed: number };
  /** Stops the worker (before the connection closes; its close checkpoints what is left). */
  stop(): Promise<void>;
}

/** A connection whose automatic checkpoints can be turned off and on again. */
export interface CheckpointedConnection {
  pragma(source: string): unknown;
}

const DEFAULT_AUTOCHECKPOINT = 1000;

/**
 * Turns `connection`'s automatic checkpoints off and checkpoints the database at `path` every
 * `intervalMs` from a worker thread. Should the worker fail, the automatic checkpoints are turned
 * back on: the log never grows without bound.
 */
export function startCheckpointer(
  connection: CheckpointedConnection,
  path: string,
  o: CheckpointerOptions = {},
): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { module, path, intervalMs: o.intervalMs ?? 500 },
    // Small: it holds one statement and SQLite's own page cache (outside the heap).
    resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
  });
  worker.unref();
  connection.pragma('wal_autocheckpoint = 0');
  let stopping = false;
  let failed = false;
  const state: { last?: { log: number; checkpointed: number } } = {};
  const fail = (err: Error) => {
    if (failed || stopping) return;
    failed = true;
    connection.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
    o.onFailure?.(err);
  };
  worker.on('message', (m: { log?: number; checkpointed?: number; error?: string }) => {
    if (m.error !== undefined) return fail(new Error(`SQLite checkpoint worker: ${m.error}`));
    state.last = { log: m.log ?? 0, checkpointed: m.checkpointed ?? 0 };
  });
  worker.on('error', (e) => fail(e));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      if (!stopping) fail(new Error(`SQLite checkpoint worker exited (${code})`));
      resolve();
    }),
  );
  return {
    get last() {
      return state.last;
    },
    async stop() {
      if (stopping) return exited;
      stopping = true;
      // Held until it has closed its connection (unref'd, it would not keep the loop turning).
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
