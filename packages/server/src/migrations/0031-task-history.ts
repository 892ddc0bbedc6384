import type { Kysely } from 'kysely';

// Every task's history (docs/tasks.md, "History"): an append-only timeline of what happened and
// who said so. Rows go with their task (cascade), so the history expires with it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('task_history')
    /** Time-ordered within a node (tasks/history.ts): the timeline's order. */
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('task_uuid', 'varchar(64)', (c) => c.notNull().references('tasks.uuid').onDelete('cascade'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    /** Who said so: server, box, printer, scanner. */
    .addColumn('source', 'varchar(16)', (c) => c.notNull())
    .addColumn('what', 'varchar(32)', (c) => c.notNull())
    /** The entry's details, JSON (at most 2 KB). */
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('task_history_task_idx').on('task_history').columns(['task_uuid', 'at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('task_history').execute();
}
