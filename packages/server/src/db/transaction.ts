// Transactions, run again when the database aborted them to resolve a conflict.
//
// PostgreSQL breaks a deadlock by aborting one of the transactions in it (SQLSTATE 40P01) and
// aborts a repeatable-read transaction that would read around a concurrent write (40001); its
// manual says such a transaction should be retried from the start ("Serialization Failure
// Handling"). Deadlocks occur for real between unrelated paths that lock the same two rows in
// opposite orders: the job runner settling an assemble job (job row, then the recognition task)
// while a page's outcome on another node records its reading and wakes that job (task, then job
// row). Without a retry the aborted side lost its outcome until its lease ran out (minutes).
// SQLite has one writer at a time and never reports either condition.
import type { IsolationLevel, Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';
import { errnoCode } from '@boxhub/protocol';

/** Deadlock detected (40P01) or serialization failure (40001). */
export function isTransactionConflict(e: unknown): boolean {
  const code = errnoCode(e);
  return code === '40P01' || code === '40001';
}

export interface TransactOptions {
  isolation?: IsolationLevel;
  /** Tries in all (default 5). */
  attempts?: number;
}

/**
 * Runs `fn` in a transaction and commits; when the database aborts it for a conflict, runs it
 * again (after a short random pause, so the two sides do not meet again at once). `fn` must keep
 * its effects in `trx`, or make them safe to repeat.
 */
export async function transact<T>(
  db: Kysely<Database>,
  fn: (trx: Transaction<Database>) => Promise<T>,
  o: TransactOptions = {},
): Promise<T> {
  const attempts = o.attempts ?? 5;
  for (let i = 1; ; i++) {
    let tx = db.transaction();
    if (o.isolation) tx = tx.setIsolationLevel(o.isolation);
    try {
      return await tx.execute(fn);
    } catch (e) {
      if (i >= attempts || !isTransactionConflict(e)) throw e;
      // Real time, not the service's clock: this spaces out two database sessions.
      await new Promise((r) => setTimeout(r, Math.random() * 10 * i));
    }
  }
}
