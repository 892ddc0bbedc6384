import { Migrator } from 'kysely';
import { migrationProvider } from '../migrations/index.ts';
import type { Db } from './connect.ts';

/** Brings the schema up to date. Safe to run from several nodes: Kysely takes a lock. */
export async function migrate(db: Db): Promise<void> {
  // With a schema of its own (tests, several tenants on one server) the migration tables must
  // be named in it: Kysely otherwise finds another schema's lock table and skips creating one.
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider, ...(db.schema ? { migrationTableSchema: db.schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String((error as Error)?.message ?? error)}`);
  }
}
