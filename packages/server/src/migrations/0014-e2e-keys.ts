import { sql, type Kysely } from 'kysely';

// The applications' public keys for end-to-end encrypted scans (docs/encryption.md, "Keys").
// Every key registered stays: a scan task keeps the key it was created with.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('e2e_keys')
    .addColumn('app_id', 'varchar(64)', (c) => c.notNull().references('applications.id'))
    .addColumn('kid', 'varchar(16)', (c) => c.notNull())
    .addColumn('public_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .addPrimaryKeyConstraint('e2e_keys_pk', ['app_id', 'kid'])
    .execute();
  // One current key per application, whatever two registrations racing on two nodes do.
  await sql`CREATE UNIQUE INDEX e2e_keys_one_current ON e2e_keys (app_id) WHERE retired_at IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('e2e_keys').execute();
}
