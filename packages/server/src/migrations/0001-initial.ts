import type { Kysely } from 'kysely';

// Written with the schema builder only, so it runs unchanged on SQLite and PostgreSQL.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('applications')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('api_key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('api_key_prefix', 'varchar(32)', (c) => c.notNull())
    .addColumn('callback_secret', 'varchar(128)', (c) => c.notNull())
    .addColumn('previous_callback_secret', 'varchar(128)')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('cap_ess', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('devices')
    .addColumn('uuid', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('code', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('model', 'varchar(64)', (c) => c.notNull())
    .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('app_id', 'varchar(64)', (c) => c.references('applications.id'))
    .addColumn('name', 'varchar(200)')
    .addColumn('remark', 'varchar(1000)')
    .addColumn('active_at', 'bigint')
    .addColumn('online', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('session', 'varchar(64)')
    .addColumn('ended_session', 'varchar(64)')
    .addColumn('last_connect_at', 'bigint')
    .addColumn('last_disconnect_at', 'bigint')
    .addColumn('state', 'text')
    .addColumn('state_at', 'bigint')
    .addColumn('last_power_ink_flush_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // The device list is per application, ordered by activation.
  await db.schema.createIndex('devices_app_idx').on('devices').columns(['app_id', 'active_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('devices').execute();
  await db.schema.dropTable('applications').execute();
}
