import type { Kysely } from 'kysely';

// Retention (modules/callbacks/retention.ts) deletes completed callbacks by completion time;
// without this index every sweep would scan the whole outbox. Pending rows have no
// completed_at, so they never enter the index's range.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('callbacks_completed_idx').on('callbacks').column('completed_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('callbacks_completed_idx').execute();
}
