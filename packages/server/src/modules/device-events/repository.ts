// Device callback URLs and the states last reported (docs/callbacks.md, "Device events").
import type { Kysely } from 'kysely';
import type { Database, DeviceRow } from '../../db/schema.ts';
import type { Trx } from '../../jobs/repository.ts';

export class DeviceEventRepository {
  readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async callbackUrl(db: Trx | Kysely<Database>, appId: string): Promise<string | undefined> {
    return (await db.selectFrom('device_callbacks').select('url').where('app_id', '=', appId).executeTakeFirst())?.url;
  }

  async setCallbackUrl(appId: string, url: string | undefined, now: number): Promise<void> {
    if (url === undefined) {
      await this.db.deleteFrom('device_callbacks').where('app_id', '=', appId).execute();
      return;
    }
    await this.db
      .insertInto('device_callbacks')
      .values({ app_id: appId, url, updated_at: now })
      .onConflict((oc) => oc.column('app_id').doUpdateSet({ url, updated_at: now }))
      .execute();
  }

  /** topic → reported value (JSON). */
  async reported(db: Trx | Kysely<Database>, device: string): Promise<Map<string, string>> {
    const rows = await db
      .selectFrom('device_reported')
      .select(['topic', 'value'])
      .where('device_uuid', '=', device)
      .execute();
    return new Map(rows.map((r) => [r.topic, r.value]));
  }

  /** device → topic → reported value (JSON), for many devices at once. */
  async reportedMany(
    db: Trx | Kysely<Database>,
    devices: readonly string[],
  ): Promise<Map<string, Map<string, string>>> {
    const out = new Map<string, Map<string, string>>();
    if (devices.length === 0) return out;
    const rows = await db
      .selectFrom('device_reported')
      .select(['device_uuid', 'topic', 'value'])
      .where('device_uuid', 'in', devices)
      .execute();
    for (const r of rows) {
      const m = out.get(r.device_uuid) ?? new Map<string, string>();
      m.set(r.topic, r.value);
      out.set(r.device_uuid, m);
    }
    return out;
  }

  /** The rows of these devices (those that still exist). */
  async devices(db: Trx | Kysely<Database>, uuids: readonly string[]): Promise<DeviceRow[]> {
    if (uuids.length === 0) return [];
    return db.selectFrom('devices').selectAll().where('uuid', 'in', uuids).execute();
  }

  async setReported(trx: Trx, device: string, topic: string, value: string, now: number): Promise<void> {
    await trx
      .insertInto('device_reported')
      .values({ device_uuid: device, topic, value, changed_at: null, reported_at: now })
      .onConflict((oc) => oc.columns(['device_uuid', 'topic']).doUpdateSet({ value, reported_at: now }))
      .execute();
  }
}
