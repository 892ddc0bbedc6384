// The only SQL for scan items. Task rows are the tasks module's (tasks/repository.ts).
import type { Kysely } from 'kysely';
import type { Database, ScanItemRow } from '../../db/schema.ts';
import type { Trx } from '../../jobs/repository.ts';

export class ScanItemRepository {
  readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(trx: Trx, item: ScanItemRow): Promise<void> {
    await trx.insertInto('scan_items').values(item).execute();
  }

  async page(taskUuid: string, limit: number, offset: number): Promise<{ total: number; rows: ScanItemRow[] }> {
    const [count, rows] = await Promise.all([
      this.db
        .selectFrom('scan_items')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('task_uuid', '=', taskUuid)
        .executeTakeFirstOrThrow(),
      this.db
        .selectFrom('scan_items')
        .selectAll()
        .where('task_uuid', '=', taskUuid)
        .orderBy('item_id')
        .limit(limit)
        .offset(offset)
        .execute(),
    ]);
    return { total: Number(count.n), rows };
  }
}
