import type { Kysely } from 'kysely';

// Feedback-card recognition (docs/cards.md, "Recognition as a service"). The task itself is a
// row of `tasks` (kind 'recognition': its expiry, its end); these tables hold what only
// recognition has: the address and the scan it serves, the batches received (de-duplication),
// the pages (scan order, reading) and the application's card templates.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('recognitions')
    .addColumn('task_uuid', 'varchar(64)', (c) => c.primaryKey().references('tasks.uuid').onDelete('cascade'))
    /** The unguessable part of direct_addr ({public URL}/direct/{token}). */
    .addColumn('token', 'varchar(64)', (c) => c.notNull().unique())
    /** The one scan task that sends here (unique: one recognition task serves one scan). */
    .addColumn('scan_uuid', 'varchar(64)', (c) => c.unique())
    /** Next batch expected (boxhub direct v1 batches count from 1). */
    .addColumn('next_batch', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('pages_received', 'integer', (c) => c.notNull().defaultTo(0))
    /** scan.end received: its error_code; null before. */
    .addColumn('end_error', 'integer')
    /** The scan task ended (server side) at; with no scan.end by the grace time the transfer broke. */
    .addColumn('scan_ended_at', 'bigint')
    /** Student results queued so far (a callback each). */
    .addColumn('students_sent', 'integer', (c) => c.notNull().defaultTo(0))
    /** Bumped by every recognized page and every end: the assembler runs again when it moved. */
    .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('recognition_batches')
    .addColumn('task_uuid', 'varchar(64)', (c) => c.notNull().references('tasks.uuid').onDelete('cascade'))
    .addColumn('batch', 'integer', (c) => c.notNull())
    .addColumn('webhook_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('pages', 'integer', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('recognition_batches_pk', ['task_uuid', 'batch'])
    .execute();

  await db.schema
    .createTable('recognition_pages')
    .addColumn('task_uuid', 'varchar(64)', (c) => c.notNull().references('tasks.uuid').onDelete('cascade'))
    /** Position in scan order, from 1. */
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('batch', 'integer', (c) => c.notNull())
    .addColumn('item_id', 'integer', (c) => c.notNull())
    .addColumn('paper_number', 'integer', (c) => c.notNull())
    .addColumn('page_number', 'integer', (c) => c.notNull())
    .addColumn('front', 'integer', (c) => c.notNull())
    .addColumn('blob_key', 'varchar(300)', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    /** The engine's PageReading, JSON; null until recognized. */
    .addColumn('reading', 'text')
    .addColumn('recognized_at', 'bigint')
    .addPrimaryKeyConstraint('recognition_pages_pk', ['task_uuid', 'seq'])
    .execute();

  await db.schema
    .createTable('card_templates')
    .addColumn('app_id', 'varchar(64)', (c) => c.notNull().references('applications.id'))
    /** The layout id (8 hex digits), printed in every side's strip. */
    .addColumn('template_id', 'varchar(16)', (c) => c.notNull())
    .addColumn('card_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('layout', 'text', (c) => c.notNull())
    .addColumn('pdf_key', 'varchar(300)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('card_templates_pk', ['app_id', 'template_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('card_templates').execute();
  await db.schema.dropTable('recognition_pages').execute();
  await db.schema.dropTable('recognition_batches').execute();
  await db.schema.dropTable('recognitions').execute();
}
