// A PostgreSQL connection lost while the server holds it (the database restarted under a node:
// docs/chaos.md) is dropped and reported, never a crash: node-postgres emits it as an 'error'
// event, which ends the process when nobody listens. Runs where PostgreSQL is (the external pass).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { engine, testSchemaName } from '../testing/harness.ts';
import { openDb } from './connect.ts';

const url = process.env.BOXHUB_TEST_DATABASE_URL;

async function terminate(pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('select pg_terminate_backend($1)', [pid]);
  } finally {
    await admin.end();
  }
}

if (engine === 'external') {
  test('a connection terminated between the queries of a transaction is reported, and the next query runs on another', async () => {
    const lost: Error[] = [];
    const db = await openDb({ url, pgSchema: testSchemaName(), onConnectionError: (e) => lost.push(e) });
    try {
      const failed = await db.kysely.connection().execute(async (c) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(c);
        await terminate(Number(rows[0]?.pid));
        // Checked out and idle: the loss arrives as an event on the client, not as a query error.
        for (let i = 0; i < 200 && lost.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
        return sql`select 1`.execute(c).then(
          () => false,
          () => true,
        );
      });
      assert.ok(lost.length >= 1, 'the lost connection was reported');
      assert.equal(failed, true, 'a query on the lost connection fails with its own error');
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db.kysely);
      assert.equal(rows[0]?.one, 1);
    } finally {
      await db.close();
    }
  });

  test('an idle pooled connection terminated by the database is reported and replaced', async () => {
    const lost: Error[] = [];
    const db = await openDb({ url, pgSchema: testSchemaName(), onConnectionError: (e) => lost.push(e) });
    try {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.kysely);
      await terminate(Number(rows[0]?.pid));
      for (let i = 0; i < 200 && lost.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(lost.length, 1);
      const again = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.kysely);
      assert.notEqual(again.rows[0]?.pid, rows[0]?.pid, 'a new connection');
    } finally {
      await db.close();
    }
  });
}
