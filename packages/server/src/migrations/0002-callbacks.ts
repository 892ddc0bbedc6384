import type { Kysely } from 'kysely';

// Callback outbox (architecture notes, "Callbacks" and "Persistence and jobs"): one row per
// message, one row per delivery attempt. Schema builder only, so it runs on both engines.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('callbacks')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('app_id', 'varchar(64)', (c) => c.notNull().references('applications.id'))
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('method', 'varchar(8)', (c) => c.notNull())
    .addColumn('event', 'varchar(64)', (c) => c.notNull())
    .addColumn('task_uuid', 'varchar(64)')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('wait_group', 'varchar(200)')
    .addColumn('wait_for', 'varchar(200)')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_index', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('claim_token', 'varchar(32)')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'varchar(500)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  // The worker's claim and its "next due" query walk only pending rows in due order.
  await db.schema.createIndex('callbacks_due_idx').on('callbacks').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('callbacks_app_idx').on('callbacks').columns(['app_id', 'created_at']).execute();
  await db.schema.createIndex('callbacks_task_idx').on('callbacks').columns(['app_id', 'task_uuid']).execute();
  await db.schema
    .createIndex('callbacks_group_idx')
    .on('callbacks')
    .columns(['app_id', 'wait_group', 'status'])
    .execute();

  await db.schema
    .createTable('callback_attempts')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('callback_id', 'varchar(64)', (c) => c.notNull().references('callbacks.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'varchar(500)')
    .addColumn('response', 'varchar(1000)')
    .addColumn('node_id', 'varchar(64)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('callback_attempts_cb_idx')
    .on('callback_attempts')
    .columns(['callback_id', 'started_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('callback_attempts').execute();
  await db.schema.dropTable('callbacks').execute();
}
