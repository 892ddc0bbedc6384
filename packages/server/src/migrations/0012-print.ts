import type { Kysely } from 'kysely';

// Print tasks (modules/print): the fields of the print task (docs/api.md) besides the shared life.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('pages', 'integer').execute();
  await db.schema.alterTable('tasks').addColumn('printed_pages', 'integer').execute();
  await db.schema.alterTable('tasks').addColumn('download_spent_ms', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('download_spent_ms').execute();
  await db.schema.alterTable('tasks').dropColumn('printed_pages').execute();
  await db.schema.alterTable('tasks').dropColumn('pages').execute();
}
