// What every process of a deployment opens the same way, the server and the CLI's
// administration commands alike: the configured database and the key that encrypts stored
// secrets, checked against the one the database was first used with. Kept apart from server.ts
// so that a command can open them without loading the HTTP server, the broker and the workers.
import { join } from 'node:path';
import type { Config } from './config.ts';
import { ensureDataDir, openDb, type Db } from './db/connect.ts';
import type { ApplicationRepository } from './modules/applications/repository.ts';
import { loadSecretBox, SecretKeyError, type SecretBox } from './secret-box.ts';

export interface ServerDbOptions {
  /** A PostgreSQL connection lost outside a query (connect.ts, DbOptions). */
  onConnectionError?: (err: Error) => void;
  /** The server's own connection: SQLite's checkpoints on a worker thread (sqlite-checkpointer.ts). */
  onCheckpointerFailure?: (err: Error) => void;
}

/** The configured database; `server` for the server's own connection, not a command's. */
export function openConfiguredDb(config: Config, pgSchema?: string, server?: ServerDbOptions): Promise<Db> {
  const schema = pgSchema ?? config.databaseSchema;
  return openDb({
    url: config.databaseUrl,
    sqlitePath: join(config.dataDir, 'boxhub.sqlite'),
    ...(schema ? { pgSchema: schema } : {}),
    ...(server?.onConnectionError ? { onConnectionError: server.onConnectionError } : {}),
    ...(server ? { backgroundCheckpoints: true } : {}),
    ...(server?.onCheckpointerFailure ? { onCheckpointerFailure: server.onCheckpointerFailure } : {}),
  });
}

/** The key that encrypts stored secrets; the default key file lives in the data directory. */
export function openSecretBox(config: Config): SecretBox {
  ensureDataDir(config.dataDir);
  return loadSecretBox(config.secretKey);
}

/**
 * Stored secrets must be readable with this process's key: a node (or a CLI) with another key
 * would sign callbacks nobody can verify, or write secrets the others cannot read. Secrets
 * written before encryption existed are sealed now.
 */
export async function checkSecretKey(applications: ApplicationRepository, box: SecretBox): Promise<number> {
  // The first process on a database records its key's id; the others must hold the same key
  // (checked before any secret exists, so two nodes that each made a key fail at once).
  const recorded = await applications.deploymentKeyId();
  const other = recorded !== box.keyId ? recorded : await applications.foreignKeyId();
  if (other) {
    throw new SecretKeyError(
      `this database's secrets are encrypted under another key (key id ${other}; this process has ${box.keyId}): give every node and the CLI the same BOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE`,
    );
  }
  return applications.sealPlainSecrets();
}
