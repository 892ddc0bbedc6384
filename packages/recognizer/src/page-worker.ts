// Worker side of PagePool.
import { parentPort, workerData } from 'node:worker_threads';
import sharp from 'sharp';
import { createLayoutSet, type LayoutSet } from './layout-store.ts';
import { recognizePage } from './page-recognizer.ts';
import { LAYOUT_SETS_PER_WORKER } from './page-pool.ts';

sharp.concurrency(1);
const layouts = createLayoutSet((workerData as { layouts: unknown[] }).layouts);
// Sets given per page (PagePool.recognize's `set`), by key; the last few are kept.
const sets = new Map<string, LayoutSet>();
// The pool sends a set's layouts the first time only and mirrors this cache (PagePool #sent):
// same size, same eviction (oldest inserted first, no reordering on use).
function setFor(set: { key: string; layouts?: unknown[] }): LayoutSet {
  let s = sets.get(set.key);
  if (!s) {
    if (!set.layouts)
      throw new Error(`layout set ${set.key} is not held by this worker (the pool's record of it is wrong)`);
    s = createLayoutSet(set.layouts);
    sets.set(set.key, s);
    if (sets.size > LAYOUT_SETS_PER_WORKER) sets.delete(sets.keys().next().value!);
  }
  return s;
}
parentPort!.on('message', async (m: { id: number; bytes: Uint8Array; set?: { key: string; layouts?: unknown[] } }) => {
  try {
    parentPort!.postMessage({ id: m.id, reading: await recognizePage(m.bytes, m.set ? setFor(m.set) : layouts) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});
