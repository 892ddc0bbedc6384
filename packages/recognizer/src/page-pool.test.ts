// PagePool when a worker thread dies. The pool's workers are reached through Node's process
// 'worker' event; a null message makes the real page-worker throw outside its try, and the
// uncaught exception ends that thread ('error', then 'exit'), as any crash of a worker would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { PagePool } from './page-pool.ts';
import { loadLayoutDirs } from './layout-store.ts';

const dir = new URL('../test/corpus/clean-duplex-bubbles/', import.meta.url).pathname;

/** A pool of one worker, and that worker. */
async function poolOfOne(): Promise<{ pool: PagePool; worker: Worker }> {
  const layouts = await loadLayoutDirs([`${dir}layout`]);
  const created: Worker[] = [];
  const onWorker = (w: Worker) => { if (w.constructor.name === 'Worker') created.push(w); }; // not the module loader's
  process.on('worker', onWorker);
  const pool = new PagePool({ layouts: layouts.all(), workers: 1 });
  await new Promise((resolve) => setImmediate(resolve)); // the event comes on a later tick
  process.off('worker', onWorker);
  if (created.length !== 1) { await pool.close(); assert.fail(`${created.length} workers seen`); }
  return { pool, worker: created[0]! };
}

/** The promise's value, or a failure instead of waiting for ever. */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([p, sleep(ms, undefined, { signal: timer.signal }).then(() => { throw new Error(`not settled after ${ms} ms`); })]);
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
