// A 100-box rollout (docs/updates.md, "Rollouts"): how long a release takes to reach every box
// of a fleet in 3 waves (14, 29, 57) with no pause between them, and what a failed wave does.
//
// One process: the real server (SQLite, embedded broker, operator API) and BENCH_BOXES agents
// (`BoxAgent`, the agent's own code) with a state directory each and the release key. Each box
// runs the whole update as a box does (the command checked, the release downloaded over HTTP,
// SHA-256 checked, unpacked with tar, the `current` symlink swapped, the trial ended once the
// new agent has reported its state); only the restart under the launcher is done in-process: the
// agent stops and a new one starts with the switched version, as `boxhub launch` would start it.
// So the time is the service's and the box's protocol, not node's start-up (a real box adds one
// agent start, 1-3 s, per wave: the waves' boxes restart in parallel).
//
// Then a release every box refuses (another platform): the first wave fails, the rollout stops,
// and the boxes of the later waves are never sent it.
//
// Env: BENCH_BOXES (100), BENCH_WAVES (3), BENCH_STEP_MS (200: BOXHUB_ROLLOUT_STEP_MS).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { BoxAgent, SimBuzzer, SimPrinter, SimScanner } from '@boxhub/agent';
import { newReleaseKeys, sha256Hex, signManifest, type ReleaseManifest } from '@boxhub/protocol/release.ts';
import { loadConfig, startServer } from '@boxhub/server';
import { header, sleep, tempDir } from './support/child.ts';

const BOXES = Number(process.env.BENCH_BOXES ?? 100);
const WAVES = Number(process.env.BENCH_WAVES ?? 3);
const STEP_MS = process.env.BENCH_STEP_MS ?? '200';
const TOKEN = 'bench-operator-token-0123456789abcdef';

function release(
  version: string,
  privateKey: string,
  platform = 'any',
): { manifest: ReleaseManifest; signature: string; package: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-release-'));
  mkdirSync(join(dir, 'package', 'bin'), { recursive: true });
  writeFileSync(join(dir, 'package', 'bin', 'boxhub.mjs'), '// the agent of this release\n');
  execFileSync('tar', ['-czf', join(dir, 'r.tgz'), '-C', dir, 'package']);
  const bytes = readFileSync(join(dir, 'r.tgz'));
  rmSync(dir, { recursive: true, force: true });
  const manifest: ReleaseManifest = {
    version,
    platform,
    size: bytes.length,
    sha256: sha256Hex(bytes),
    entry: 'package/bin/boxhub.mjs',
  };
  return { manifest, signature: signManifest(privateKey, manifest), package: bytes.toString('base64') };
}

interface Box {
  readonly agent: BoxAgent;
}

function startBox(
  url: string,
  uuid: string,
  secret: string,
  publicKey: string,
  stateDir: string,
  version: string,
): Box {
  let current: BoxAgent | undefined;
  const make = (v: string): BoxAgent =>
    new BoxAgent({
      link: { url, uuid, secret, keepaliveSec: 60, backoff: { baseMs: 100, maxMs: 1000 } },
      printer: new SimPrinter('sim:'),
      scanner: new SimScanner('sim:'),
      buzzer: new SimBuzzer(),
      identity: { model: 'BX-SIM', version: v, firmware: 'sim-1' },
      stateDir,
      reboot: async () => {},
      network: async () => ({ network_type: 'ethernet', local_ip: '192.0.2.10' }),
      update: {
        publicKey,
        // What `boxhub launch` does after exit 75: start the release `current` names.
        restart: () =>
          void current?.stop().then(async () => {
            const { readlinkSync } = await import('node:fs');
            current = make(readlinkSync(join(stateDir, 'releases', 'current')));
            await current.start();
          }),
      },
    });
  current = make(version);
  return {
    get agent(): BoxAgent {
      if (!current) throw new Error('no agent');
      return current;
    },
  };
}

async function operator<T>(base: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const env = (await res.json()) as { code: number; msg: string; data: T };
  if (env.code !== 0) throw new Error(`${path}: ${env.code} ${env.msg}`);
  return env.data;
}

interface Rollout {
  state: string;
  wave: number;
  reason?: string;
  waves: Array<{ boxes: number; pending: number; sent: number; updated: number; failed: number }>;
}

async function until(
  base: string,
  id: string,
  done: (r: Rollout) => boolean,
  timeoutMs: number,
): Promise<{ r: Rollout; waveAt: number[] }> {
  const t0 = performance.now();
  const waveAt: number[] = [];
  for (;;) {
    const r = await operator<Rollout>(base, `/api/operator/rollout/info?id=${id}`);
    r.waves.forEach((w, i) => {
      if (waveAt[i] === undefined && w.updated + w.failed === w.boxes) waveAt[i] = performance.now() - t0;
    });
    if (done(r)) return { r, waveAt };
    if (performance.now() - t0 > timeoutMs)
      throw new Error(`rollout not done after ${timeoutMs} ms: ${JSON.stringify(r)}`);
    await sleep(50);
  }
}

async function main(): Promise<void> {
  header('fleet-rollout: a release rolled out to every box in waves', [
    `${BOXES} boxes, ${WAVES} waves, no pause, rollout step ${STEP_MS} ms`,
  ]);
  const dataDir = tempDir();
  const server = await startServer(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      BOXHUB_MQTT_PORT: '0',
      BOXHUB_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      BOXHUB_OPERATOR_TOKEN: TOKEN,
      BOXHUB_ROLLOUT_STEP_MS: STEP_MS,
      DATABASE_URL: '',
      MQTT_URL: '',
    }),
    { logger: pino({ level: 'silent' }) },
  );
  const keys = newReleaseKeys();
  const boxes: Box[] = [];
  const dirs: string[] = [];
  try {
    const reg = await operator<{ devices: Array<{ uuid: string; secret: string }> }>(
      server.url,
      '/api/operator/device/bulk_register',
      {
        devices: Array.from({ length: BOXES }, (_, i) => ({ code: `BENCH-${i}`, model: 'BX-SIM', labels: ['bench'] })),
      },
    );
    for (const d of reg.devices) {
      const dir = mkdtempSync(join(tmpdir(), 'bench-box-'));
      dirs.push(dir);
      const b = startBox(server.mqttUrl, d.uuid, d.secret, keys.publicKey, dir, '0.1.0');
      boxes.push(b);
      await b.agent.start();
    }
    for (;;) {
      const s = await operator<{ online: number }>(server.url, '/api/operator/fleet/summary');
      if (s.online === BOXES) break;
      await sleep(100);
    }
    const good = await operator<{ id: string }>(
      server.url,
      '/api/operator/release/upload',
      release('0.2.0', keys.privateKey),
    );
    const t0 = performance.now();
    const ro = await operator<{ id: string }>(server.url, '/api/operator/rollout/create', {
      release_id: good.id,
      label: 'bench',
      waves: WAVES,
      wave_pause_s: 0,
      max_failed_pct: 0,
    });
    const { r, waveAt } = await until(server.url, ro.id, (x) => x.state !== 'running', 10 * 60_000);
    const total = performance.now() - t0;
    console.log(
      `rollout to ${BOXES} boxes: ${r.state} in ${(total / 1000).toFixed(1)} s; waves ${r.waves.map((w) => w.boxes).join(', ')} settled at ${waveAt.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')}; updated ${r.waves.reduce((n, w) => n + w.updated, 0)}, failed ${r.waves.reduce((n, w) => n + w.failed, 0)}`,
    );

    const bad = await operator<{ id: string }>(
      server.url,
      '/api/operator/release/upload',
      release('0.3.0', keys.privateKey, 'win32-ia32'),
    );
    const t1 = performance.now();
    const ro2 = await operator<{ id: string }>(server.url, '/api/operator/rollout/create', {
      release_id: bad.id,
      label: 'bench',
      waves: WAVES,
      wave_pause_s: 0,
      max_failed_pct: 10,
    });
    const stopped = await until(server.url, ro2.id, (x) => x.state !== 'running', 60_000);
    console.log(
      `a release every box refuses: ${stopped.r.state} after ${((performance.now() - t1) / 1000).toFixed(1)} s; per wave (failed/sent/pending): ${stopped.r.waves.map((w) => `${w.failed}/${w.sent}/${w.pending}`).join(', ')}`,
    );
    console.log(`reason: ${stopped.r.reason ?? ''}`);
  } finally {
    for (const b of boxes) await b.agent.stop();
    await server.close();
    for (const d of [...dirs, dataDir]) rmSync(d, { recursive: true, force: true });
  }
}

await main();
