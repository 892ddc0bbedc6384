// Rollbacks on a box (docs/updates.md, "What a box does"): the real `boxhub launch` running the
// real `boxhub agent`. A release that crashes at start and one that never connects are rolled
// back by the box itself (a kill -9 in the middle of an update: agent-kill.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entries, makeRelease } from './release-rig.ts';
import { online, operator, reported, upload, withBox } from './update-rig.ts';

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
