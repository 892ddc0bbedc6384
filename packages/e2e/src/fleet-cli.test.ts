// Provisioning by the hundred and the fleet commands (docs/fleet.md, docs/updates.md): the real
// `boxhub device import` on the server's database, a retried import that registers nothing twice,
// a box that logs in with a secret from the file (the real `boxhub agent`), and a release signed,
// uploaded and rolled out with `boxhub release` and `boxhub rollout`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { engine, eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import { bin, entries, makeRelease, releaseKeys, startBox } from './release-rig.ts';

const TOKEN = 'operator-token-for-fleet-cli-tests-012345';

/** The CLI on the test server's database and broker, with the operator token. */
async function boxhub(t: TestServer, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const external = engine === 'external';
  const env = {
    ...process.env,
    LOG_LEVEL: 'silent',
    BOXHUB_DATA_DIR: t.dataDir,
    BOXHUB_URL: t.url,
    BOXHUB_OPERATOR_TOKEN: TOKEN,
    DATABASE_URL: external ? (process.env.BOXHUB_TEST_DATABASE_URL ?? '') : '',
    BOXHUB_DATABASE_SCHEMA: t.pgSchema ?? '',
    MQTT_URL: external ? (process.env.BOXHUB_TEST_MQTT_URL ?? '') : '',
  };
  try {
    const r = await promisify(execFile)(process.execPath, [bin, ...args], { env });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

interface Summary {
  total: number;
  online: number;
  labels: Array<{ label: string; boxes: number; online: number }>;
}

async function summary(t: TestServer): Promise<Summary> {
  const res = await fetch(`${t.url}/api/operator/fleet/summary`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { data: Summary }).data;
}

test('a bulk import of 100 boxes with labels, retried: nothing registered twice; a box logs in with its secret from the file', {
  timeout: 2 * 60_000,
}, async () => {
  const t = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: TOKEN } });
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-import-'));
  let box: ReturnType<typeof startBox> | undefined;
  try {
    const tag = Date.now().toString(36).toUpperCase();
    const lines = [
      'code,model,labels',
      ...Array.from(
        { length: 100 },
        (_, i) => `${tag}-${i},BX-1,${i < 40 ? 'school=north "floor=2"' : 'school=south'}`,
      ),
    ];
    writeFileSync(join(dir, 'boxes.csv'), `${lines.join('\n')}\n`);
    const first = await boxhub(t, [
      'device',
      'import',
      join(dir, 'boxes.csv'),
      '--out',
      join(dir, 'secrets.csv'),
      '--json',
    ]);
    assert.equal(first.code, 0, first.stderr);
    const made = JSON.parse(first.stdout) as { devices: Array<{ code: string; uuid: string; status: string }> };
    assert.equal(made.devices.filter((d) => d.status === 'registered').length, 100);
    assert.equal(statSync(join(dir, 'secrets.csv')).mode & 0o777, 0o600);
    const secrets = readFileSync(join(dir, 'secrets.csv'), 'utf8').trim().split('\n');
    assert.equal(secrets[0], 'code,uuid,secret,status');
    assert.equal(secrets.length, 101);

    // The same list again (an import whose answer was lost): nothing new, no secret shown again;
    // an existing secrets file is never overwritten.
    assert.equal(
      (await boxhub(t, ['device', 'import', join(dir, 'boxes.csv'), '--out', join(dir, 'secrets.csv')])).code,
      2,
    );
    const again = await boxhub(t, [
      'device',
      'import',
      join(dir, 'boxes.csv'),
      '--out',
      join(dir, 'again.csv'),
      '--json',
    ]);
    assert.equal(again.code, 0, again.stderr);
    const second = JSON.parse(again.stdout) as typeof made;
    assert.deepEqual(
      second.devices.map((d) => [d.uuid, d.status]),
      made.devices.map((d) => [d.uuid, 'exists']),
    );
    assert.ok(
      readFileSync(join(dir, 'again.csv'), 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .every((l) => l.split(',')[2] === ''),
    );
    const s = await summary(t);
    assert.equal(s.total, 100);
    assert.deepEqual(
      s.labels.map((l) => [l.label, l.boxes]),
      [
        ['floor=2', 40],
        ['school=north', 40],
        ['school=south', 60],
      ],
    );

    // A box of the import starts with its line of the file.
    const [code, uuid, secret] = (secrets[1] ?? '').split(',');
    assert.equal(code, `${tag}-0`);
    box = startBox(t.mqttUrl, uuid ?? '', secret ?? '', releaseKeys().publicKey);
    await eventually(
      async () => (await summary(t)).labels.find((l) => l.label === 'floor=2')?.online === 1,
      'the imported box online',
      60_000,
    );
  } finally {
    if (box) {
      await box.stop();
      rmSync(box.stateDir, { recursive: true, force: true });
    }
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  }
});

test('boxhub release keygen, sign, upload and boxhub rollout create, info, cancel', {
  timeout: 2 * 60_000,
}, async () => {
  const t = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: TOKEN } });
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-release-cli-'));
  try {
    const keys = await boxhub(t, ['release', 'keygen', '--out', dir, '--json']);
    assert.equal(keys.code, 0, keys.stderr);
    assert.equal(statSync(join(dir, 'release-key.pem')).mode & 0o777, 0o600);
    assert.equal(
      (await boxhub(t, ['release', 'keygen', '--out', dir])).code,
      2,
      'an existing key is never overwritten',
    );
    // Any tarball: the CLI signs bytes; the one made by the rig is a real release layout.
    const r = makeRelease('0.2.0', entries.real, releaseKeys().privateKey);
    writeFileSync(join(dir, 'agent.tgz'), r.bytes);
    const signed = await boxhub(t, [
      'release',
      'sign',
      join(dir, 'agent.tgz'),
      '--key',
      join(dir, 'release-key.pem'),
      '--version',
      '0.2.0',
      '--json',
    ]);
    assert.equal(signed.code, 0, signed.stderr);
    const { verifyManifest } = await import('@boxhub/protocol/release.ts');
    const sig = JSON.parse(readFileSync(join(dir, 'agent.tgz.release.json'), 'utf8')) as {
      manifest: typeof r.manifest;
      signature: string;
    };
    assert.ok(verifyManifest(readFileSync(join(dir, 'release-key.pub.pem'), 'utf8'), sig.manifest, sig.signature));
    assert.deepEqual(sig.manifest, r.manifest);
    const up = await boxhub(t, ['release', 'upload', join(dir, 'agent.tgz'), '--json']);
    assert.equal(up.code, 0, up.stderr);
    const release = JSON.parse(up.stdout) as { id: string; version: string };
    assert.equal(release.version, '0.2.0');
    const twice = await boxhub(t, ['release', 'upload', join(dir, 'agent.tgz')]);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /error 30502/);

    const d = await t.registerDevice();
    const created = await boxhub(t, ['rollout', 'create', '--release', release.id, '--device', d.uuid, '--json']);
    assert.equal(created.code, 0, created.stderr);
    const ro = JSON.parse(created.stdout) as { id: string; state: string; waves: Array<{ pending: number }> };
    assert.deepEqual([ro.state, ro.waves.map((w) => w.pending)], ['running', [1]]);
    const info = await boxhub(t, ['rollout', 'info', ro.id]);
    assert.match(
      info.stdout,
      /^rollout .*: 0\.2\.0, running\n {2}wave 1 \*: 1 boxes, 0 updated, 0 failed, 0 installing, 1 pending\n$/,
    );
    assert.equal((await boxhub(t, ['rollout', 'cancel', ro.id])).code, 0);
    assert.match((await boxhub(t, ['rollout', 'info', ro.id])).stdout, /canceled \(canceled by the operator\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  }
});
