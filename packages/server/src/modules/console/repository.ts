// Signed-out console sessions, the console's only SQL (docs/console.md "Security"). A session
// is a sealed token any node can open, so sign-out is recorded in the database: a digest of the
// session's CSRF token (a random value of its own, never shown to another session) until the
// session's expiry. Every console request of a session asks here first, so a signed-out cookie
// is dead on every node.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

const digest = (csrf: string) =>
  createHash('sha256').update('boxhub console session\0').update(csrf).digest('base64url');

export class ConsoleSignouts {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** Records the sign-out of the session with this CSRF token; rows of expired sessions go. */
  async signOut(csrf: string, expiresAt: number, now: number): Promise<void> {
    await this.db.deleteFrom('console_signouts').where('expires_at', '<=', now).execute();
    await this.db
      .insertInto('console_signouts')
      .values({ session: digest(csrf), expires_at: expiresAt })
      .onConflict((c) => c.column('session').doNothing())
      .execute();
  }

  async isSignedOut(csrf: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('console_signouts')
      .select('session')
      .where('session', '=', digest(csrf))
      .executeTakeFirst();
    return row !== undefined;
  }
}
