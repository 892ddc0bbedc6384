// Agent updates on a box (docs/updates.md): the real `boxhub launch` running the real `boxhub
// agent`, sent releases through the operator API. A real agent release is installed and reports
// its version; wrongly signed, foreign and older releases are refused (rollbacks:
// agent-rollback.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { entries, makeRelease, releaseKeys, type TestRelease } from './release-rig.ts';
import { online, operator, reported, upload, withBox } from './update-rig.ts';

test('a real agent release: installed beside the running one, switched to, and its version reported', async () => {
  await withBox({}, async (s) => {
    await online(s, '0.1.0');
    const id = await upload(s.t, makeRelease('0.2.0', entries.real, s.keys.privateKey));
    const sent = await operator(s.t, '/api/operator/device/update', { uuid: s.uuid, release_id: id });
    assert.equal(sent.code, 0, sent.msg);
    const st = await reported(
      s,
      (x) => x.version === '0.2.0' && x.update?.outcome === 'updated',
      'version 0.2.0 reported, update done',
    );
    assert.equal(st.update?.release, id);
    // The history is written once the state is stored (after it, by the same node): looked for until it is there.
    const history = () =>
      operator<{ history: Array<{ what: string; detail?: string }> }>(
        s.t,
        `/api/operator/device/history?uuid=${s.uuid}`,
      );
    await eventually(
      async () => (await history()).data.history.some((h) => h.what === 'update' && h.detail === 'updated 0.2.0'),
      "the update in the box's history",
    );
    assert.deepEqual(
      (await history()).data.history.filter((h) => h.what === 'update').map((h) => h.detail),
      ['updated 0.2.0', 'installing 0.2.0'],
    );
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
    const st = await reported(
      s,
      (x) => x.update?.outcome === 'refused' && x.update.version === '0.0.9',
      'the last refusal reported',
    );
    assert.equal(st.version, '0.1.0');
    // Told to downgrade, the older one is taken (a real agent: it becomes healthy).
    const res = await operator(s.t, '/api/operator/device/update', {
      uuid: s.uuid,
      release_id: olderId,
      downgrade: true,
    });
    assert.equal(res.code, 0, res.msg);
    await reported(s, (x) => x.version === '0.0.9' && x.update?.outcome === 'updated', 'the downgrade done');
    assert.ok(box.alive());
  });
});
