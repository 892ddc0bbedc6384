import { sql, type Kysely } from 'kysely';
import { PostgresAdapter } from 'kysely';

// The teacher's review loop (docs/cards.md, "The review loop"): every correction of a
// student's recognition result, as an append-only audit trail. A row is never changed or
// deleted by the service; triggers refuse UPDATE and DELETE on both databases, so a bug (or a
// hand at the SQL prompt) cannot rewrite who changed what. Not tied to the task's row: the trail
// outlives the task's expiry (its page images and readings are destroyed with the task).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('recognition_corrections')
    .addColumn('task_uuid', 'varchar(64)', (c) => c.notNull())
    .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
    /** The student's place in scan order, from 1 (as the review items number them). */
    .addColumn('student', 'integer', (c) => c.notNull())
    /** 1, 2, …: the result's revision this correction made (the recognizer's own is 0). */
    .addColumn('revision', 'integer', (c) => c.notNull())
    /** Who: the API key (its id) the correction came with, over the API or the console. */
    .addColumn('key_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('via', 'varchar(16)', (c) => c.notNull())
    /** Who, in the application's words (optional `reviewer`, e.g. the teacher's name). */
    .addColumn('reviewer', 'varchar(200)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** What was asked (JSON: areas set, student number typed, sheets marked not a card). */
    .addColumn('correction', 'text', (c) => c.notNull())
    /** The per-student callback body this revision sent (JSON, without its page links). */
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('callback_id', 'varchar(64)', (c) => c.notNull())
    .addPrimaryKeyConstraint('recognition_corrections_pk', ['task_uuid', 'student', 'revision'])
    .execute();
  await db.schema
    .createIndex('recognition_corrections_app')
    .on('recognition_corrections')
    .columns(['app_id', 'task_uuid'])
    .execute();

  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`CREATE FUNCTION recognition_corrections_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'recognition_corrections is append-only'; END $$`.execute(db);
    await sql`CREATE TRIGGER recognition_corrections_append_only BEFORE UPDATE OR DELETE ON recognition_corrections
      FOR EACH ROW EXECUTE FUNCTION recognition_corrections_append_only()`.execute(db);
  } else {
    await sql`CREATE TRIGGER recognition_corrections_no_update BEFORE UPDATE ON recognition_corrections
      BEGIN SELECT RAISE(ABORT, 'recognition_corrections is append-only'); END`.execute(db);
    await sql`CREATE TRIGGER recognition_corrections_no_delete BEFORE DELETE ON recognition_corrections
      BEGIN SELECT RAISE(ABORT, 'recognition_corrections is append-only'); END`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('recognition_corrections').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter)
    await sql`DROP FUNCTION IF EXISTS recognition_corrections_append_only()`.execute(db);
}
