// `agent.update` on the box (docs/updates.md, "What a box does"). The command is checked at
// once and answered: a release without a valid signature by the box's release key, for another
// platform, or older than the running agent (unless `downgrade`) is refused in the ack and in
// the state's `update` report. An accepted one is downloaded (resumed after any break), checked
// against the manifest's size and SHA-256, unpacked beside the running release, and switched to
// once the box has no scan or print left; then the agent exits with EXIT_SWITCH and the
// launcher (launcher.ts) starts the new release on trial.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  compareVersions,
  platformMatches,
  verifyManifest,
  type AgentUpdateParams,
  type UpdateReport,
} from '@boxhub/protocol/release.ts';
import { downloadRelease } from './download.ts';
import { ReleaseLayout } from './layout.ts';
import { messageOf } from '@boxhub/protocol/caught.ts';

export { EXIT_SWITCH } from './layout.ts';

export interface UpdaterOptions {
  stateDir: string;
  /** The release public key (PEM) the box was provisioned with; without it every update is refused. */
  publicKey: string | undefined;
  /** The version running now. */
  version: string;
  /** Whether a scan or print is on the box (the switch waits for none). */
  busy: () => boolean;
  /** Stops the agent and exits with EXIT_SWITCH. */
  restart: () => void;
  /** The update report changed (the box reports its state). */
  changed: () => void;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  /** How often a busy box looks again (tests shorten it). */
  busyPollMs?: number;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

export class Updater {
  readonly layout: ReleaseLayout;
  private readonly o: UpdaterOptions;
  private report: UpdateReport | null = null;
  private working: string | undefined;

  constructor(o: UpdaterOptions) {
    this.o = o;
    this.layout = new ReleaseLayout(o.stateDir);
  }

  /** Reads what became of the last update (for the state) and ends a trial this release passed. */
  async load(): Promise<void> {
    await mkdir(this.layout.dir, { recursive: true, mode: 0o700 });
    this.report = await this.layout.readResult();
  }

  get lastReport(): UpdateReport | null {
    return this.report;
  }

  /**
   * Called once the agent is connected and has reported its state: a release on trial has
   * proved itself, so the trial ends and the update counts as done.
   */
  async healthy(): Promise<void> {
    const trial = await this.layout.readTrial();
    if (!trial || trial.to !== this.o.version || (await this.layout.currentVersion()) !== trial.to) return;
    await this.setReport({ release: trial.release, version: trial.to, outcome: 'updated', at: Date.now() });
    await this.layout.endTrial();
    this.o.log('update: the new release is healthy', { version: trial.to, from: trial.from });
    // Older releases go once the new one has proved itself: the box keeps this one and the one
    // it came from (docs/updates.md, "On the box").
    const removed = await this.layout.prune([trial.to, trial.from]).catch((e: unknown) => {
      this.o.log('update: older releases not removed', { error: messageOf(e) });
      return [];
    });
    if (removed.length) this.o.log('update: older releases removed', { versions: removed });
  }

  /** The checks made before the command is answered. */
  check(p: AgentUpdateParams): Verdict {
    const m = p.manifest;
    if (!this.o.publicKey)
      return { ok: false, reason: 'this box has no release key (--release-key): it takes no updates' };
    let signed = false;
    try {
      signed = verifyManifest(this.o.publicKey, m, p.signature);
    } catch {
      signed = false;
    }
    if (!signed) return { ok: false, reason: "the release is not signed by this box's release key" };
    if (!platformMatches(m.platform))
      return { ok: false, reason: `the release is for ${m.platform}, this box is ${process.platform}-${process.arch}` };
    const cmp = compareVersions(m.version, this.o.version);
    if (cmp === 0) return { ok: false, reason: `version ${m.version} runs already` };
    if (cmp < 0 && !p.downgrade)
      return {
        ok: false,
        reason: `version ${m.version} is older than ${this.o.version}, which runs (downgrade not asked for)`,
      };
    if (this.working && this.working !== m.version)
      return { ok: false, reason: `an update to ${this.working} is under way` };
    return { ok: true };
  }

  /** Answers the command; an accepted update goes on after the ack (`later`). */
  async accept(p: AgentUpdateParams): Promise<Verdict> {
    const v = this.check(p);
    if (!v.ok) {
      await this.setReport({
        release: p.release,
        version: p.manifest.version,
        outcome: 'refused',
        reason: v.reason,
        at: Date.now(),
      });
      this.o.log('update refused', { version: p.manifest.version, reason: v.reason });
    }
    return v;
  }

  /** Download, check, unpack, wait for no job, switch, restart. A repeat while it runs is a no-op. */
  async run(p: AgentUpdateParams): Promise<void> {
    if (this.working) return;
    this.working = p.manifest.version;
    const m = p.manifest;
    try {
      await this.setReport({ release: p.release, version: m.version, outcome: 'installing', at: Date.now() });
      const file = await downloadRelease(p.url, this.layout.downloads, m);
      const dir = this.layout.release(m.version);
      const from = await this.layout.currentVersion();
      if (from === m.version) throw new Error(`release ${m.version} is current already`);
      // Unpacked under a temporary name and renamed into place: a directory named after a
      // version is always complete.
      const tmp = join(this.layout.dir, `.unpack-${m.version}`);
      await rm(tmp, { recursive: true, force: true });
      await mkdir(tmp, { recursive: true, mode: 0o700 });
      await promisify(execFile)('tar', ['-xzf', file, '-C', tmp]);
      if (!existsSync(join(tmp, m.entry))) throw new Error(`the release has no ${m.entry}`);
      await writeFile(join(tmp, 'release.json'), JSON.stringify(m));
      await rm(dir, { recursive: true, force: true });
      await rename(tmp, dir);
      await rm(file, { force: true });
      while (this.o.busy()) await new Promise((r) => setTimeout(r, this.o.busyPollMs ?? 1000));
      // The trial first, then the switch: a power cut between the two leaves `current` on the
      // old release with a trial the launcher sees was never started (docs/updates.md).
      await this.layout.writeTrial({ release: p.release, to: m.version, from, starts: 0, started_at: 0 });
      await this.layout.switchTo(m.version);
      this.o.log('update: switched, restarting into the new release', { version: m.version, from });
      this.o.restart();
    } catch (e) {
      this.working = undefined;
      const reason = messageOf(e);
      this.o.log('update failed', { version: m.version, reason });
      await this.setReport({
        release: p.release,
        version: m.version,
        outcome: 'failed',
        reason: reason.slice(0, 500),
        at: Date.now(),
      });
    }
  }

  private async setReport(r: UpdateReport): Promise<void> {
    this.report = r;
    await this.layout.writeResult(r);
    this.o.changed();
  }
}
