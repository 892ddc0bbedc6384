// The server's SQLite checkpoints on a worker thread (sqlite-checkpointer.ts): its commits never
// checkpoint, the worker does, and should the worker fail the commits do again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { eventually } from '../testing/harness.ts';
import { openDb } from './connect.ts';
import { startCheckpointer } from './sqlite-checkpointer.ts';

function tempDb(t: { after: (fn: () => void) => void }): { path: string; db: SQLite.Database } {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-ckpt-'));
  const path = join(dir, 'x.sqlite');
  const db = new SQLite(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('create table t (id integer primary key, v blob)');
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, db };
}

/** Writes `pages` pages of 4 KiB in one transaction each of 100. */
function write(db: SQLite.Database, pages: number): void {
  const insert = db.prepare('insert into t (v) values (?)');
  for (let i = 0; i < pages; i += 100)
    db.transaction(() => {
      for (let j = 0; j < 100; j++) insert.run(Buffer.alloc(4000, i + j));
    })();
}

test("the connection's commits leave the log to the worker, which checkpoints all of it", async (t) => {
  const { path, db } = tempDb(t);
  const c = startCheckpointer(db, path, { intervalMs: 60_000 });
  t.after(() => c.stop());
  assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
  // The worker's first checkpoint ran at its start; from here on no checkpoint comes for a minute.
  await eventually(() => c.last, 'the first checkpoint');
  write(db, 3000);
  // Past 1000 pages SQLite's commit would have checkpointed and started the log again: the log
  // holds all 3000 pages (and their b-tree pages) still.
  assert.ok(statSync(`${path}-wal`).size > 3000 * 4096, `log of ${statSync(`${path}-wal`).size} bytes`);
  await c.stop();
  const d = startCheckpointer(db, path, { intervalMs: 60_000 });
  t.after(() => d.stop());
  const last = await eventually(() => d.last, "the new worker's checkpoint");
  assert.ok(last.log > 3000, `log frames ${last.log}`);
  assert.equal(last.checkpointed, last.log, 'every frame copied to the database');
});

test('a worker that cannot work turns the automatic checkpoints back on', async (t) => {
  const { db } = tempDb(t);
  const failures: Error[] = [];
  const c = startCheckpointer(db, '/nonexistent/boxhub/x.sqlite', { onFailure: (e) => failures.push(e) });
  t.after(() => c.stop());
  await eventually(() => failures.length > 0, 'the failure told');
  assert.match(failures[0]!.message, /unable to open|directory does not exist|SQLite checkpoint worker/i);
  assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
});

test("openDb: the server's connection checkpoints in the background, a command's in its commits", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-ckpt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const server = await openDb({ sqlitePath: join(dir, 'a.sqlite'), backgroundCheckpoints: true });
  const command = await openDb({ sqlitePath: join(dir, 'b.sqlite') });
  const auto = async (x: typeof server) =>
    (await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(x.kysely)).rows[0]
      ?.wal_autocheckpoint;
  assert.equal(await auto(server), 0);
  assert.equal(await auto(command), 1000);
  await server.close();
  await command.close();
});
