import type { Kysely } from 'kysely';

// Scan progress (docs/scanning.md, "Progress"): what the box has scanned so far, before the
// items holding it are recorded (scan.progress requests).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('scanned_pages', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('tasks')
    .addColumn('skipped_pages', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('tasks').addColumn('last_page_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('last_page_at').execute();
  await db.schema.alterTable('tasks').dropColumn('skipped_pages').execute();
  await db.schema.alterTable('tasks').dropColumn('scanned_pages').execute();
}
