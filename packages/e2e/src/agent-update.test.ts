// Agent updates on a box (docs/updates.md): the real `boxhub launch` running the real `boxhub
// agent`, sent releases through the operator API. A real agent release is installed and reports
// its version; a release that crashes at start and one that never connects are rolled back by
// the box itself; unsigned, wrongly signed, foreign and older releases are refused; a kill -9 of
// the box in the middle of an update leaves it starting one of the two releases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseState } from '@boxhub/server/modules/devices/view.ts';
import { eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import type { BoxState } from '@boxhub/protocol';
import { entries, makeRelease, releaseKeys, startBox, type Box, type TestRelease } from './release-rig.ts';

const TOKEN = 'operator-token-for-update-tests-0123456789';

interface Rig { t: TestServer; uuid: string; secret: string; keys: { privateKey: string; publicKey: string } }

async function rig(): Promise<Rig> {
  const t = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: TOKEN } });
  const d = await t.registerDevice();
  return { t, uuid: d.uuid, secret: d.secret, keys: releaseKeys() };
}

async function operator<T>(t: TestServer, path: string, body?: unknown): Promise<{ code: number; msg: string; data: T }> {
  const res = await fetch(`${t.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return await res.json() as { code: number; msg: string; data: T };
}

async function upload(t: TestServer, r: TestRelease): Promise<string> {
  const res = await operator<{ id: string }>(t, '/api/operator/release/upload', { manifest: r.manifest, signature: r.signature, package: r.bytes.toString('base64') });
  assert.equal(res.code, 0, res.msg);
  return res.data.id;
}

async function state(s: Rig): Promise<BoxState | undefined> {
  const d = await s.t.server.repos.devices.findByUuid(s.uuid);
  return d ? parseState(d) : undefined;
}

const reported = (s: Rig, what: (st: BoxState) => boolean, label: string, ms = 30_000) =>
  eventually(async () => { const st = await state(s); return st && what(st) ? st : undefined; }, label, ms);

async function online(s: Rig, version: string): Promise<void> {
  await reported(s, (st) => st.version === version, `the box online with version ${version}`);
  await eventually(async () => (await s.t.server.repos.devices.findByUuid(s.uuid))?.online === 1, 'the box online');
}

async function withBox(o: { healthTimeoutSec?: number; maxStarts?: number }, work: (s: Rig, box: Box) => Promise<void>): Promise<void> {
  const s = await rig();
  const box = startBox(s.t.mqttUrl, s.uuid, s.secret, s.keys.publicKey, o);
  try {
    await work(s, box);
  } catch (e) {
    process.stderr.write(`box log:\n${box.lines.slice(-40).join('\n')}\n`);
    throw e;
  } finally {
    await box.stop();
    rmSync(box.stateDir, { recursive: true, force: true });
    await s.t.close();
  }
}

test('a real agent release: installed beside the running one, switched to, and its version reported', async () => {
  await withBox({}, async (s) => {
    await online(s, '0.1.0');
    const id = await upload(s.t, makeRelease('0.2.0', entries.real, s.keys.privateKey));
    const sent = await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: id });
    assert.equal(sent.code, 0, sent.msg);
    const st = await reported(s, (x) => x.version === '0.2.0' && x.update?.outcome === 'updated', 'version 0.2.0 reported, update done');
    assert.equal(st.update?.release, id);
    const history = await operator<{ history: Array<{ what: string; detail?: string }> }>(s.t, `/api/operator/device/history?uuid=${s.uuid}`);
    assert.ok(history.data.history.some((h) => h.what === 'update' && h.detail === 'updated 0.2.0'), JSON.stringify(history.data));
  });
});

test('a release that crashes at start: the box goes back to the previous one by itself and says why', async () => {
  await withBox({ maxStarts: 2 }, async (s, box) => {
    await online(s, '0.1.0');
    const id = await upload(s.t, makeRelease('0.3.0', entries.crash, s.keys.privateKey));
    assert.equal((await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: id })).code, 0);
    const st = await reported(s, (x) => x.update?.outcome === 'rolled_back', 'the rollback reported');
    assert.equal(st.version, '0.1.0');
    assert.equal(st.update?.version, '0.3.0');
    assert.match(st.update?.reason ?? '', /exited 2 times without reporting healthy/);
    assert.ok(box.alive());
  });
});

test('a release that never connects: rolled back once the health time is up', async () => {
  await withBox({ healthTimeoutSec: 5 }, async (s) => {
    await online(s, '0.1.0');
    const id = await upload(s.t, makeRelease('0.4.0', entries.silent, s.keys.privateKey));
    assert.equal((await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: id })).code, 0);
    const st = await reported(s, (x) => x.update?.outcome === 'rolled_back', 'the rollback reported');
    assert.equal(st.version, '0.1.0');
    assert.match(st.update?.reason ?? '', /did not connect and report healthy within 5 s/);
  });
});

test('unsigned, wrongly signed, foreign and older releases are refused; the box keeps running its own', async () => {
  await withBox({}, async (s, box) => {
    await online(s, '0.1.0');
    const other = releaseKeys();
    const wrongKey = makeRelease('0.5.0', entries.real, other.privateKey);
    const forged = { ...makeRelease('0.5.1', entries.real, s.keys.privateKey) };
    // Signed for another manifest: the signature of 0.5.1 over a tarball claiming 0.5.2.
    const unsigned = { ...forged, manifest: { ...forged.manifest, version: '0.5.2' } };
    const foreign = makeRelease('0.6.0', entries.real, s.keys.privateKey, { platform: 'win32-ia32' });
    const older = makeRelease('0.0.9', entries.real, s.keys.privateKey);
    const cases: Array<[TestRelease, RegExp]> = [
      [wrongKey, /not signed by this box's release key/],
      [unsigned, /not signed by this box's release key/],
      [foreign, /for win32-ia32/],
      [older, /older than 0\.1\.0/],
    ];
    let olderId = '';
    for (const [r, why] of cases) {
      const releaseId = await upload(s.t, r);
      if (r === older) olderId = releaseId;
      const res = await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: releaseId });
      assert.equal(res.code, 30008, `${r.manifest.version}: ${res.msg}`);
      assert.match(res.msg, why);
    }
    const st = await reported(s, (x) => x.update?.outcome === 'refused' && x.update.version === '0.0.9', 'the last refusal reported');
    assert.equal(st.version, '0.1.0');
    // Told to downgrade, the older one is taken (a real agent: it becomes healthy).
    const res = await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: olderId, downgrade: true });
    assert.equal(res.code, 0, res.msg);
    await reported(s, (x) => x.version === '0.0.9' && x.update?.outcome === 'updated', 'the downgrade done');
    assert.ok(box.alive());
  });
});

test('kill -9 in the middle of an update: the box starts one of the two releases and finishes the decision', async () => {
  const s = await rig();
  let box = startBox(s.t.mqttUrl, s.uuid, s.secret, s.keys.publicKey, { healthTimeoutSec: 6 });
  const stateDir = box.stateDir;
  try {
    await online(s, '0.1.0');
    // Power cut after the trial was written, before the switch: the old release starts, the
    // update is reported interrupted.
    await box.kill9();
    const releases = join(stateDir, 'releases');
    writeFileSync(join(releases, 'result.json'), JSON.stringify({ version: '0.7.0', outcome: 'installing', at: Date.now() }));
    writeFileSync(join(releases, 'trial.json'), JSON.stringify({ to: '0.7.0', from: null, starts: 0, started_at: 0 }));
    box = startBox(s.t.mqttUrl, s.uuid, s.secret, s.keys.publicKey, { healthTimeoutSec: 6, stateDir });
    let st = await reported(s, (x) => x.update?.outcome === 'interrupted', 'the interrupted update reported');
    assert.equal(st.version, '0.1.0');

    // A release on trial that never becomes healthy, and the box killed while it runs: the
    // restarted launcher goes on from what is on disk and rolls back.
    const id = await upload(s.t, makeRelease('0.8.0', entries.silent, s.keys.privateKey));
    assert.equal((await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: id })).code, 0);
    await eventually(() => box.lines.some((l) => l.includes('"version":"0.8.0","trial":true')), 'the trial release started');
    assert.equal(readlinkSync(join(releases, 'current')), '0.8.0');
    await box.kill9();
    box = startBox(s.t.mqttUrl, s.uuid, s.secret, s.keys.publicKey, { healthTimeoutSec: 6, stateDir });
    st = await reported(s, (x) => x.update?.outcome === 'rolled_back' && x.update.version === '0.8.0', 'the rollback after the kill reported');
    assert.equal(st.version, '0.1.0');
    assert.throws(() => readlinkSync(join(releases, 'current')), 'back on the installed agent: no current link');
  } catch (e) {
    process.stderr.write(`box log:\n${box.lines.slice(-40).join('\n')}\n`);
    throw e;
  } finally {
    await box.stop();
    rmSync(stateDir, { recursive: true, force: true });
    await s.t.close();
  }
});
