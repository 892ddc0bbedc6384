import type { Kysely } from 'kysely';

// Device events (docs/callbacks.md, "Device events"): each application's device callback URL,
// and per device and topic (online, printer, scanner) the state last reported, against which a
// settled change is compared so that each change is reported once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('device_callbacks')
    .addColumn('app_id', 'varchar(64)', (c) => c.primaryKey().references('applications.id'))
    .addColumn('url', 'varchar(200)', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('device_reported')
    .addColumn('device_uuid', 'varchar(64)', (c) => c.notNull())
    .addColumn('topic', 'varchar(16)', (c) => c.notNull())
    /** The reported state, JSON (modules/device-events/snapshot.ts). */
    .addColumn('value', 'text', (c) => c.notNull())
    /** When the server first saw the change that is pending (null: none pending). */
    .addColumn('changed_at', 'bigint')
    .addColumn('reported_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('device_reported_pk', ['device_uuid', 'topic'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('device_reported').execute();
  await db.schema.dropTable('device_callbacks').execute();
}
