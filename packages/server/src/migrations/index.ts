// Every migration, in order. A static list (not a directory scan) so the set is explicit in
// code review and works the same under tsx, a bundler or type stripping.
import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-callbacks.ts';
import * as m0003 from './0003-callback-retention.ts';
import * as m0004 from './0004-hardening.ts';
import * as m0010 from './0010-jobs.ts';
import * as m0011 from './0011-tasks.ts';
import * as m0012 from './0012-print.ts';
import * as m0014 from './0014-e2e-keys.ts';
import * as m0020 from './0020-recognition.ts';
import * as m0022 from './0022-console-signouts.ts';
import * as m0023 from './0023-scan-progress.ts';
import * as m0025 from './0025-recognition-review.ts';
import * as m0030 from './0030-device-events.ts';
import * as m0031 from './0031-task-history.ts';
import * as m0040 from './0040-fleet.ts';

const migrations: Record<string, Migration> = {
  '0001-initial': m0001,
  '0002-callbacks': m0002,
  '0003-callback-retention': m0003,
  '0004-hardening': m0004,
  '0010-jobs': m0010,
  '0011-tasks': m0011,
  '0012-print': m0012,
  '0014-e2e-keys': m0014,
  '0020-recognition': m0020,
  '0022-console-signouts': m0022,
  '0023-scan-progress': m0023,
  '0025-recognition-review': m0025,
  '0030-device-events': m0030,
  '0031-task-history': m0031,
  '0040-fleet': m0040,
};

export const migrationProvider: MigrationProvider = { getMigrations: async () => migrations };
