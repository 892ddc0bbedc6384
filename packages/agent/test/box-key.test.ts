// The box's key pair for end-to-end encrypted print files (docs/encryption.md, "Keys"): made
// once, kept owner-only, the same after every start; a damaged key file stops the agent with a
// message that says what to do rather than silently making a new key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyId, publicKeyOf } from '@boxhub/protocol/e2e.ts';
import { BOX_KEY_FILE, loadBoxKey } from '../src/store/box-key.ts';

test('made at the first start (0600), the same afterwards, its permissions kept owner-only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'box-key-'));
  try {
    const first = await loadBoxKey(join(dir, 'state'));
    const file = join(dir, 'state', BOX_KEY_FILE);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(first.kid, keyId(first.publicKey));
    assert.equal(await publicKeyOf(first.privateKey), first.publicKey);
    chmodSync(file, 0o644);
    const again = await loadBoxKey(join(dir, 'state'));
    assert.deepEqual(again, first);
    assert.equal(statSync(file).mode & 0o777, 0o600, 'loosened permissions are tightened again');
    assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { public_key: string }).public_key, first.publicKey);
    writeFileSync(file, '{"scheme":"boxhub-e2e-v1"}');
    await assert.rejects(loadBoxKey(join(dir, 'state')), /holds no private_key: remove it to make a new key pair/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
