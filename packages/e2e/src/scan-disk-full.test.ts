// A box whose disk fills up mid-scan (docs/chaos.md, "box-disk-full"): the item being written
// fails, and so, while the disk stays full, does writing the scan's end. The end is written
// once there is room again, and the task ends with a scanner error (2003) instead of waiting
// on the server until it expires. The box's disk is a small tmpfs the test fills for real,
// which needs root (as CI runs); elsewhere there is no disk to fill without one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startRig } from './fixtures.ts';

/** Keeps the disk full until the returned function is called (which frees it): space the box
 *  frees (a failed item's file) is taken again at once, as by other writers on a real disk. */
function keepFull(dir: string): () => void {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'a');
  const block = Buffer.alloc(1 << 16, 1);
  const top = () => {
    try {
      for (;;) writeSync(fd, block);
    } catch {
      /* ENOSPC: full again */
    }
  };
  top();
  const timer = setInterval(top, 5);
  return () => {
    clearInterval(timer);
    closeSync(fd);
    rmSync(file);
  };
}

if (process.getuid?.() === 0)
  test('a disk full mid-scan: the scan ends with 2003 once the box can write its end, and the lock is released', async () => {
    const rig = await startRig();
    const stateDir = mkdtempSync(join(tmpdir(), 'boxhub-small-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', stateDir]);
    try {
      const box = await rig.box({ stateDir, scanner: 'sim:?ppm=600' });
      await rig.load(box, 40);
      const uuid = (await rig.sdk.scan.create({ client_uuid: box.uuid, options: { duplex: false, item_pages: 2 } }))
        .uuid!;
      await eventually(() => box.scanner.sheets <= 36, 'a few sheets scanned');
      const free = keepFull(stateDir);
      // The item being written fails: the scanner is released with paper left in the feeder,
      // and the end is tried while the disk is still full.
      await eventually(async () => (await box.scanner.status()).state === 'idle', 'the scan stopped on the full disk');
      await new Promise((r) => setTimeout(r, 5000));
      free();
      const done = await rig.sdk.scan.waitForFinish(
        { client_uuid: box.uuid, scan_uuid: uuid },
        { intervalMs: 100, timeoutMs: 30_000 },
      );
      assert.equal(done.error_code, 2003, JSON.stringify(done));
      assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: false });
    } finally {
      await rig.close();
      execFileSync('umount', ['-l', stateDir]);
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
