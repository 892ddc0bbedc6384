// Agent releases for tests (docs/updates.md): tarballs laid out as `npm pack` makes them
// (`package/…`), signed with a key made for the test, and boxes run as a box runs them: the real
// `boxhub launch` starting the real `boxhub agent`, as child processes on loopback.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { tempStateDir } from '@boxhub/agent';
import { newReleaseKeys, sha256Hex, signManifest, type ReleaseManifest } from '@boxhub/protocol/release.ts';

export const bin = new URL('../../cli/bin/boxhub.mjs', import.meta.url).pathname;

/** What a test release does when started. */
export const entries = {
  /** The real agent of this checkout: it connects, reports its state and takes commands. */
  real: `import ${JSON.stringify(bin)};\n`,
  /** Crashes at once, every time. */
  crash: 'console.error("this release crashes at start"); process.exit(1);\n',
  /** Runs but never connects. */
  silent: 'setInterval(() => {}, 1000);\n',
} as const;

export interface TestRelease {
  manifest: ReleaseManifest;
  signature: string;
  bytes: Buffer;
}

export function releaseKeys(): { privateKey: string; publicKey: string } {
  return newReleaseKeys();
}

/** A signed release tarball whose entry is `entry`. */
export function makeRelease(
  version: string,
  entry: string,
  privateKey: string,
  o: { platform?: string } = {},
): TestRelease {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-release-'));
  try {
    mkdirSync(join(dir, 'package', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'package', 'bin', 'boxhub.mjs'), entry);
    writeFileSync(join(dir, 'package', 'package.json'), JSON.stringify({ name: '@boxhub/cli', version }));
    execFileSync('tar', ['-czf', join(dir, 'r.tgz'), '-C', dir, 'package']);
    const bytes = readFileSync(join(dir, 'r.tgz'));
    const manifest: ReleaseManifest = {
      version,
      platform: o.platform ?? 'any',
      size: bytes.length,
      sha256: sha256Hex(bytes),
      entry: 'package/bin/boxhub.mjs',
    };
    return { manifest, signature: signManifest(privateKey, manifest), bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Box {
  child: ChildProcess;
  stateDir: string;
  lines: string[];
  exited: Promise<number | null>;
  alive(): boolean;
  stop(): Promise<number | null>;
  /** kill -9 of the launcher and the agent it runs (a power cut, as far as processes go). */
  kill9(): Promise<void>;
}

export interface BoxOptions {
  healthTimeoutSec?: number;
  maxStarts?: number;
  stateDir?: string;
}

/** `boxhub launch … -- agent …` as the box's systemd unit runs it (docs/box-agent.service). */
export function startBox(mqttUrl: string, uuid: string, secret: string, publicKey: string, o: BoxOptions = {}): Box {
  const stateDir = o.stateDir ?? tempStateDir();
  writeFileSync(join(stateDir, 'secret'), secret, { mode: 0o600 });
  writeFileSync(join(stateDir, 'release-key.pem'), publicKey);
  const child = spawn(
    process.execPath,
    [
      bin,
      'launch',
      '--state-dir',
      stateDir,
      '--health-timeout',
      String(o.healthTimeoutSec ?? 60),
      '--max-starts',
      String(o.maxStarts ?? 3),
      '--restart-delay',
      '50',
      '--',
      'agent',
      '--server',
      mqttUrl,
      '--device',
      uuid,
      '--secret-file',
      join(stateDir, 'secret'),
      '--state-dir',
      stateDir,
      '--release-key',
      join(stateDir, 'release-key.pem'),
      '--printer',
      'sim:',
      '--scanner',
      'sim:',
      '--keepalive',
      '5',
      '--reconnect-max',
      '1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  const lines: string[] = [];
  if (child.stderr) createInterface({ input: child.stderr }).on('line', (l) => lines.push(l));
  let done = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      done = true;
      resolve(code);
    }),
  );
  return {
    child,
    stateDir,
    lines,
    exited,
    alive: () => !done,
    async stop() {
      if (!done) child.kill('SIGTERM');
      return exited;
    },
    async kill9() {
      // The launcher is the leader of its own process group: both go at once.
      if (child.pid)
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone already */
        }
      await exited;
    },
  };
}
