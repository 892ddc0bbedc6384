// The database and services the administration commands (`boxhub app`, `boxhub device`) work
// on: the server's, given the same environment (DATABASE_URL / BOXHUB_DATA_DIR, and the same
// secret key: BOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE, else <data dir>/secret.key).
// The server's code is loaded only here, when such a command runs (not for its --help).
import { join } from 'node:path';
import type { ApplicationService, Config, DeviceService } from '@boxhub/server';
import { Unreachable, UsageError } from './exit.ts';
import type { Progress } from './progress.ts';

export interface Admin { config: Config; applications: ApplicationService; devices: DeviceService }

/** Where the data is, for a person: never the password of a DATABASE_URL. */
function describeDb(config: Config): string {
  if (!config.databaseUrl) return `SQLite ${join(config.dataDir, 'boxhub.sqlite')}`;
  try {
    const u = new URL(config.databaseUrl);
    return `PostgreSQL ${u.host}${u.pathname}${config.databaseSchema ? ` (schema ${config.databaseSchema})` : ''}`;
  } catch { return 'PostgreSQL'; }
}

export async function withAdmin<T>(progress: Progress, work: (a: Admin) => Promise<T>): Promise<T> {
  const server = await import('@boxhub/server');
  const { SecretKeyError } = await import('@boxhub/server/secret-box.ts');
  let config: Config;
  try { config = server.loadConfig(); } catch (e) {
    // The environment is the command's input as much as its flags are.
    if (e instanceof server.ConfigError) throw new UsageError(e.message);
    throw e;
  }
  const where = describeDb(config);
  progress.update(`database: ${where}`);
  let db;
  try {
    const box = server.openSecretBox(config);
    try {
      db = await server.openConfiguredDb(config);
      await server.migrate(db);
    } catch (e) {
      throw new Unreachable(`cannot open the database (${where}): ${(e as Error).message}`);
    }
    const repos = server.createRepositories(db, box);
    // A CLI with another key than the server's would write secrets the server cannot read.
    await server.checkSecretKey(repos, box);
    const clock = server.systemClock;
    // The work prints its result on stdout: the passing state goes first.
    progress.clear();
    return await work({ config, applications: new server.ApplicationService(repos.applications, clock), devices: new server.DeviceService(repos.devices, clock) });
  } catch (e) {
    if (e instanceof SecretKeyError) throw new Unreachable(e.message);
    throw e;
  } finally {
    progress.clear();
    await db?.close();
  }
}
