import { sql, type Kysely } from 'kysely';

// Scan and print tasks (docs/tasks.md): one table for the life every task shares, the items a
// scan produces, and the box events already applied (a duplicate changes nothing).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('uuid', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('app_id', 'varchar(64)', (c) => c.notNull().references('applications.id'))
    .addColumn('device_uuid', 'varchar(64)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('callback_url', 'varchar(200)')
    /** What the box was given (resolved options), JSON. */
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('error_code', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error_message', 'varchar(500)')
    /** Boot id of the box's agent that took the task (BoxState.boot). */
    .addColumn('box_boot', 'varchar(64)')
    /** Last box event applied (seq), per task. */
    .addColumn('last_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('acked_at', 'bigint')
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // Scan counters (docs/api.md, "Scan task": item_size, total_pages, total_file_size).
    .addColumn('item_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('page_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('file_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  // docs/api.md, "Scan task": at most one scan per device at a time. A partial unique index makes the
  // lock one atomic insert on both engines: no read-then-write race.
  await sql`CREATE UNIQUE INDEX tasks_one_active_scan ON tasks (device_uuid) WHERE kind = 'scan' AND state <> 'ended'`.execute(
    db,
  );
  await db.schema.createIndex('tasks_device_idx').on('tasks').columns(['device_uuid', 'state']).execute();
  await db.schema.createIndex('tasks_app_idx').on('tasks').columns(['app_id', 'kind', 'created_at']).execute();

  await db.schema
    .createTable('scan_items')
    .addColumn('task_uuid', 'varchar(64)', (c) => c.notNull().references('tasks.uuid').onDelete('cascade'))
    .addColumn('item_id', 'integer', (c) => c.notNull())
    /** Number of pages (scanned sides) and where they sit in the stack, JSON [{paper_number,page_number,front}]. */
    .addColumn('pages', 'integer', (c) => c.notNull())
    .addColumn('page_list', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'varchar(300)')
    .addColumn('file_bytes', 'bigint')
    .addColumn('md5', 'varchar(32)')
    .addColumn('cipher', 'varchar(1024)')
    .addColumn('upload_spent_ms', 'bigint')
    .addColumn('scanned_at', 'bigint', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('scan_items_pk', ['task_uuid', 'item_id'])
    .execute();

  await db.schema
    .createTable('box_events')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('task_uuid', 'varchar(64)', (c) => c.notNull().references('tasks.uuid').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('box_events_task_idx').on('box_events').columns(['task_uuid', 'seq']).unique().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('box_events').execute();
  await db.schema.dropTable('scan_items').execute();
  await db.schema.dropTable('tasks').execute();
}
