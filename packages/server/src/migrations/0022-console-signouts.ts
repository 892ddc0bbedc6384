import type { Kysely } from 'kysely';

// Console sessions that were signed out (docs/console.md "Security"): a session's cookie is a
// sealed token every node can open, so signing out must be recorded where every node looks.
// One row per signed-out session (a digest of its CSRF token, which is unique to it) until
// the session would have expired anyway.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_signouts')
    .addColumn('session', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_signouts_expiry_idx').on('console_signouts').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_signouts').execute();
}
