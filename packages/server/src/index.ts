export { startServer, openConfiguredDb, openSecretBox, checkSecretKey, type RunningServer, type StartOptions } from './server.ts';
export { loadConfig, ConfigError, type Config } from './config.ts';
export { buildApp } from './app.ts';
export { migrate } from './db/migrate.ts';
export { openDb, type Db } from './db/connect.ts';
export { createRepositories } from './services.ts';
export { ApplicationService } from './modules/applications/service.ts';
export { DeviceService } from './modules/devices/service.ts';
export { systemClock, type Clock } from './clock.ts';
