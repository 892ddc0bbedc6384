// The first step of a start (server.ts): the secret key, the database and its schema, the
// repositories. Each failure is a StartupError naming the setting that fixes it
// (docs/configuration.md, "When the service cannot start").
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { migrate } from '../db/migrate.ts';
import { checkSecretKey, openConfiguredDb, openSecretBox } from '../deployment.ts';
import { SecretKeyError, type SecretBox } from '../secret-box.ts';
import { createRepositories, type Repositories } from '../services.ts';
import { databaseError, dataDirError, StartupError } from '../startup-error.ts';
import type { Cleanup } from './cleanup.ts';

export interface OpenedData {
  box: SecretBox;
  db: Db;
  repos: Repositories;
}

export async function openData(
  config: Config,
  log: Logger,
  cleanup: Cleanup,
  pgSchema: string | undefined,
): Promise<OpenedData> {
  // The data directory holds the SQLite database, the default key file and demo.json, whatever
  // the database engine.
  let box: SecretBox;
  try {
    box = openSecretBox(config);
  } catch (e) {
    if (e instanceof SecretKeyError)
      throw new StartupError(
        e.message,
        config.secretKey.kind === 'env' ? 'BOXHUB_SECRET_KEY' : 'BOXHUB_SECRET_KEY_FILE',
        { cause: e },
      );
    throw dataDirError(e, config.dataDir);
  }
  if (config.databaseUrl && config.secretKey.kind === 'file' && !config.secretKey.explicit) {
    log.warn(
      { keyFile: config.secretKey.path },
      "DATABASE_URL is set and the secret key is this node's own file: every node and the CLI need the same key (BOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE)",
    );
  }
  let db: Db;
  try {
    db = await openConfiguredDb(config, pgSchema, {
      onConnectionError: (err) => log.warn({ err: err.message }, 'database connection lost; the pool opens another'),
      onCheckpointerFailure: (err) =>
        log.warn({ err: err.message }, "SQLite's checkpoint worker failed; commits checkpoint the log again"),
    });
  } catch (e) {
    throw databaseError(dataDirError(e, config.dataDir), config.databaseUrl);
  }
  cleanup.push(() => db.close());
  try {
    await migrate(db);
  } catch (e) {
    throw databaseError(dataDirError(e, config.dataDir), config.databaseUrl);
  }
  const repos = createRepositories(db, box);
  const sealed = await checkSecretKey(repos.applications, box).catch((e: unknown) => {
    throw e instanceof SecretKeyError ? new StartupError(e.message, 'BOXHUB_SECRET_KEY', { cause: e }) : e;
  });
  if (sealed > 0) log.info({ applications: sealed }, 'callback secrets stored in plain text were encrypted');
  return { box, db, repos };
}
