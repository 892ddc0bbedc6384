// A cancelled strict-mode print's print.finished carries printed_pages (docs/printing.md,
// "Cancel"; docs/callbacks.md): the sides the printer says it printed before it stopped. The
// cancel ends the task at once, but that count only exists once the box has cancelled the job on
// the printer and reported it, so the callback waits for the box's report — with a bound, the
// `print.count` job, for a box that never reports (offline): then it goes without the count.
// Exactly one callback either way: whoever removes the pending job sends it.
import type { TaskRow } from '../../db/schema.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import type { Trx } from '../../jobs/repository.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import type { TaskRepository } from '../../tasks/repository.ts';

export const COUNT_JOB = 'print.count';
/** How long a cancelled strict print's callback waits for the printer's count, by default. */
export const COUNT_WAIT_MS = 60_000;

export interface CancelCountDeps {
  jobs: Jobs;
  tasks: TaskRepository;
  waitMs: number;
  /** Sends the task's print.finished callback. */
  send: (trx: Trx, t: TaskRow, now: number) => Promise<void>;
}

export class CancelCount {
  private readonly d: CancelCountDeps;

  constructor(d: CancelCountDeps) {
    this.d = d;
  }

  /** The cancel ended a strict task the box holds: its callback waits for the count. */
  wait(trx: Trx, task: TaskRow, now: number): Promise<void> {
    return this.d.jobs.schedule(trx, { kind: COUNT_JOB, ref: task.uuid, runAt: now + this.d.waitMs });
  }

  /** The box's count arrived (already recorded on the task): the waiting callback goes now. */
  async arrived(trx: Trx, uuid: string, now: number): Promise<void> {
    if (!(await this.d.jobs.cancel(trx, COUNT_JOB, uuid))) return;
    const t = await this.d.tasks.find(trx, uuid);
    if (t) await this.d.send(trx, t, now);
  }

  /** The bound passed without a count: the callback goes with what is known. */
  handler(now: () => number): JobHandler {
    return {
      kind: COUNT_JOB,
      concurrency: 8,
      leaseMs: 60_000,
      run: async (job) => ({
        next: 'done',
        effect: async (trx) => {
          const t = await this.d.tasks.find(trx, job.ref);
          if (t) await this.d.send(trx, t, now());
        },
      }),
    };
  }
}
