import { Migrator } from 'kysely';
import { migrationProvider } from '../migrations/index.ts';
import type { Db } from './connect.ts';
import { messageOf } from '@boxhub/protocol';

/** Brings the schema up to date. Safe to run from several nodes: Kysely takes a lock. */
export async function migrate(db: Db): Promise<void> {
  // With a schema of its own (tests, several tenants on one server) the migration tables must
  // be named in it: Kysely otherwise finds another schema's lock table and skips creating one.
  // Unordered: migrations are numbered by the feature that added them (0004 hardening, 0010 jobs,
  // …), so a database may have run a later number before an earlier one lands; each migration
  // touches only its own tables, so the order between features does not matter.
  const migrator = new Migrator({
    db: db.kysely,
    provider: migrationProvider,
    allowUnorderedMigrations: true,
    ...(db.schema ? { migrationTableSchema: db.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    // The cause keeps the driver's error (its code says "unreachable" to startup-error.ts).
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${messageOf(error)}`, {
      cause: error,
    });
  }
}
