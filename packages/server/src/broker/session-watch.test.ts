import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../db/connect.ts';
import { migrate } from '../db/migrate.ts';
import { DeviceRepository } from '../modules/devices/repository.ts';
import { SessionWatch } from './session-watch.ts';

test('a check on a timer after the database closed reports the failure through onError, not as an unhandled rejection', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-session-watch-'));
  const db = await openDb({ url: undefined, sqlitePath: join(dir, 'boxhub.sqlite') });
  try {
    await migrate(db);
    const errors: unknown[] = [];
    const watch = new SessionWatch({
      sessions: () => ['box-1'],
      disconnect: () => undefined,
      devices: new DeviceRepository(db.kysely, { dataVersion: db.dataVersion }),
      ...(db.dataVersion ? { dataVersion: db.dataVersion } : {}),
      onError: (e) => errors.push(e),
    });
    watch.loggedIn('box-1', 'hash');
    await db.close();
    await watch.check();
    assert.equal(errors.length, 1);
    assert.match(String((errors[0] as Error).message), /not open/);
    // And the next tick runs again (not stuck as "running").
    await watch.check();
    assert.equal(errors.length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
