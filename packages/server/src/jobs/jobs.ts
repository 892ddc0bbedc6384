// What features use to schedule delayed work (docs/jobs.md): inside their own transaction, so
// the job exists exactly when the change that needs it does. The runner of this node is woken
// right away; other nodes find the job at their next poll or due time.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/schema.ts';
import type { JobRepository, NewJob, OnConflict, Trx } from './repository.ts';
import type { JobRunner } from './runner.ts';

export class Jobs {
  readonly repo: JobRepository;
  private readonly runner: JobRunner;
  private readonly clock: Clock;

  constructor(repo: JobRepository, runner: JobRunner, clock: Clock) {
    this.repo = repo;
    this.runner = runner;
    this.clock = clock;
  }

  get db(): Kysely<Database> {
    return this.repo.db;
  }

  async schedule(trx: Trx, job: NewJob, onConflict: OnConflict = 'keep'): Promise<void> {
    await this.repo.schedule(trx, job, this.clock.now(), onConflict);
    this.runner.scheduled();
  }

  cancel(trx: Trx, kind: string, ref: string): Promise<boolean> {
    return this.repo.cancel(trx, kind, ref);
  }

  /** Makes these unclaimed jobs due now (after the caller commits). */
  async dueNow(trx: Trx, kind: string, refs: readonly string[]): Promise<void> {
    await this.repo.dueNow(trx, kind, refs, this.clock.now());
    if (refs.length > 0) this.runner.scheduled();
  }
}
