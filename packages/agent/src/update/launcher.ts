// The launcher: what the box's supervisor runs (`boxhub launch`, docs/box-agent.service). It
// starts the agent of the release `current` names (the installed agent when there is none) and,
// while a release is on trial, watches it (docs/updates.md, "Trial and rollback"):
//
// - each start of the trial release is counted in trial.json before it happens; past
//   `maxStarts` starts without a healthy report the release crash-loops: back to the previous;
// - the trial release must report healthy (the agent ends the trial once connected and its
//   state is out) within `healthTimeoutMs` of its first start, or it is stopped and rolled back;
// - a trial whose release `current` does not name was never switched to (a power cut between
//   writing the trial and the switch): it is dropped and the update reported interrupted.
//
// Every decision is made from what is on disk, so a launcher killed at any point (kill -9, a
// power cut) comes back to the same decision, and `current` always names one of two releases.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
// Node's own modules and the layout only: the launcher stays resident beside the agent, so it
// loads none of the agent's code (no MQTT client, no schemas; docs/box-protocol.md, "Memory").
import { EXIT_SWITCH, ReleaseLayout, type Trial } from './layout.ts';

export interface LauncherOptions {
  stateDir: string;
  /** Arguments after the entry: `agent --server … --device …`. */
  args: string[];
  /** The installed agent's entry (bin/boxhub.mjs), run when no release is current. */
  baseEntry: string;
  healthTimeoutMs: number;
  maxStarts: number;
  /** Pause before starting a release on trial again after it exited (tests shorten it). */
  restartDelayMs?: number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
}

/** Runs until the agent exits for good (a signal, or an exit the supervisor must see); returns its status. */
export async function runLauncher(o: LauncherOptions): Promise<number> {
  const layout = new ReleaseLayout(o.stateDir);
  await mkdir(layout.dir, { recursive: true, mode: 0o700 });
  let stopping = false;
  let child: ChildProcess | undefined;
  const stop = (sig: NodeJS.Signals) => {
    stopping = true;
    child?.kill(sig);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    for (;;) {
      const trial = await startTrial(layout, o);
      const version = await layout.currentVersion();
      let entry = o.baseEntry;
      if (version) {
        try {
          entry = join(layout.release(version), (await manifestOf(layout, version)).entry);
        } catch (e) {
          if (!trial) throw e;
          await rollBack(layout, trial, e instanceof Error ? e.message : String(e), o);
          continue;
        }
      }
      o.log('launch', { version: version ?? 'installed', trial: trial !== null });
      const env = { ...process.env, ...(version ? { BOXHUB_RELEASE_VERSION: version } : {}) };
      const proc = spawn(process.execPath, [entry, ...o.args], { stdio: 'inherit', env });
      child = proc;
      let timedOut = false;
      const timer = trial
        ? setTimeout(
            () => {
              void layout.readTrial().then((t) => {
                if (t?.to !== trial.to) return;
                timedOut = true;
                proc.kill('SIGTERM');
                setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
              });
            },
            Math.max(0, trial.started_at + o.healthTimeoutMs - Date.now()),
          )
        : undefined;
      const code = await new Promise<number | null>((resolve) => {
        proc.once('exit', (c) => resolve(c));
        proc.once('error', (e) => {
          o.log('launch failed', { error: e.message });
          resolve(null);
        });
      });
      if (timer) clearTimeout(timer);
      child = undefined;
      if (stopping) return code ?? 0;
      if (code === EXIT_SWITCH) continue;
      if (trial && timedOut) {
        await rollBack(
          layout,
          trial,
          `the release did not connect and report healthy within ${Math.round(o.healthTimeoutMs / 1000)} s`,
          o,
        );
        continue;
      }
      if (trial && (await layout.readTrial())?.to === trial.to) {
        // Still on trial: its exit counts towards the crash loop (startTrial decides).
        o.log('the release on trial exited', { version: trial.to, code });
        await new Promise((r) => setTimeout(r, o.restartDelayMs ?? 1000));
        continue;
      }
      return code ?? 1;
    }
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}

/** The trial to run now, counted; null when none (or one just ended by a rollback). */
async function startTrial(layout: ReleaseLayout, o: LauncherOptions): Promise<Trial | null> {
  const trial = await layout.readTrial();
  if (!trial) return null;
  const current = await layout.currentVersion();
  if (current !== trial.to) {
    // The switch never happened: the old release still runs; the update did not.
    const r = await layout.readResult();
    if (r?.version === trial.to && r.outcome === 'installing') {
      await layout.writeResult({
        ...r,
        outcome: 'interrupted',
        reason: 'the box stopped before switching to the release',
        at: Date.now(),
      });
    }
    await layout.endTrial();
    return null;
  }
  if (trial.starts >= o.maxStarts) {
    await rollBack(layout, trial, `the release exited ${trial.starts} times without reporting healthy (crash loop)`, o);
    return null;
  }
  if (trial.started_at > 0 && Date.now() - trial.started_at > o.healthTimeoutMs) {
    await rollBack(
      layout,
      trial,
      `the release did not connect and report healthy within ${Math.round(o.healthTimeoutMs / 1000)} s`,
      o,
    );
    return null;
  }
  const next = { ...trial, starts: trial.starts + 1, started_at: trial.started_at || Date.now() };
  await layout.writeTrial(next);
  return next;
}

/** Back to the previous release. The report first: a cut after it comes back to the same decision. */
async function rollBack(layout: ReleaseLayout, trial: Trial, reason: string, o: LauncherOptions): Promise<void> {
  o.log('update rolled back', { version: trial.to, to: trial.from ?? 'installed', reason });
  await layout.writeResult({
    release: trial.release,
    version: trial.to,
    outcome: 'rolled_back',
    reason,
    at: Date.now(),
  });
  await layout.switchTo(trial.from);
  await layout.endTrial();
}

/** The release's entry from its release.json (written by the agent once it checked the manifest). */
async function manifestOf(layout: ReleaseLayout, version: string): Promise<{ entry: string }> {
  let entry: unknown;
  try {
    entry = (JSON.parse(await readFile(join(layout.release(version), 'release.json'), 'utf8')) as { entry?: unknown })
      .entry;
  } catch {
    entry = undefined;
  }
  // The manifest's own pattern (protocol/release.ts): a relative path without `..`.
  if (
    typeof entry !== 'string' ||
    !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(entry) ||
    entry.split('/').includes('..')
  ) {
    throw new Error(`release ${version} has no valid release.json`);
  }
  return { entry };
}
