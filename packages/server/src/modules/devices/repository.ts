// The only place with SQL for devices. Every binding change is one conditional UPDATE, so two
// applications racing to bind the same box cannot both win (docs/api.md, "Device binding").
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { transact } from '../../db/transaction.ts';
import { TurnBatch } from '../../db/turn-batch.ts';
import type { Database, DeviceRow, NewDevice } from '../../db/schema.ts';

/** Presence writes in one transaction at most (DeviceRepository.presence). */
const PRESENCE_BATCH = 256;

interface PresenceWrite {
  uuid: string;
  session: string;
  at: number;
  online: boolean;
}

/** Rows kept by the lookup cache at most (a full cache is emptied and refills). */
const CACHE_MAX = 10_000;

export class DeviceRepository {
  private readonly db: Kysely<Database>;
  /**
   * SQLite only: bound-device rows by uuid, for `findBound` (behind every device call: the
   * lookup was the largest cost of `GET /api/client/info` left, bench/api-throughput). Sound
   * because every write to `devices` in this process goes through `changed()` below, which
   * drops the row it touched, and writes by other processes on the same file (the CLI) change
   * SQLite's data_version, which empties the cache. With PostgreSQL, other nodes write too and
   * nothing tells this one, so there is no cache.
   */
  private readonly cache: Map<string, DeviceRow> | undefined;
  private readonly dataVersion: (() => number) | undefined;
  private seenVersion = -1;
  /** Writes made by this process so far: a lookup that overlapped one does not fill the cache. */
  private writes = 0;
  /**
   * The lookup behind every device call (info, control, …), built once by Kysely for this
   * dialect and then run with fresh parameters: building and compiling the query each time
   * was a tenth of an `info` request (bench/api-throughput profile).
   */
  private readonly boundSql: string;
  constructor(db: Kysely<Database>, o: { dataVersion?: (() => number) | undefined } = {}) {
    this.db = db;
    this.dataVersion = o.dataVersion;
    this.cache = o.dataVersion ? new Map() : undefined;
    this.boundSql = db.selectFrom('devices').selectAll().where('uuid', '=', '').where('app_id', '=', '').compile().sql;
  }

  async insert(device: NewDevice): Promise<void> {
    await this.changed(device.uuid, () => this.db.insertInto('devices').values(device).execute());
  }

  /** Replaces the stored secret hash (rotation, or REVOKED_SECRET); false when there is no such device. */
  async setSecretHash(uuid: string, hash: string): Promise<boolean> {
    const r = await this.changed(uuid, () =>
      this.db.updateTable('devices').set({ secret_hash: hash }).where('uuid', '=', uuid).executeTakeFirst(),
    );
    return r.numUpdatedRows === 1n;
  }

  /** Current secret hashes of these devices (checked against the ones their sessions logged in with). */
  async secretHashes(uuids: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < uuids.length; i += 500) {
      const rows = await this.db
        .selectFrom('devices')
        .select(['uuid', 'secret_hash'])
        .where('uuid', 'in', uuids.slice(i, i + 500))
        .execute();
      for (const r of rows) out.set(r.uuid, r.secret_hash);
    }
    return out;
  }

  /** Removes a device that was never handed out (its provisioning failed). */
  async delete(uuid: string): Promise<void> {
    await this.changed(uuid, () => this.db.deleteFrom('devices').where('uuid', '=', uuid).execute());
  }

  findByCode(code: string): Promise<DeviceRow | undefined> {
    return this.db.selectFrom('devices').selectAll().where('code', '=', code).executeTakeFirst();
  }

  findByUuid(uuid: string): Promise<DeviceRow | undefined> {
    return this.db.selectFrom('devices').selectAll().where('uuid', '=', uuid).executeTakeFirst();
  }

  async findBound(uuid: string, appId: string): Promise<DeviceRow | undefined> {
    const { cache } = this;
    if (cache) {
      const v = this.dataVersion!();
      if (v !== this.seenVersion) {
        cache.clear();
        this.seenVersion = v;
      }
      const hit = cache.get(uuid);
      if (hit) return hit.app_id === appId ? hit : undefined;
    }
    const before = this.writes;
    const r = await this.db.executeQuery<DeviceRow>(CompiledQuery.raw(this.boundSql, [uuid, appId]));
    const row = r.rows[0];
    // Kept only when no write of this process overlapped the lookup (it may have read the row
    // before that write; the write's invalidation may already have run).
    if (cache && row && before === this.writes) {
      if (cache.size >= CACHE_MAX) cache.clear();
      // Frozen: a cached row is shared by every request that reads it.
      cache.set(uuid, Object.freeze(row));
    }
    return row;
  }

  /** Every write to `devices` goes through here: it drops the cached row of the device it
   *  touched (all rows when `uuid` is undefined) once the write is done. */
  private async changed<T>(uuid: string | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.writes++;
      if (uuid === undefined) this.cache?.clear();
      else this.cache?.delete(uuid);
    }
  }

  /** Binds an unbound device; false when it is bound already or does not exist. */
  async bind(uuid: string, appId: string, name: string, remark: string | null, at: number): Promise<boolean> {
    const r = await this.changed(uuid, () =>
      this.db
        .updateTable('devices')
        .set({ app_id: appId, name, remark, active_at: at })
        .where('uuid', '=', uuid)
        .where('app_id', 'is', null)
        .executeTakeFirst(),
    );
    return r.numUpdatedRows === 1n;
  }

  /** Unbinds a device of this application, dropping its name and settings. */
  /**
   * Removes the binding; false when the device is not bound to the application. `also` writes,
   * in the same transaction, what must exist exactly when the binding is gone (DeviceService.unbind:
   * the job that ends the application's late tasks there).
   */
  async unbind(uuid: string, appId: string, also?: (trx: Transaction<Database>) => Promise<void>): Promise<boolean> {
    return this.changed(uuid, () =>
      transact(this.db, async (trx) => {
        const r = await trx
          .updateTable('devices')
          .set({ app_id: null, name: null, remark: null, active_at: null })
          .where('uuid', '=', uuid)
          .where('app_id', '=', appId)
          .executeTakeFirst();
        if (r.numUpdatedRows !== 1n) return false;
        await also?.(trx);
        return true;
      }),
    );
  }

  async edit(uuid: string, appId: string, name: string, remark: string | undefined): Promise<boolean> {
    const r = await this.changed(uuid, () =>
      this.db
        .updateTable('devices')
        .set(remark === undefined ? { name } : { name, remark })
        .where('uuid', '=', uuid)
        .where('app_id', '=', appId)
        .executeTakeFirst(),
    );
    return r.numUpdatedRows === 1n;
  }

  async list(appId: string, limit: number, offset: number): Promise<{ total: number; rows: DeviceRow[] }> {
    const [count, rows] = await Promise.all([
      this.db
        .selectFrom('devices')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('app_id', '=', appId)
        .executeTakeFirstOrThrow(),
      this.db
        .selectFrom('devices')
        .selectAll()
        .where('app_id', '=', appId)
        .orderBy('active_at')
        .orderBy('uuid')
        .limit(limit)
        .offset(offset)
        .execute(),
    ]);
    return { total: Number(count.n), rows };
  }

  /** Every registered device, newest first, with the name of the application it is bound to (operator). */
  async listAll(
    limit: number,
    offset: number,
  ): Promise<{ total: number; rows: Array<DeviceRow & { app_name: string | null }> }> {
    const [count, rows] = await Promise.all([
      this.db
        .selectFrom('devices')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow(),
      this.db
        .selectFrom('devices as d')
        .leftJoin('applications as a', 'a.id', 'd.app_id')
        .selectAll('d')
        .select('a.name as app_name')
        .orderBy('d.created_at', 'desc')
        .orderBy('d.uuid')
        .limit(limit)
        .offset(offset)
        .execute(),
    ]);
    return { total: Number(count.n), rows };
  }

  /**
   * A box connected with `session`. Ignored when that session's end was already seen
   * (messages of different nodes can arrive out of order behind shared subscriptions), and
   * false when the row already says so (the same `online` again: a retained copy read at a
   * node's catch-up, a broker's redelivery), so it is recorded and announced once.
   */
  markOnline(uuid: string, session: string, at: number): Promise<boolean> {
    return this.presence.add({ uuid, session, at, online: true });
  }

  /**
   * A box's `session` ended (clean goodbye or last will): true when that took the box offline.
   * A stale end changes nothing else, and the same end again changes nothing (a broker that
   * restarts sends each box's will live and keeps it retained for the catch-up: one
   * disconnect, not two, docs/box-protocol.md "Presence").
   */
  markOffline(uuid: string, session: string, at: number): Promise<boolean> {
    return this.presence.add({ uuid, session, at, online: false });
  }

  /**
   * The presence reported in one turn of the event loop, written in one transaction: a fleet's
   * return brings thousands a second, and a commit of its own for each cost more than the
   * write (a will's update took 136 µs on its own, bench/README.md "reconnect-storm"). Boxes in
   * the order of their uuid, so two nodes' batches take their rows' locks (PostgreSQL) in the
   * same order; a box's own reports keep their order.
   */
  private readonly presence = new TurnBatch<PresenceWrite, boolean>(async (writes) => {
    // Ties broken by arrival: a comparator that never answers 0 leaves the order of a box's own
    // reports to the sort's algorithm.
    const order = writes
      .map((_, n) => n)
      .sort((a, b) => (writes[a]!.uuid < writes[b]!.uuid ? -1 : writes[a]!.uuid > writes[b]!.uuid ? 1 : a - b));
    return transact(this.db, async (trx) => {
      const out: boolean[] = new Array(writes.length);
      for (const n of order) {
        const w = writes[n]!;
        out[n] = w.online ? await this.online(trx, w) : await this.offline(trx, w);
      }
      return out;
    });
  }, PRESENCE_BATCH);

  private async online(trx: Transaction<Database>, w: PresenceWrite): Promise<boolean> {
    const r = await this.changed(w.uuid, () =>
      trx
        .updateTable('devices')
        .set({ online: 1, session: w.session, last_connect_at: w.at })
        .where('uuid', '=', w.uuid)
        .where((eb) => eb.or([eb('ended_session', 'is', null), eb('ended_session', '!=', w.session)]))
        .where((eb) => eb.or([eb('online', '=', 0), eb('session', 'is', null), eb('session', '!=', w.session)]))
        .executeTakeFirst(),
    );
    return r.numUpdatedRows === 1n;
  }

  private async offline(trx: Transaction<Database>, w: PresenceWrite): Promise<boolean> {
    const r = await this.changed(w.uuid, () =>
      trx
        .updateTable('devices')
        .set({ online: 0, last_disconnect_at: w.at, ended_session: w.session })
        .where('uuid', '=', w.uuid)
        .where('session', '=', w.session)
        .where('online', '=', 1)
        .executeTakeFirst(),
    );
    if (r.numUpdatedRows === 1n) return true;
    // Remembered, so that a late `online` of the ended session is ignored (online()).
    await this.changed(w.uuid, () =>
      trx
        .updateTable('devices')
        .set({ ended_session: w.session })
        .where('uuid', '=', w.uuid)
        .where((eb) => eb.or([eb('ended_session', 'is', null), eb('ended_session', '!=', w.session)]))
        .execute(),
    );
    return false;
  }

  /** The embedded broker starts empty: nobody is connected, whatever the table says. Returns
   *  the devices it marked offline (device events look at them: docs/callbacks.md). */
  async markAllOffline(at: number): Promise<string[]> {
    const rows = await this.changed(undefined, () =>
      this.db
        .updateTable('devices')
        .set({ online: 0, last_disconnect_at: at })
        .where('online', '=', 1)
        .returning('uuid')
        .execute(),
    );
    return rows.map((r) => r.uuid);
  }

  /**
   * Stores the state a box reported. The same state again (every box sends its state with each
   * new session) writes nothing and keeps the row cached: `state_at` is when the state last
   * changed, and 10,000 returning boxes rewrote 10,000 unchanged rows (bench/README.md,
   * "reconnect-storm").
   */
  async saveState(uuid: string, state: string, at: number): Promise<void> {
    const r = await this.db
      .updateTable('devices')
      .set({ state, state_at: at })
      .where('uuid', '=', uuid)
      .where((eb) => eb.or([eb('state', 'is', null), eb('state', '!=', state)]))
      .executeTakeFirst();
    // As changed() does, but only for a row that changed: an unchanged one is still as cached.
    if (r.numUpdatedRows > 0n) {
      this.writes++;
      this.cache?.delete(uuid);
    }
  }

  /**
   * Claims the once-per-window power ink flush: succeeds only when none happened since
   * `notBefore`. Atomic, so two concurrent requests cannot both flush.
   */
  async claimInkFlush(
    uuid: string,
    at: number,
    notBefore: number,
  ): Promise<{ ok: true; previous: number | null } | { ok: false; last: number }> {
    const row = await this.findByUuid(uuid);
    const previous = row?.last_power_ink_flush_at ?? null;
    if (previous !== null && previous > notBefore) return { ok: false, last: previous };
    const q = this.db.updateTable('devices').set({ last_power_ink_flush_at: at }).where('uuid', '=', uuid);
    const r = await this.changed(uuid, () =>
      (previous === null
        ? q.where('last_power_ink_flush_at', 'is', null)
        : q.where('last_power_ink_flush_at', '=', previous)
      ).executeTakeFirst(),
    );
    if (r.numUpdatedRows !== 1n) {
      const again = await this.findByUuid(uuid);
      return { ok: false, last: again?.last_power_ink_flush_at ?? at };
    }
    return { ok: true, previous };
  }

  /** Gives back a claimed flush the box never performed. */
  async releaseInkFlush(uuid: string, claimedAt: number, previous: number | null): Promise<void> {
    await this.changed(uuid, () =>
      this.db
        .updateTable('devices')
        .set({ last_power_ink_flush_at: previous })
        .where('uuid', '=', uuid)
        .where('last_power_ink_flush_at', '=', claimedAt)
        .execute(),
    );
  }
}
