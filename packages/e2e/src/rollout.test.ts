// Rollouts in waves (docs/updates.md, "Rollouts") driven through real boxes: `boxhub launch`
// running the real `boxhub agent`. A whole rollout of a real release over two waves, one box
// offline until the last wave is under way; and a rollout of a release that crashes at start,
// which its first wave stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import { entries, makeRelease, releaseKeys, startBox, type Box, type TestRelease } from './release-rig.ts';

const TOKEN = 'operator-token-for-rollout-tests-0123456789';

interface Wave {
  wave: number;
  boxes: number;
  pending: number;
  sent: number;
  updated: number;
  failed: number;
}
interface Rollout {
  id: string;
  state: string;
  wave: number;
  waves: Wave[];
  reason?: string;
}

async function operator<T>(
  t: TestServer,
  path: string,
  body?: unknown,
): Promise<{ code: number; msg: string; data: T }> {
  const res = await fetch(`${t.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as { code: number; msg: string; data: T };
}

async function upload(t: TestServer, r: TestRelease): Promise<string> {
  const res = await operator<{ id: string }>(t, '/api/operator/release/upload', {
    manifest: r.manifest,
    signature: r.signature,
    package: r.bytes.toString('base64'),
  });
  assert.equal(res.code, 0, res.msg);
  return res.data.id;
}

interface Fleet {
  t: TestServer;
  keys: ReturnType<typeof releaseKeys>;
  boxes: Array<{ uuid: string; secret: string; code: string }>;
  running: Box[];
}

async function fleet(n: number): Promise<Fleet> {
  const t = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: TOKEN, BOXHUB_ROLLOUT_STEP_MS: '200' } });
  const list = Array.from({ length: n }, (_, i) => ({
    code: `RB${i}-${Date.now().toString(36)}`,
    model: 'BX-1',
    labels: ['school=north'],
  }));
  const reg = await operator<{ devices: Array<{ uuid: string; secret: string; code: string }> }>(
    t,
    '/api/operator/device/bulk_register',
    { devices: list },
  );
  assert.equal(reg.code, 0, reg.msg);
  return { t, keys: releaseKeys(), boxes: reg.data.devices, running: [] };
}

function start(f: Fleet, i: number, o: { maxStarts?: number } = {}): Box {
  const b = f.boxes[i];
  assert.ok(b);
  const box = startBox(f.t.mqttUrl, b.uuid, b.secret, f.keys.publicKey, o);
  f.running.push(box);
  return box;
}

async function close(f: Fleet): Promise<void> {
  for (const b of f.running) {
    await b.stop();
    rmSync(b.stateDir, { recursive: true, force: true });
  }
  await f.t.close();
}

const rollout = async (f: Fleet, id: string) =>
  (await operator<Rollout>(f.t, `/api/operator/rollout/info?id=${id}`)).data;

test('a whole rollout in two waves: every box updated, an offline one as soon as it is back', async () => {
  const f = await fleet(3);
  try {
    // Boxes 0 and 1 online; box 2 (in the second wave: waves follow the list) comes later.
    start(f, 0);
    start(f, 1);
    await eventually(
      async () => (await operator<{ online: number }>(f.t, '/api/operator/fleet/summary')).data.online === 2,
      'two boxes online',
      60_000,
    );
    const release = await upload(f.t, makeRelease('0.2.0', entries.real, f.keys.privateKey));
    const created = await operator<Rollout>(f.t, '/api/operator/rollout/create', {
      release_id: release,
      uuids: f.boxes.map((b) => b.uuid),
      waves: 2,
      wave_pause_s: 0,
      max_failed_pct: 0,
    });
    assert.equal(created.code, 0, created.msg);
    assert.deepEqual(
      created.data.waves.map((w) => w.boxes),
      [1, 2],
    );
    const id = created.data.id;
    await eventually(async () => (await rollout(f, id)).wave === 1, 'the second wave under way', 60_000);
    assert.equal((await rollout(f, id)).waves[0]?.updated, 1);
    start(f, 2);
    const done = await eventually(
      async () => {
        const r = await rollout(f, id);
        return r.state === 'done' ? r : undefined;
      },
      'the rollout done',
      90_000,
    );
    assert.deepEqual(
      done.waves.map((w) => w.updated),
      [1, 2],
    );
    const summary = (
      await operator<{ versions: Array<{ version: string; boxes: number }> }>(f.t, '/api/operator/fleet/summary')
    ).data;
    assert.deepEqual(summary.versions, [{ version: '0.2.0', boxes: 3 }]);
  } finally {
    await close(f);
  }
});

test('a failed wave stops the rollout: the next wave is never sent the release', async () => {
  const f = await fleet(3);
  try {
    for (let i = 0; i < 3; i++) start(f, i, { maxStarts: 1 });
    await eventually(
      async () => (await operator<{ online: number }>(f.t, '/api/operator/fleet/summary')).data.online === 3,
      'three boxes online',
      60_000,
    );
    const release = await upload(f.t, makeRelease('0.3.0', entries.crash, f.keys.privateKey));
    const created = await operator<Rollout>(f.t, '/api/operator/rollout/create', {
      release_id: release,
      percent: 100,
      waves: 2,
      wave_pause_s: 0,
      max_failed_pct: 0,
    });
    assert.equal(created.code, 0, created.msg);
    const stopped = await eventually(
      async () => {
        const r = await rollout(f, created.data.id);
        return r.state === 'stopped' ? r : undefined;
      },
      'the rollout stopped',
      60_000,
    );
    assert.equal(stopped.wave, 0);
    assert.deepEqual(
      stopped.waves.map((w) => [w.failed, w.sent, w.pending]),
      [
        [1, 0, 0],
        [0, 0, 2],
      ],
    );
    assert.match(stopped.reason ?? '', /wave 1 of 2: 1 of 1 boxes failed, more than 0%.*rolled_back/);
    // The box that took it rolled back by itself and is online on its old version.
    const summary = (
      await operator<{ online: number; versions: Array<{ version: string; boxes: number }> }>(
        f.t,
        '/api/operator/fleet/summary',
      )
    ).data;
    assert.deepEqual(summary.versions, [{ version: '0.1.0', boxes: 3 }]);
  } finally {
    await close(f);
  }
});
