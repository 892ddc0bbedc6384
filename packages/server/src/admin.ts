// The database and services of the CLI's administration commands (`boxhub app`, `boxhub
// device`): only what they use. Importing the whole server (HTTP, broker, workers, the
// recognizer) cost about 1.3 s of CPU for every such command.
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { migrate } from './db/migrate.ts';
import { checkSecretKey, openConfiguredDb, openSecretBox } from './deployment.ts';
import { ApplicationRepository } from './modules/applications/repository.ts';
import { ApplicationService } from './modules/applications/service.ts';
import { DeviceRepository } from './modules/devices/repository.ts';
import { DeviceService } from './modules/devices/service.ts';
import { FleetService } from './modules/fleet/service.ts';

export { loadConfig, ConfigError, type Config } from './config.ts';
export { SecretKeyError } from './secret-box.ts';
export type { ApplicationService, DeviceService, FleetService };

export interface AdminDb {
  applications: ApplicationService;
  devices: DeviceService;
  fleet: FleetService;
  close(): Promise<void>;
}

/** Opens the configured database (migrated) with the deployment's secret key, checked. A
 *  failure to open or migrate is thrown as `{ opening: true }` so the caller can say where. */
export async function openAdmin(config: Config): Promise<AdminDb> {
  const box = openSecretBox(config);
  let db;
  try {
    db = await openConfiguredDb(config);
    await migrate(db);
  } catch (e) {
    await db?.close();
    throw Object.assign(e as Error, { opening: true });
  }
  try {
    const applications = new ApplicationRepository(db.kysely, box);
    await checkSecretKey(applications, box);
    const devices = new DeviceService(new DeviceRepository(db.kysely, { dataVersion: db.dataVersion }), systemClock);
    return {
      applications: new ApplicationService(applications, systemClock),
      devices,
      fleet: new FleetService({ db: db.kysely, devices, clock: systemClock }),
      close: () => db.close(),
    };
  } catch (e) {
    await db.close();
    throw e;
  }
}
