import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Hardening (docs/configuration.md): rate-limit windows several nodes share, several named and revocable API
// keys per application, and callback secrets stored encrypted. Schema builder (and SQL both
// engines speak) only.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per limited key (e.g. get_uuid misses of one application): a fixed window.
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'varchar(200)', (c) => c.primaryKey())
    .addColumn('hits', 'integer', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_limits_window_idx').on('rate_limits').column('window_start').execute();

  // API keys: several per application, each named, with its last use, revocable.
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('app_id', 'varchar(64)', (c) => c.notNull().references('applications.id'))
    .addColumn('name', 'varchar(100)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_app_idx').on('api_keys').columns(['app_id', 'created_at']).execute();
  // Each application's one key moves here, named "default"; the old columns keep a marker that
  // no key hashes to (they are NOT NULL UNIQUE, and SQLite cannot drop a UNIQUE column).
  await sql`INSERT INTO api_keys (id, app_id, name, key_hash, key_prefix, created_at)
    SELECT 'key-' || id, id, 'default', api_key_hash, api_key_prefix, created_at FROM applications`.execute(db);
  await sql`UPDATE applications SET api_key_hash = 'moved:' || id, api_key_prefix = ''`.execute(db);

  // Facts about the deployment every node must agree on (the secret key's id, secret-box.ts).
  await db.schema
    .createTable('meta')
    .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('value', 'varchar(200)', (c) => c.notNull())
    .execute();

  // Encrypted callback secrets are longer than the plain ones (secret-box.ts). SQLite does not
  // enforce VARCHAR lengths; PostgreSQL does.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema
      .alterTable('applications')
      .alterColumn('callback_secret', (c) => c.setDataType('varchar(512)'))
      .execute();
    await db.schema
      .alterTable('applications')
      .alterColumn('previous_callback_secret', (c) => c.setDataType('varchar(512)'))
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('meta').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('rate_limits').execute();
}
