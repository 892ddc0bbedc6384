// The database and services the administration commands (`boxhub app`, `boxhub device`) work
// on: the server's, given the same environment (DATABASE_URL / BOXHUB_DATA_DIR, and the same
// secret key: BOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE, else <data dir>/secret.key).
// The server's code is loaded only here, when such a command runs (not for its --help).
import { join } from 'node:path';
import type { ApplicationService, Config, DeviceService, FleetService } from '@boxhub/server/admin.ts';
import { messageOf, Unreachable, UsageError } from './exit.ts';
import type { Progress } from './progress.ts';

export interface Admin {
  config: Config;
  applications: ApplicationService;
  devices: DeviceService;
  fleet: FleetService;
}

/** Where the data is, for a person: never the password of a DATABASE_URL. */
function describeDb(config: Config): string {
  if (!config.databaseUrl) return `SQLite ${join(config.dataDir, 'boxhub.sqlite')}`;
  try {
    const u = new URL(config.databaseUrl);
    return `PostgreSQL ${u.host}${u.pathname}${config.databaseSchema ? ` (schema ${config.databaseSchema})` : ''}`;
  } catch {
    return 'PostgreSQL';
  }
}

export async function withAdmin<T>(progress: Progress, work: (a: Admin) => Promise<T>): Promise<T> {
  // The administration part of the server only (server/src/admin.ts): not the HTTP server,
  // broker and workers, which a command does not run.
  const admin = await import('@boxhub/server/admin.ts');
  let config: Config;
  try {
    config = admin.loadConfig();
  } catch (e) {
    // The environment is the command's input as much as its flags are.
    if (e instanceof admin.ConfigError) throw new UsageError(e.message);
    throw e;
  }
  const where = describeDb(config);
  progress.update(`database: ${where}`);
  let db: Awaited<ReturnType<typeof admin.openAdmin>> | undefined;
  try {
    try {
      // A CLI with another key than the server's would write secrets the server cannot read:
      // openAdmin checks the key against the database's.
      db = await admin.openAdmin(config);
    } catch (e) {
      if (typeof e === 'object' && e !== null && 'opening' in e && e.opening)
        throw new Unreachable(`cannot open the database (${where}): ${messageOf(e)}`);
      throw e;
    }
    // The work prints its result on stdout: the passing state goes first.
    progress.clear();
    return await work({ config, applications: db.applications, devices: db.devices, fleet: db.fleet });
  } catch (e) {
    if (e instanceof admin.SecretKeyError) throw new Unreachable(e.message);
    throw e;
  } finally {
    progress.clear();
    await db?.close();
  }
}
