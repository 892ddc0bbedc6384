// Power cuts during an update (docs/updates.md, "What a box does"): the real `boxhub launch`
// and `boxhub agent` killed with SIGKILL (launcher and agent at once) before the switch and during
// a trial; the box comes back on one of the two releases and finishes the decision from its disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { entries, makeRelease, startBox } from './release-rig.ts';
import { online, operator, reported, rig, upload } from './update-rig.ts';

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
    writeFileSync(
      join(releases, 'result.json'),
      JSON.stringify({ version: '0.7.0', outcome: 'installing', at: Date.now() }),
    );
    writeFileSync(join(releases, 'trial.json'), JSON.stringify({ to: '0.7.0', from: null, starts: 0, started_at: 0 }));
    box = startBox(s.t.mqttUrl, s.uuid, s.secret, s.keys.publicKey, { healthTimeoutSec: 6, stateDir });
    let st = await reported(s, (x) => x.update?.outcome === 'interrupted', 'the interrupted update reported');
    assert.equal(st.version, '0.1.0');

    // A release on trial that never becomes healthy, and the box killed while it runs: the
    // restarted launcher goes on from what is on disk and rolls back.
    const id = await upload(s.t, makeRelease('0.8.0', entries.silent, s.keys.privateKey));
    assert.equal((await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: id })).code, 0);
    await eventually(
      () => box.lines.some((l) => l.includes('"version":"0.8.0","trial":true')),
      'the trial release started',
    );
    assert.equal(readlinkSync(join(releases, 'current')), '0.8.0');
    await box.kill9();
    box = startBox(s.t.mqttUrl, s.uuid, s.secret, s.keys.publicKey, { healthTimeoutSec: 6, stateDir });
    st = await reported(
      s,
      (x) => x.update?.outcome === 'rolled_back' && x.update.version === '0.8.0',
      'the rollback after the kill reported',
    );
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
