// Temporary directories for a test file, removed when its process exits (node --test runs each
// file in a process of its own). The test runner also empties its TMPDIR after each pass
// (scripts/test.mjs); this keeps a file run on its own from leaving anything in /tmp.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A new directory under the system temp dir, named `prefix` and a random tail. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
