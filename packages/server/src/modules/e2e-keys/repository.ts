// The only SQL for the applications' end-to-end encryption keys (docs/encryption.md, "Keys").
import type { Kysely } from 'kysely';
import type { Database, E2eKeyRow } from '../../db/schema.ts';
import type { Trx } from '../../jobs/repository.ts';

export class E2eKeyRepository {
  readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** The key scans are encrypted to now, if any. */
  current(appId: string): Promise<E2eKeyRow | undefined> {
    return this.db
      .selectFrom('e2e_keys')
      .selectAll()
      .where('app_id', '=', appId)
      .where('retired_at', 'is', null)
      .executeTakeFirst();
  }

  list(appId: string): Promise<E2eKeyRow[]> {
    return this.db
      .selectFrom('e2e_keys')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('created_at', 'desc')
      .orderBy('kid')
      .execute();
  }

  find(trx: Trx, appId: string, kid: string): Promise<E2eKeyRow | undefined> {
    return trx.selectFrom('e2e_keys').selectAll().where('app_id', '=', appId).where('kid', '=', kid).executeTakeFirst();
  }

  /** Retires the current key (if another) and makes `kid` current, inserting it when new. */
  async makeCurrent(trx: Trx, row: Omit<E2eKeyRow, 'retired_at'>, now: number): Promise<E2eKeyRow> {
    await trx
      .updateTable('e2e_keys')
      .set({ retired_at: now })
      .where('app_id', '=', row.app_id)
      .where('retired_at', 'is', null)
      .where('kid', '!=', row.kid)
      .execute();
    const existing = await this.find(trx, row.app_id, row.kid);
    if (existing) {
      await trx
        .updateTable('e2e_keys')
        .set({ retired_at: null })
        .where('app_id', '=', row.app_id)
        .where('kid', '=', row.kid)
        .execute();
      return { ...existing, retired_at: null };
    }
    await trx
      .insertInto('e2e_keys')
      .values({ ...row, retired_at: null })
      .execute();
    return { ...row, retired_at: null };
  }
}
