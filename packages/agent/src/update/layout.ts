// Where releases live on a box and how the switch between them is made (docs/updates.md, "On
// the box"). Under the state directory:
//
//   releases/<version>/         an unpacked release (written under a temporary name, renamed
//                               into place once complete)
//   releases/current            symlink to the release that runs; absent: the installed agent
//   releases/trial.json         an update on trial: {release, to, from, starts, started_at}
//   releases/result.json        what became of the last update (UpdateReport)
//   releases/downloads/         partial downloads, resumed after a restart
//
// Every change is one atomic step (a rename of a file or of a symlink, then the directory
// flushed), so a power cut at any point leaves `current` naming one of the two releases.
import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { UpdateReport } from '@boxhub/protocol/release.ts';
import { writeFileAtomic } from '../store/atomic-file.ts';

/** A file or link that is not there (ENOENT); the launcher loads this module, so no protocol import. */
const isMissing = (e: unknown): boolean => e instanceof Error && 'code' in e && e.code === 'ENOENT';

/** The agent's exit status after switching releases: the launcher starts `current` at once. */
export const EXIT_SWITCH = 75;

export interface Trial {
  release?: string | undefined;
  /** Version on trial (the directory `current` points to while the trial lasts). */
  to: string;
  /** Version to go back to; null: the installed agent (no `current` link). */
  from: string | null;
  /** Starts of the trial release so far (the launcher counts them). */
  starts: number;
  /** When the trial release first started, Unix ms (0: not yet). */
  started_at: number;
}

export class ReleaseLayout {
  readonly dir: string;
  constructor(stateDir: string) {
    this.dir = join(stateDir, 'releases');
  }

  get current(): string {
    return join(this.dir, 'current');
  }
  get downloads(): string {
    return join(this.dir, 'downloads');
  }
  release(version: string): string {
    return join(this.dir, version);
  }

  /** The version `current` points to, or null when the installed agent runs. */
  async currentVersion(): Promise<string | null> {
    try {
      return await readlink(this.current);
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  /** Points `current` at `version` (null: remove it) in one atomic step. */
  async switchTo(version: string | null): Promise<void> {
    if (version === null) {
      await rm(this.current, { force: true });
    } else {
      const tmp = join(this.dir, `.current-${randomBytes(4).toString('hex')}`);
      await symlink(version, tmp);
      await rename(tmp, this.current);
    }
    await this.syncDir();
  }

  async readTrial(): Promise<Trial | null> {
    return readJson<Trial>(join(this.dir, 'trial.json'));
  }
  async writeTrial(t: Trial): Promise<void> {
    await writeFileAtomic(join(this.dir, 'trial.json'), JSON.stringify(t));
  }
  async endTrial(): Promise<void> {
    await rm(join(this.dir, 'trial.json'), { force: true });
    await this.syncDir();
  }

  /**
   * Removes every release but `keep` (the one that runs and the one it would go back to), so a
   * box that takes update after update keeps two releases on its disk, not all of them. Partial
   * downloads, temporary names and the state files stay.
   */
  async prune(keep: ReadonlyArray<string | null>): Promise<string[]> {
    const kept = new Set(keep.filter((v): v is string => v !== null));
    const removed: string[] = [];
    for (const e of await readdir(this.dir, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name === 'downloads' || e.name.startsWith('.') || kept.has(e.name)) continue;
      await rm(join(this.dir, e.name), { recursive: true, force: true });
      removed.push(e.name);
    }
    return removed;
  }

  async readResult(): Promise<UpdateReport | null> {
    return readJson<UpdateReport>(join(this.dir, 'result.json'));
  }
  async writeResult(r: UpdateReport): Promise<void> {
    await writeFileAtomic(join(this.dir, 'result.json'), JSON.stringify(r));
  }

  private async syncDir(): Promise<void> {
    const h = await open(this.dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  }
}

async function readJson<T>(path: string): Promise<T | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
  // Written atomically, so never half; a file that does not parse was not written by us.
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}
