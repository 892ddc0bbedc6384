// The only SQL of recognition (docs/cards.md, "Recognition as a service"): the task's own row
// beside its `tasks` row, the batches received, the pages in scan order, the card templates.
import { sql, type Kysely } from 'kysely';
import type { CardTemplateRow, Database, RecognitionPageRow, RecognitionRow } from '../../db/schema.ts';
import type { Trx } from '../../jobs/repository.ts';

export interface NewPage {
  seq: number;
  batch: number;
  item_id: number;
  paper_number: number;
  page_number: number;
  front: boolean;
  blob_key: string;
}

export class RecognitionRepository {
  readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(trx: Trx, taskUuid: string, token: string): Promise<void> {
    await trx
      .insertInto('recognitions')
      .values({ task_uuid: taskUuid, token, scan_uuid: null, end_error: null, scan_ended_at: null })
      .execute();
  }

  find(trx: Trx, taskUuid: string): Promise<RecognitionRow | undefined> {
    return trx.selectFrom('recognitions').selectAll().where('task_uuid', '=', taskUuid).executeTakeFirst();
  }

  /** The rows of these tasks (the console's list of recognition runs). */
  async many(trx: Trx, taskUuids: readonly string[]): Promise<Map<string, RecognitionRow>> {
    if (taskUuids.length === 0) return new Map();
    const rows = await trx.selectFrom('recognitions').selectAll().where('task_uuid', 'in', taskUuids).execute();
    return new Map(rows.map((r) => [r.task_uuid, r]));
  }

  byToken(trx: Trx, token: string): Promise<RecognitionRow | undefined> {
    return trx.selectFrom('recognitions').selectAll().where('token', '=', token).executeTakeFirst();
  }

  byScan(trx: Trx, scanUuid: string): Promise<RecognitionRow | undefined> {
    return trx.selectFrom('recognitions').selectAll().where('scan_uuid', '=', scanUuid).executeTakeFirst();
  }

  /** Binds a scan to the task, once: false when another scan holds it. */
  async bind(trx: Trx, taskUuid: string, scanUuid: string): Promise<boolean> {
    const r = await trx
      .updateTable('recognitions')
      .set({ scan_uuid: scanUuid })
      .where('task_uuid', '=', taskUuid)
      .where('scan_uuid', 'is', null)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async unbind(trx: Trx, taskUuid: string, scanUuid: string): Promise<void> {
    await trx
      .updateTable('recognitions')
      .set({ scan_uuid: null })
      .where('task_uuid', '=', taskUuid)
      .where('scan_uuid', '=', scanUuid)
      .execute();
  }

  batch(trx: Trx, taskUuid: string, batch: number): Promise<{ webhook_id: string; pages: number } | undefined> {
    return trx
      .selectFrom('recognition_batches')
      .select(['webhook_id', 'pages'])
      .where('task_uuid', '=', taskUuid)
      .where('batch', '=', batch)
      .executeTakeFirst();
  }

  /**
   * Records a batch and its pages, only if it is the one expected next (the batch's primary key
   * and the conditional update make a concurrent duplicate lose cleanly). Returns false when
   * another request recorded it first.
   */
  async addBatch(
    trx: Trx,
    taskUuid: string,
    batch: number,
    webhookId: string,
    pages: readonly NewPage[],
    now: number,
  ): Promise<boolean> {
    const moved = await trx
      .updateTable('recognitions')
      .set((eb) => ({ next_batch: batch + 1, pages_received: eb('pages_received', '+', pages.length) }))
      .where('task_uuid', '=', taskUuid)
      .where('next_batch', '=', batch)
      .executeTakeFirst();
    if (moved.numUpdatedRows !== 1n) return false;
    await trx
      .insertInto('recognition_batches')
      .values({ task_uuid: taskUuid, batch, webhook_id: webhookId, pages: pages.length, received_at: now })
      .execute();
    if (pages.length > 0) {
      await trx
        .insertInto('recognition_pages')
        .values(
          pages.map((p) => ({
            task_uuid: taskUuid,
            seq: p.seq,
            batch: p.batch,
            item_id: p.item_id,
            paper_number: p.paper_number,
            page_number: p.page_number,
            front: p.front ? 1 : 0,
            blob_key: p.blob_key,
            received_at: now,
            reading: null,
            recognized_at: null,
          })),
        )
        .execute();
    }
    return true;
  }

  /** Records scan.end (its error code) once; false when it was recorded before. */
  async end(trx: Trx, taskUuid: string, errorCode: number): Promise<boolean> {
    const r = await trx
      .updateTable('recognitions')
      .set((eb) => ({ end_error: errorCode, progress: eb('progress', '+', 1) }))
      .where('task_uuid', '=', taskUuid)
      .where('end_error', 'is', null)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async scanEnded(trx: Trx, taskUuid: string, at: number): Promise<void> {
    await trx
      .updateTable('recognitions')
      .set((eb) => ({ scan_ended_at: at, progress: eb('progress', '+', 1) }))
      .where('task_uuid', '=', taskUuid)
      .where('scan_ended_at', 'is', null)
      .execute();
  }

  page(trx: Trx, taskUuid: string, seq: number): Promise<RecognitionPageRow | undefined> {
    return trx
      .selectFrom('recognition_pages')
      .selectAll()
      .where('task_uuid', '=', taskUuid)
      .where('seq', '=', seq)
      .executeTakeFirst();
  }

  /** The task's pages in scan order (after `afterSeq`, when given) without their readings
   *  (read: whether one is stored). */
  async pageHeads(
    trx: Trx,
    taskUuid: string,
    afterSeq = -1,
  ): Promise<Array<Omit<RecognitionPageRow, 'reading'> & { read: boolean }>> {
    const rows = await trx
      .selectFrom('recognition_pages')
      .select([
        'task_uuid',
        'seq',
        'batch',
        'item_id',
        'paper_number',
        'page_number',
        'front',
        'blob_key',
        'received_at',
        'recognized_at',
      ])
      .where('task_uuid', '=', taskUuid)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ ...r, read: r.recognized_at !== null }));
  }

  /** The readings of these pages. */
  async readings(trx: Trx, taskUuid: string, seqs: readonly number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (let i = 0; i < seqs.length; i += 500) {
      const rows = await trx
        .selectFrom('recognition_pages')
        .select(['seq', 'reading'])
        .where('task_uuid', '=', taskUuid)
        .where('seq', 'in', seqs.slice(i, i + 500))
        .execute();
      for (const r of rows) if (r.reading !== null) out.set(Number(r.seq), r.reading);
    }
    return out;
  }

  pages(trx: Trx, taskUuid: string): Promise<RecognitionPageRow[]> {
    return trx.selectFrom('recognition_pages').selectAll().where('task_uuid', '=', taskUuid).orderBy('seq').execute();
  }

  /** Stores a page's reading, once (a second worker's reading of the same page is dropped). */
  async recognized(trx: Trx, taskUuid: string, seq: number, reading: string, now: number): Promise<boolean> {
    const r = await trx
      .updateTable('recognition_pages')
      .set({ reading, recognized_at: now })
      .where('task_uuid', '=', taskUuid)
      .where('seq', '=', seq)
      .where('reading', 'is', null)
      .executeTakeFirst();
    if (r.numUpdatedRows !== 1n) return false;
    await trx
      .updateTable('recognitions')
      .set((eb) => ({ progress: eb('progress', '+', 1) }))
      .where('task_uuid', '=', taskUuid)
      .execute();
    return true;
  }

  /** Moves students_sent from `from` to `to`; false when another assembler moved it first. */
  async sent(trx: Trx, taskUuid: string, from: number, to: number): Promise<boolean> {
    const r = await trx
      .updateTable('recognitions')
      .set({ students_sent: to })
      .where('task_uuid', '=', taskUuid)
      .where('students_sent', '=', from)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  // ---- card templates ------------------------------------------------------------------------

  templates(trx: Trx, appId: string): Promise<CardTemplateRow[]> {
    return trx
      .selectFrom('card_templates')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('created_at')
      .orderBy('template_id')
      .execute();
  }

  /** The application's template ids, for the recognizer's cache key. */
  async templateIds(trx: Trx, appId: string): Promise<string[]> {
    const rows = await trx
      .selectFrom('card_templates')
      .select('template_id')
      .where('app_id', '=', appId)
      .orderBy('template_id')
      .execute();
    return rows.map((r) => r.template_id);
  }

  template(trx: Trx, appId: string, templateId: string): Promise<CardTemplateRow | undefined> {
    return trx
      .selectFrom('card_templates')
      .selectAll()
      .where('app_id', '=', appId)
      .where('template_id', '=', templateId)
      .executeTakeFirst();
  }

  async countTemplates(trx: Trx, appId: string): Promise<number> {
    const r = await trx
      .selectFrom('card_templates')
      .select(sql<number>`count(*)`.as('n'))
      .where('app_id', '=', appId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async addTemplate(trx: Trx, row: CardTemplateRow): Promise<void> {
    await trx
      .insertInto('card_templates')
      .values(row)
      .onConflict((oc) => oc.columns(['app_id', 'template_id']).doNothing())
      .execute();
  }

  async deleteTemplate(trx: Trx, appId: string, templateId: string): Promise<boolean> {
    const r = await trx
      .deleteFrom('card_templates')
      .where('app_id', '=', appId)
      .where('template_id', '=', templateId)
      .executeTakeFirst();
    return r.numDeletedRows > 0n;
  }
}
