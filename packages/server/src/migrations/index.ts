// Every migration, in order. A static list (not a directory scan) so the set is explicit in
// code review and works the same under tsx, a bundler or type stripping.
import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-callbacks.ts';
import * as m0003 from './0003-callback-retention.ts';

const migrations: Record<string, Migration> = {
  '0001-initial': m0001,
  '0002-callbacks': m0002,
  '0003-callback-retention': m0003,
};

export const migrationProvider: MigrationProvider = { getMigrations: async () => migrations };
