// The review loop's audit trail (docs/cards.md, "The review loop"): corrections are only ever
// inserted (the table's triggers refuse UPDATE and DELETE; migrations/0025-recognition-review.ts).
import type { Kysely } from 'kysely';
import type { Database, RecognitionCorrectionRow } from '../../db/schema.ts';
import type { Trx } from '../../jobs/repository.ts';

export class CorrectionRepository {
  readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** The task's corrections (one student's, when given), by student then revision. */
  list(trx: Trx, appId: string, taskUuid: string, student?: number): Promise<RecognitionCorrectionRow[]> {
    let q = trx
      .selectFrom('recognition_corrections')
      .selectAll()
      .where('app_id', '=', appId)
      .where('task_uuid', '=', taskUuid);
    if (student !== undefined) q = q.where('student', '=', student);
    return q.orderBy('student').orderBy('revision').execute();
  }

  /** Inserts a correction; the primary key (task, student, revision) makes a concurrent one lose. */
  async insert(trx: Trx, row: RecognitionCorrectionRow): Promise<void> {
    await trx.insertInto('recognition_corrections').values(row).execute();
  }
}
