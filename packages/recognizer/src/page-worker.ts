// Worker side of PagePool.
import { parentPort, workerData } from 'node:worker_threads';
import sharp from 'sharp';
import { createLayoutSet } from './layout-store.ts';
import { recognizePage } from './page-recognizer.ts';

sharp.concurrency(1);
const layouts = createLayoutSet((workerData as { layouts: unknown[] }).layouts);
parentPort!.on('message', async (m: { id: number; bytes: Uint8Array }) => {
  try {
    parentPort!.postMessage({ id: m.id, reading: await recognizePage(m.bytes, layouts) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});
