// The only place with SQL for devices. Every binding change is one conditional UPDATE, so two
// applications racing to bind the same box cannot both win (spec: "Device binding").
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database, DeviceRow, NewDevice } from '../../db/schema.ts';

export class DeviceRepository {
  private readonly db: Kysely<Database>;
  /**
   * The lookup behind every device call (info, control, …), built once by Kysely for this
   * dialect and then run with fresh parameters: building and compiling the query each time
   * was a tenth of an `info` request (bench/api-throughput profile).
   */
  private readonly boundSql: string;
  constructor(db: Kysely<Database>) {
    this.db = db;
    this.boundSql = db.selectFrom('devices').selectAll().where('uuid', '=', '').where('app_id', '=', '').compile().sql;
  }

  async insert(device: NewDevice): Promise<void> {
    await this.db.insertInto('devices').values(device).execute();
  }

  /** Removes a device that was never handed out (its provisioning failed). */
  async delete(uuid: string): Promise<void> {
    await this.db.deleteFrom('devices').where('uuid', '=', uuid).execute();
  }

  findByCode(code: string): Promise<DeviceRow | undefined> {
    return this.db.selectFrom('devices').selectAll().where('code', '=', code).executeTakeFirst();
  }

  findByUuid(uuid: string): Promise<DeviceRow | undefined> {
    return this.db.selectFrom('devices').selectAll().where('uuid', '=', uuid).executeTakeFirst();
  }

  async findBound(uuid: string, appId: string): Promise<DeviceRow | undefined> {
    const r = await this.db.executeQuery<DeviceRow>(CompiledQuery.raw(this.boundSql, [uuid, appId]));
    return r.rows[0];
  }

  /** Binds an unbound device; false when it is bound already or does not exist. */
  async bind(uuid: string, appId: string, name: string, remark: string | null, at: number): Promise<boolean> {
    const r = await this.db.updateTable('devices')
      .set({ app_id: appId, name, remark, active_at: at })
      .where('uuid', '=', uuid).where('app_id', 'is', null)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** Unbinds a device of this application, dropping its name and settings. */
  async unbind(uuid: string, appId: string): Promise<boolean> {
    const r = await this.db.updateTable('devices')
      .set({ app_id: null, name: null, remark: null, active_at: null })
      .where('uuid', '=', uuid).where('app_id', '=', appId)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async edit(uuid: string, appId: string, name: string, remark: string | undefined): Promise<boolean> {
    const r = await this.db.updateTable('devices')
      .set(remark === undefined ? { name } : { name, remark })
      .where('uuid', '=', uuid).where('app_id', '=', appId)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async list(appId: string, limit: number, offset: number): Promise<{ total: number; rows: DeviceRow[] }> {
    const [count, rows] = await Promise.all([
      this.db.selectFrom('devices').select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('app_id', '=', appId).executeTakeFirstOrThrow(),
      this.db.selectFrom('devices').selectAll().where('app_id', '=', appId)
        .orderBy('active_at').orderBy('uuid').limit(limit).offset(offset).execute(),
    ]);
    return { total: Number(count.n), rows };
  }

  /**
   * A box connected with `session`. Ignored when that session's end was already seen
   * (messages of different nodes can arrive out of order behind shared subscriptions).
   */
  async markOnline(uuid: string, session: string, at: number): Promise<boolean> {
    const r = await this.db.updateTable('devices')
      .set({ online: 1, session, last_connect_at: at })
      .where('uuid', '=', uuid)
      .where((eb) => eb.or([eb('ended_session', 'is', null), eb('ended_session', '!=', session)]))
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** A box's `session` ended (clean goodbye or last will). A stale end changes nothing else. */
  async markOffline(uuid: string, session: string, at: number): Promise<boolean> {
    const r = await this.db.updateTable('devices')
      .set({ online: 0, last_disconnect_at: at, ended_session: session })
      .where('uuid', '=', uuid).where('session', '=', session)
      .executeTakeFirst();
    if (r.numUpdatedRows === 1n) return true;
    await this.db.updateTable('devices').set({ ended_session: session })
      .where('uuid', '=', uuid).where((eb) => eb.or([eb('session', 'is', null), eb('session', '!=', session)]))
      .execute();
    return false;
  }

  /** The embedded broker starts empty: nobody is connected, whatever the table says. */
  async markAllOffline(at: number): Promise<void> {
    await this.db.updateTable('devices').set({ online: 0, last_disconnect_at: at }).where('online', '=', 1).execute();
  }

  async saveState(uuid: string, state: string, at: number): Promise<void> {
    await this.db.updateTable('devices').set({ state, state_at: at }).where('uuid', '=', uuid).execute();
  }

  /**
   * Claims the once-per-window power ink flush: succeeds only when none happened since
   * `notBefore`. Atomic, so two concurrent requests cannot both flush.
   */
  async claimInkFlush(uuid: string, at: number, notBefore: number): Promise<{ ok: true; previous: number | null } | { ok: false; last: number }> {
    const row = await this.findByUuid(uuid);
    const previous = row?.last_power_ink_flush_at ?? null;
    if (previous !== null && previous > notBefore) return { ok: false, last: previous };
    const q = this.db.updateTable('devices').set({ last_power_ink_flush_at: at }).where('uuid', '=', uuid);
    const r = await (previous === null ? q.where('last_power_ink_flush_at', 'is', null) : q.where('last_power_ink_flush_at', '=', previous)).executeTakeFirst();
    if (r.numUpdatedRows !== 1n) {
      const again = await this.findByUuid(uuid);
      return { ok: false, last: again?.last_power_ink_flush_at ?? at };
    }
    return { ok: true, previous };
  }

  /** Gives back a claimed flush the box never performed. */
  async releaseInkFlush(uuid: string, claimedAt: number, previous: number | null): Promise<void> {
    await this.db.updateTable('devices').set({ last_power_ink_flush_at: previous })
      .where('uuid', '=', uuid).where('last_power_ink_flush_at', '=', claimedAt).execute();
  }
}
