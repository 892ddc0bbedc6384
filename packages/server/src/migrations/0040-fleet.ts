import type { Kysely } from 'kysely';

// Running a fleet (docs/updates.md, docs/fleet.md): signed agent releases, rollouts of a release
// in waves and each box's place in one, labels that select boxes, and each box's recent history
// (connects, disconnects, updates, errors).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('releases')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('version', 'varchar(40)', (c) => c.notNull())
    .addColumn('platform', 'varchar(40)', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('entry', 'varchar(200)', (c) => c.notNull())
    /** Base64 Ed25519 signature of the canonical manifest (protocol/release.ts). */
    .addColumn('signature', 'varchar(200)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('releases_version_idx')
    .on('releases')
    .columns(['version', 'platform'])
    .unique()
    .execute();

  await db.schema
    .createTable('rollouts')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('release_id', 'varchar(64)', (c) => c.notNull().references('releases.id'))
    /** running, done (every wave went through), stopped (a wave failed), canceled (operator). */
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('downgrade', 'integer', (c) => c.notNull())
    .addColumn('waves', 'integer', (c) => c.notNull())
    /** The wave under way (0-based). */
    .addColumn('wave', 'integer', (c) => c.notNull())
    .addColumn('wave_pause_ms', 'bigint', (c) => c.notNull())
    /** How long a wave waits for its boxes before the ones not done count as failed. */
    .addColumn('wave_timeout_ms', 'bigint', (c) => c.notNull())
    /** The rollout stops when more than this percentage of a wave fails. */
    .addColumn('max_failed_pct', 'integer', (c) => c.notNull())
    /** What chose the boxes, JSON ({uuids} | {label} | {percent}), as the operator gave it. */
    .addColumn('selector', 'text', (c) => c.notNull())
    .addColumn('wave_started_at', 'bigint')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();

  await db.schema
    .createTable('rollout_boxes')
    .addColumn('rollout_id', 'varchar(64)', (c) => c.notNull().references('rollouts.id').onDelete('cascade'))
    .addColumn('device_uuid', 'varchar(64)', (c) => c.notNull())
    .addColumn('wave', 'integer', (c) => c.notNull())
    /** pending, sent (the box took it), updated, failed (refused, failed or rolled back). */
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rollout_boxes_pk', ['rollout_id', 'device_uuid'])
    .execute();
  await db.schema
    .createIndex('rollout_boxes_device_idx')
    .on('rollout_boxes')
    .columns(['device_uuid', 'state'])
    .execute();

  await db.schema
    .createTable('device_labels')
    .addColumn('device_uuid', 'varchar(64)', (c) => c.notNull().references('devices.uuid').onDelete('cascade'))
    .addColumn('label', 'varchar(64)', (c) => c.notNull())
    .addPrimaryKeyConstraint('device_labels_pk', ['device_uuid', 'label'])
    .execute();
  await db.schema.createIndex('device_labels_label_idx').on('device_labels').columns(['label']).execute();

  await db.schema
    .createTable('device_history')
    /** Time-ordered within a node, like task_history ids: the timeline's order. */
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('device_uuid', 'varchar(64)', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    /** connect, disconnect, update, error. */
    .addColumn('what', 'varchar(16)', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema
    .createIndex('device_history_device_idx')
    .on('device_history')
    .columns(['device_uuid', 'at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['device_history', 'device_labels', 'rollout_boxes', 'rollouts', 'releases'])
    await db.schema.dropTable(t).execute();
}
