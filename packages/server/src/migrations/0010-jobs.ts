import { sql, type Kysely } from 'kysely';

// One claimed jobs table for every piece of delayed work (docs/jobs.md): callback attempts and
// retries, task expiry, periodic sweeps. A job is the next thing to do about one record (`kind`,
// `ref`): unique, so scheduling is idempotent. `run_at` is the due time; while a node works on
// the job it is that node's lease expiry, so a job whose node died falls due again by itself.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('kind', 'varchar(64)', (c) => c.notNull())
    .addColumn('ref', 'varchar(200)', (c) => c.notNull())
    .addColumn('fair_key', 'varchar(64)')
    .addColumn('payload', 'text')
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('claim_token', 'varchar(32)')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_kind_ref_uq').on('jobs').columns(['kind', 'ref']).unique().execute();
  // The claim walks one kind's due jobs in due order; "next due" reads the same index.
  await db.schema.createIndex('jobs_due_idx').on('jobs').columns(['kind', 'run_at']).execute();

  // Callbacks move onto the jobs table: every pending callback gets its delivery job, due when
  // its next attempt was (a claim in flight is simply due again at its lease end).
  await sql`INSERT INTO jobs (id, kind, ref, fair_key, payload, run_at, claim_token, attempts, created_at)
    SELECT 'cb-' || id, 'callback.deliver', id, app_id, NULL, next_attempt_at, NULL, 0, created_at
    FROM callbacks WHERE status = 'pending'`.execute(db);
  await db.schema.alterTable('callbacks').dropColumn('claim_token').execute();
  await db.schema.dropIndex('callbacks_due_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('callbacks').addColumn('claim_token', 'varchar(32)').execute();
  await db.schema.createIndex('callbacks_due_idx').on('callbacks').columns(['status', 'next_attempt_at']).execute();
  await db.schema.dropTable('jobs').execute();
}
