// PagePool when a worker thread dies. The pool's workers are reached through Node's process
// 'worker' event; a null message makes the real page-worker throw outside its try, and the
// uncaught exception ends that thread ('error', then 'exit'), as any crash of a worker would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { LAYOUT_SETS_PER_WORKER, PagePool } from './page-pool.ts';
import { loadLayoutDirs } from './layout-store.ts';

const dir = new URL('../test/corpus/clean-duplex-bubbles/', import.meta.url).pathname;

/** A pool of one worker, and that worker. */
async function poolOfOne(): Promise<{ pool: PagePool; worker: Worker }> {
  const layouts = await loadLayoutDirs([`${dir}layout`]);
  const created: Worker[] = [];
  const onWorker = (w: Worker) => {
    if (w.constructor.name === 'Worker') created.push(w);
  }; // not the module loader's
  process.on('worker', onWorker);
  const pool = new PagePool({ layouts: layouts.all(), workers: 1 });
  await new Promise((resolve) => setImmediate(resolve)); // the event comes on a later tick
  process.off('worker', onWorker);
  if (created.length !== 1) {
    await pool.close();
    assert.fail(`${created.length} workers seen`);
  }
  return { pool, worker: created[0]! };
}

/** The promise's value, or a failure instead of waiting for ever. */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      p,
      sleep(ms, undefined, { signal: timer.signal }).then(() => {
        throw new Error(`not settled after ${ms} ms`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}

test('a worker that dies on a page rejects that page, saying so; a new worker reads the next', async () => {
  const { pool, worker } = await poolOfOne();
  try {
    worker.postMessage(null); // ahead of the first page: the worker dies on it
    const first = pool.recognize(readFileSync(`${dir}01.jpg`));
    const second = pool.recognize(readFileSync(`${dir}02.jpg`));
    await assert.rejects(within(first, 30_000), /^Error: recognition worker stopped: Cannot read properties of null/);
    assert.equal((await within(second, 30_000)).status, 'ok');
  } finally {
    await pool.close();
  }
});

test('a worker that died while idle is not handed pages', async () => {
  const { pool, worker } = await poolOfOne();
  try {
    const exited = new Promise((resolve) => worker.once('exit', resolve)); // (events.once would reject on 'error')
    worker.postMessage(null);
    await exited;
    assert.equal((await within(pool.recognize(readFileSync(`${dir}01.jpg`)), 30_000)).status, 'ok');
  } finally {
    await pool.close();
  }
});

test('per-page layout sets go to a worker once: past its 16 held sets the oldest is sent again, and every page still reads', async () => {
  const layouts = (await loadLayoutDirs([`${dir}layout`])).all();
  const pages = (await import('node:fs'))
    .readdirSync(`${dir}`)
    .filter((f) => f.endsWith('.jpg'))
    .sort();
  const page = readFileSync(`${dir}${pages[0]}`);
  // The pool's own layouts are none: a page reads only with the set it is given.
  const pool = new PagePool({ layouts: [], workers: 1 });
  try {
    const keys = Array.from({ length: LAYOUT_SETS_PER_WORKER + 2 }, (_, i) => `set-${i}`);
    // Every key once (the first two are evicted by the last two), then again in an order that
    // mixes held sets (sent by key) and evicted ones (sent with their layouts).
    for (const key of [...keys, 'set-0', `set-${LAYOUT_SETS_PER_WORKER + 1}`, 'set-1', 'set-5', 'set-0']) {
      const r = await within(pool.recognize(page, { key, layouts }), 30_000);
      assert.notEqual(r.status, 'unreadable', `${key}: ${r.status === 'unreadable' ? r.detail : ''}`);
    }
  } finally {
    await pool.close();
  }
});

test('transfer: a page whose memory is its own moves to the worker (the caller keeps an empty array); a slice of shared memory is copied', async () => {
  const layouts = (await loadLayoutDirs([`${dir}layout`])).all();
  const pool = new PagePool({ layouts, workers: 1 });
  try {
    const file = readFileSync(`${dir}01.jpg`);
    const own = new Uint8Array(file.length);
    own.set(file);
    const moved = await within(pool.recognize(own, undefined, { transfer: true }), 30_000);
    assert.equal(own.byteLength, 0, 'the array was transferred');
    const shared = new Uint8Array(file.length + 8);
    shared.set(file, 8);
    const slice = shared.subarray(8);
    const copied = await within(pool.recognize(slice, undefined, { transfer: true }), 30_000);
    assert.equal(slice.byteLength, file.length, 'a slice is not transferred (it would empty the whole buffer)');
    assert.deepEqual(moved, { ...copied, ms: moved.ms }, 'the same reading either way');
  } finally {
    await pool.close();
  }
});
