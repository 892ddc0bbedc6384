// A box's disk for a simulated box or a test's box (simulator.ts, the e2e fixtures) when the
// caller gives none: a directory of its own under the system's temporary directory, removed when
// the process that made it exits. A test suite's boxes left one each behind (354 after one CI
// run). A box given its state directory (`stateDir`) keeps it: that disk is its caller's, and a
// box started again on the same disk (a power cycle) reuses the one made here until the exit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

/** Makes a `boxhub-box-*` directory that is removed when this process exits. */
export function tempStateDir(): string {
  return tempDirUntilExit('boxhub-box-');
}

/** Makes a `<prefix>*` directory under the system's temporary directory that is removed when this
 *  process exits (the agent's and the e2e tests use it for their fixtures' files too). */
export function tempDirUntilExit(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (made.size === 0) process.once('exit', removeAll);
  made.add(dir);
  return dir;
}

function removeAll(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}
