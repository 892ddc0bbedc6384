// Database errors the code reacts to, on both engines.
import { errnoCode } from '@boxhub/protocol';

/** A UNIQUE (or primary key) constraint refused the row: SQLite SQLITE_CONSTRAINT_UNIQUE /
 *  _PRIMARYKEY, PostgreSQL SQLSTATE 23505. */
export function isUniqueViolation(e: unknown): boolean {
  const code = errnoCode(e);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
