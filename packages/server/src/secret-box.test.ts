// Secrets at rest (docs/configuration.md, "Secrets at rest"): callback signing secrets are stored
// encrypted under a key from the environment or an owner-only key file; the data directory and the
// SQLite files are created owner-only whatever the umask.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engine, startTestServer } from './testing/harness.ts';
import { loadSecretBox, SecretBox } from './secret-box.ts';

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

test('callback secrets are stored encrypted and used decrypted; rotation keeps them encrypted', async () => {
  const t = await startTestServer();
  try {
    const app = await t.createApp();
    const row = await t.server.db.kysely
      .selectFrom('applications')
      .selectAll()
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow();
    assert.match(row.callback_secret, /^enc:v1:[0-9a-f]{8}:/);
    assert.ok(!row.callback_secret.includes(app.callback_secret.slice(6)), 'no plain secret in the row');
    assert.equal((await t.server.repos.callbacks.secrets([app.id])).get(app.id)?.current, app.callback_secret);
    const rotated = await app.api.post<{ callback_secret: string }>('/api/application/callback/rotate_secret', {});
    const after = await t.server.db.kysely
      .selectFrom('applications')
      .selectAll()
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow();
    assert.match(after.callback_secret, /^enc:v1:/);
    assert.match(after.previous_callback_secret ?? '', /^enc:v1:/);
    const s = (await t.server.repos.callbacks.secrets([app.id])).get(app.id);
    assert.deepEqual([s?.current, s?.previous], [rotated.data.callback_secret, app.callback_secret]);
  } finally {
    await t.close();
  }
});

test('secrets stored in plain text by an earlier version are encrypted when the server starts', async () => {
  const t = await startTestServer();
  const app = await t.createApp();
  const plain = `whsec_${randomBytes(32).toString('base64')}`;
  await t.server.db.kysely
    .updateTable('applications')
    .set({ callback_secret: plain, previous_callback_secret: null })
    .where('id', '=', app.id)
    .execute();
  await t.close({ keepData: true });
  const again = await startTestServer({ reuse: { dataDir: t.dataDir, pgSchema: t.pgSchema } });
  try {
    const row = await again.server.db.kysely
      .selectFrom('applications')
      .selectAll()
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow();
    assert.match(row.callback_secret, /^enc:v1:/);
    assert.equal((await again.server.repos.callbacks.secrets([app.id])).get(app.id)?.current, plain);
  } finally {
    await again.close();
    rmSync(t.dataDir, { recursive: true, force: true });
  }
});

test('a node with another key refuses to start, saying why, even before any secret exists; BOXHUB_SECRET_KEY is used when set', async () => {
  const key = randomBytes(32).toString('base64');
  const t = await startTestServer({ env: { BOXHUB_SECRET_KEY: key } });
  assert.equal(existsSync(join(t.dataDir, 'secret.key')), false, 'no key file when the key comes from the environment');
  const keyId = new SecretBox(Buffer.from(key, 'base64')).keyId;
  await t.close({ keepData: true });
  try {
    await assert.rejects(
      startTestServer({
        reuse: { dataDir: t.dataDir, pgSchema: t.pgSchema },
        env: { BOXHUB_SECRET_KEY: randomBytes(32).toString('base64') },
      }),
      new RegExp(`encrypted under another key \\(key id ${keyId}; .*same BOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE`),
    );
    const same = await startTestServer({
      reuse: { dataDir: t.dataDir, pgSchema: t.pgSchema },
      env: { BOXHUB_SECRET_KEY: key },
    });
    await same.close();
  } finally {
    rmSync(t.dataDir, { recursive: true, force: true });
  }
});

test('a key file others may read, or that is missing when named, is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-key-'));
  try {
    const file = join(dir, 'k');
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    assert.ok(loadSecretBox({ kind: 'file', path: file, explicit: true }).keyId);
    chmodSync(file, 0o640);
    assert.throws(
      () => loadSecretBox({ kind: 'file', path: file, explicit: true }),
      /may be read by others \(mode 640\); chmod 600 it/,
    );
    assert.throws(
      () => loadSecretBox({ kind: 'file', path: join(dir, 'none'), explicit: true }),
      /BOXHUB_SECRET_KEY_FILE .* does not exist/,
    );
    chmodSync(file, 0o600);
    writeFileSync(file, 'short');
    assert.throws(() => loadSecretBox({ kind: 'file', path: file, explicit: true }), /must hold 32 bytes in base64/);
    // The default file is made on first use, owner-only, and reused after.
    const made = loadSecretBox({ kind: 'file', path: join(dir, 'made'), explicit: false });
    assert.equal(mode(join(dir, 'made')), '600');
    assert.equal(loadSecretBox({ kind: 'file', path: join(dir, 'made'), explicit: false }).keyId, made.keyId);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the data directory and the SQLite files are owner-only whatever the umask', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'boxhub-umask-'));
  const dataDir = join(parent, 'fresh', 'data');
  const old = process.umask(0);
  try {
    const t = await startTestServer({ env: { BOXHUB_DATA_DIR: dataDir } });
    try {
      await t.createApp(); // a write: the WAL exists now
      assert.equal(mode(dataDir), '700');
      assert.equal(mode(join(dataDir, 'secret.key')), '600');
      if (engine === 'embedded')
        for (const f of ['boxhub.sqlite', 'boxhub.sqlite-wal', 'boxhub.sqlite-shm'])
          assert.equal(mode(join(dataDir, f)), '600', f);
      assert.ok(readFileSync(join(dataDir, 'secret.key'), 'utf8').trim().length >= 43);
    } finally {
      await t.close();
    }
  } finally {
    process.umask(old);
    rmSync(parent, { recursive: true, force: true });
  }
});
