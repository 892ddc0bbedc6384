// The only SQL for applications and their API keys. Callback signing secrets are stored
// encrypted (secret-box.ts) and leave this file only decrypted, through callbackSecrets() and
// rotateCallbackSecret(), which the callback module's repository calls.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { ApiKeyRow, Application, Database, NewApplication } from '../../db/schema.ts';
import { SecretBox } from '../../secret-box.ts';
import { transact } from '../../db/transaction.ts';

export type NewApiKey = Omit<ApiKeyRow, 'last_used_at' | 'revoked_at'>;

/** What authentication needs: the application and the key that was presented. */
export interface KeyLookup {
  app_id: string;
  name: string;
  cap_ess: number;
  app_created_at: number;
  key_id: string;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface CallbackSecrets {
  current: string;
  previous: string | null;
  previousUntil: number | null;
}

export class ApplicationRepository {
  private readonly db: Kysely<Database>;
  private readonly box: SecretBox;
  /**
   * The lookup behind every authenticated request (on PostgreSQL it is not cached), built once
   * and run with fresh parameters: building it with Kysely each time cost 20 µs of its 25.
   */
  private readonly keySql: string;
  constructor(db: Kysely<Database>, box: SecretBox) {
    this.db = db;
    this.box = box;
    this.keySql = this.keyQuery('').compile().sql;
  }

  private keyQuery(hash: string) {
    return this.db
      .selectFrom('api_keys as k')
      .innerJoin('applications as a', 'a.id', 'k.app_id')
      .select([
        'a.id as app_id',
        'a.name',
        'a.cap_ess',
        'a.created_at as app_created_at',
        'k.id as key_id',
        'k.revoked_at',
        'k.last_used_at',
      ])
      .where('k.key_hash', '=', hash);
  }

  /** The application with its first key, in one transaction; the callback secret is sealed here. */
  async insert(app: NewApplication, key: NewApiKey): Promise<void> {
    await transact(this.db, async (trx) => {
      await trx
        .insertInto('applications')
        .values({ ...app, callback_secret: this.box.seal(app.callback_secret) })
        .execute();
      await trx
        .insertInto('api_keys')
        .values({ ...key, last_used_at: null, revoked_at: null })
        .execute();
    });
  }

  findById(id: string): Promise<Application | undefined> {
    return this.db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Applications, newest first, with how many active keys and bound devices each has (operator console). */
  async list(
    limit: number,
    offset: number,
  ): Promise<{
    total: number;
    rows: Array<{
      id: string;
      name: string;
      cap_ess: number;
      created_at: number;
      active_keys: number;
      devices: number;
    }>;
  }> {
    const [count, rows] = await Promise.all([
      this.db
        .selectFrom('applications')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow(),
      this.db
        .selectFrom('applications as a')
        .select(['a.id', 'a.name', 'a.cap_ess', 'a.created_at'])
        .select((eb) => [
          eb
            .selectFrom('api_keys as k')
            .select((e) => e.fn.countAll<number | string>().as('n'))
            .whereRef('k.app_id', '=', 'a.id')
            .where('k.revoked_at', 'is', null)
            .as('active_keys'),
          eb
            .selectFrom('devices as d')
            .select((e) => e.fn.countAll<number | string>().as('n'))
            .whereRef('d.app_id', '=', 'a.id')
            .as('devices'),
        ])
        .orderBy('a.created_at', 'desc')
        .orderBy('a.id')
        .limit(limit)
        .offset(offset)
        .execute(),
    ]);
    return {
      total: Number(count.n),
      rows: rows.map((r) => ({
        id: r.id,
        name: r.name,
        cap_ess: Number(r.cap_ess),
        created_at: Number(r.created_at),
        active_keys: Number(r.active_keys ?? 0),
        devices: Number(r.devices ?? 0),
      })),
    };
  }

  findByName(name: string): Promise<Application | undefined> {
    return this.db.selectFrom('applications').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async findKeyByHash(hash: string): Promise<KeyLookup | undefined> {
    const r = await this.db.executeQuery<KeyLookup>(CompiledQuery.raw(this.keySql, [hash]));
    return r.rows[0];
  }

  findKey(id: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listKeys(appId: string): Promise<ApiKeyRow[]> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async insertKey(key: NewApiKey): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({ ...key, last_used_at: null, revoked_at: null })
      .execute();
  }

  /** Revokes a key that is not revoked yet; false otherwise. */
  async revokeKey(id: string, at: number): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** Revokes `oldId` and adds `fresh` in one transaction; false (and nothing changed) when `oldId` is not an active key. */
  async replaceKey(oldId: string, fresh: NewApiKey, at: number): Promise<boolean> {
    return transact(this.db, async (trx) => {
      const r = await trx
        .updateTable('api_keys')
        .set({ revoked_at: at })
        .where('id', '=', oldId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (r.numUpdatedRows !== 1n) return false;
      await trx
        .insertInto('api_keys')
        .values({ ...fresh, last_used_at: null, revoked_at: null })
        .execute();
      return true;
    });
  }

  /** Records a use; skipped when a use within `minGapMs` was recorded already (by any node). */
  async touchKey(id: string, at: number, minGapMs: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at - minGapMs)]))
      .execute();
  }

  /** Current and (while its grace period lasts) previous signing secrets of applications, decrypted. */
  async callbackSecrets(appIds: string[]): Promise<Map<string, CallbackSecrets>> {
    const rows =
      appIds.length === 0
        ? []
        : await this.db
            .selectFrom('applications')
            .select(['id', 'callback_secret', 'previous_callback_secret', 'previous_secret_expires_at'])
            .where('id', 'in', appIds)
            .execute();
    return new Map(
      rows.map((r) => [
        r.id,
        {
          current: this.box.open(r.callback_secret),
          previous: r.previous_callback_secret === null ? null : this.box.open(r.previous_callback_secret),
          previousUntil: r.previous_secret_expires_at === null ? null : Number(r.previous_secret_expires_at),
        },
      ]),
    );
  }

  /** Replaces the signing secret (sealed here); the old one stays valid until `previousUntil`. */
  async rotateCallbackSecret(appId: string, secret: string, previousUntil: number): Promise<boolean> {
    const r = await this.db
      .updateTable('applications')
      .set((eb) => ({
        previous_callback_secret: eb.ref('callback_secret'),
        previous_secret_expires_at: previousUntil,
        callback_secret: this.box.seal(secret),
      }))
      .where('id', '=', appId)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /**
   * The id of the key this deployment's secrets are sealed with: recorded by the first process
   * to start on the database, compared by every later one (before any secret exists too).
   */
  async deploymentKeyId(): Promise<string> {
    await this.db
      .insertInto('meta')
      .values({ key: 'secret_key_id', value: this.box.keyId })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('meta')
      .select('value')
      .where('key', '=', 'secret_key_id')
      .executeTakeFirstOrThrow();
    return row.value;
  }

  /** A key id other than ours that stored secrets are sealed with (nodes with different keys). */
  async foreignKeyId(): Promise<string | undefined> {
    const mine = `enc:v1:${this.box.keyId}:%`;
    const row = await this.db
      .selectFrom('applications')
      .select(['callback_secret', 'previous_callback_secret'])
      .where((eb) =>
        eb.or([
          eb.and([eb('callback_secret', 'like', 'enc:v1:%'), eb('callback_secret', 'not like', mine)]),
          eb.and([
            eb('previous_callback_secret', 'like', 'enc:v1:%'),
            eb('previous_callback_secret', 'not like', mine),
          ]),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    return [row.callback_secret, row.previous_callback_secret]
      .map((v) => (v ? SecretBox.keyIdOf(v) : undefined))
      .find((id) => id && id !== this.box.keyId);
  }

  /** Seals secrets stored in plain text (written before encryption existed); returns how many rows. */
  async sealPlainSecrets(): Promise<number> {
    const rows = await this.db
      .selectFrom('applications')
      .select(['id', 'callback_secret', 'previous_callback_secret'])
      .where((eb) =>
        eb.or([
          eb('callback_secret', 'not like', 'enc:v1:%'),
          eb.and([
            eb('previous_callback_secret', 'is not', null),
            eb('previous_callback_secret', 'not like', 'enc:v1:%'),
          ]),
        ]),
      )
      .execute();
    for (const r of rows) {
      const seal = (v: string) => (SecretBox.isSealed(v) ? v : this.box.seal(v));
      // Conditional on the values read, so a rotation racing this pass is not overwritten.
      await this.db
        .updateTable('applications')
        .set({
          callback_secret: seal(r.callback_secret),
          previous_callback_secret: r.previous_callback_secret === null ? null : seal(r.previous_callback_secret),
        })
        .where('id', '=', r.id)
        .where('callback_secret', '=', r.callback_secret)
        .where(
          r.previous_callback_secret === null
            ? sql<boolean>`previous_callback_secret IS NULL`
            : sql<boolean>`previous_callback_secret = ${r.previous_callback_secret}`,
        )
        .execute();
    }
    return rows.length;
  }
}
